# The agent's question as a Python MCP client's own form: mcp 2.3.0's Client (mode="auto") negotiates 2026-07-28,
# declares elicitation because a callback is given, and answers input_required results with it, retrying by itself.
#   python scripts/examples/mcp_elicit.py "/connect github"
# BASE, TOKEN and PROJECT (what `eval "$(npm run -s token -- --shell)"` sets) say where and as whom.
import asyncio, json, os, sys, urllib.request

from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BASE = os.environ.get("BASE", "http://127.0.0.1:8787")
TOKEN, PROJECT = os.environ["TOKEN"], os.environ.get("PROJECT", "00000000-0000-4000-8000-000000000001")
CONTENT = sys.argv[1] if len(sys.argv) > 1 else "/connect github"
AUTH = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}


async def answer(context, params):
    # A host shows its own form (or opens the url); this one approves, picks the first option, or says it is connected.
    print(f"asked ({params.mode}): {params.message}")
    fields = getattr(params, "requested_schema", None) or {}
    properties = fields.get("properties", {}) if isinstance(fields, dict) else {}
    if "decision" in properties:
        return types.ElicitResult(action="accept", content={"decision": "approve"})
    if "choice" in properties:
        return types.ElicitResult(action="accept", content={"choice": properties["choice"]["oneOf"][0]["const"]})
    return types.ElicitResult(action="accept")


async def main():
    request = urllib.request.Request(f"{BASE}/v1/projects/{PROJECT}/chats", method="POST", data=b'{"title":"Python example"}', headers=AUTH)
    chat = json.load(urllib.request.urlopen(request))
    async with create_mcp_http_client(headers=AUTH) as http:
        async with Client(streamable_http_client(f"{BASE}/mcp", http_client=http), mode="auto", elicitation_callback=answer) as client:
            result = await client.call_tool("send_message", {"projectId": PROJECT, "chatId": chat["id"], "content": CONTENT, "waitSeconds": 30})
            content = result.structured_content
            print(f"{len(content['answered'])} question answered, reply: {content['reply']['content']}")


asyncio.run(main())
