import { describe, expect } from "vitest";
import { MAX_STREAMS_PER_TOKEN } from "../../src/auth/token-gate";
import { runNextAlarm, settle } from "../clock";
import { call, room } from "../helpers";
import { it } from "../fixtures/chat";
import { callTool, connect as mcpClient, pulse, success, toolProblem, untilListening } from "../mcp/mcp-helpers";
import { connect } from "./flow";

describe("an OAuth grant's MCP waits", () => {
  it(`hold the grant's own ${MAX_STREAMS_PER_TOKEN} stream places; the account's personal token keeps its own`, async ({ clock, w, chat }) => {
    const { accessToken } = await connect(w.account);
    const connector = await mcpClient(accessToken);
    const args = (content: string, waitSeconds = 30) => ({ projectId: w.projectId, chatId: chat.id, content, waitSeconds });
    const waits = Array.from({ length: MAX_STREAMS_PER_TOKEN }, (_, i) => callTool(connector, "send_message", args(`wait ${i}`)));
    await untilListening(chat.id, MAX_STREAMS_PER_TOKEN);
    toolProblem(await callTool(connector, "send_message", args("one too many")), "too_many_streams");
    const personal = callTool(await mcpClient(w.token), "send_message", args("mine"));
    await untilListening(chat.id, MAX_STREAMS_PER_TOKEN + 1);
    await settle(room(chat.id), clock);
    for (const answer of await Promise.all([...waits, personal])) expect(success(answer).reply.status).toBe("success");
  });

  it("ends at the next pulse once the app is disconnected, with unauthorized and nothing written after", async ({ clock, w, chat }) => {
    const { accessToken } = await connect(w.account);
    const waiting = callTool(await mcpClient(accessToken), "send_message", { projectId: w.projectId, chatId: chat.id, content: "disconnect me", waitSeconds: 60 });
    await untilListening(chat.id, 1);
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true); // the task starts
    const [app] = (await call("GET", "/auth/oauth-grants", { token: w.session })).json.items;
    expect((await call("DELETE", `/auth/oauth-grants/${app.id}`, { token: w.session })).status).toBe(204);
    expect(await runNextAlarm(room(chat.id), clock)).toBe(true);
    await pulse(chat.id);
    await settle(room(chat.id), clock);
    const result = await waiting;
    expect(toolProblem(result, "unauthorized").status).toBe(401);
    expect(JSON.stringify(result)).not.toContain("disconnect me");
    expect(await room(chat.id).listenerCount()).toBe(0);
  });
});
