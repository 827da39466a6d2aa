// @a2a-js/sdk 0.3.14's A2AClient, the client under the AI SDK provider, ADK for JS, Mastra and Strands: it reads the card
// fetched without A2A-Version, sends in a context it made, streams a reply (appending every chunk, as they do) and lists.
// Env: AGENT (the agent's URL, with the trailing slash), TOKEN.
import { A2AClient } from "@a2a-js/sdk/client";

const { AGENT, TOKEN } = process.env;
const withToken = (url, init = {}) => fetch(url, { ...init, headers: { ...Object.fromEntries(new Headers(init.headers)), authorization: `Bearer ${TOKEN}` } });
const client = await A2AClient.fromCardUrl(new URL(".well-known/agent-card.json", AGENT).href, { fetchImpl: withToken });
const card = await client.getAgentCard();
console.log(`card: ${card.name}, protocol ${card.protocolVersion}, ${card.preferredTransport} at ${card.url === AGENT.replace(/\/$/, "") ? "the agent's URL" : card.url}`);

const contextId = `sdk-0.3-${crypto.randomUUID()}`;
const message = (text) => ({ kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text }], contextId });
const sent = await client.sendMessage({ message: message("Hello from a2a-js 0.3"), configuration: { blocking: true, acceptedOutputModes: ["text/plain"] } });
if ("error" in sent) throw new Error(sent.error.message);
const task = sent.result;
console.log(`send: ${task.status.state}, context ${task.contextId === contextId ? "as sent" : task.contextId}`);

let shown = "";
let final = "";
for await (const event of client.sendMessageStream({ message: message("Stream a reply in several pieces please") })) {
  if (event.kind === "task") shown = event.artifacts?.[0]?.parts?.[0]?.text ?? "";
  if (event.kind === "artifact-update") {
    const text = event.artifact.parts[0]?.text ?? "";
    shown = event.append ? shown + text : text;
  }
  if (event.kind === "status-update" && event.final) {
    const read = await client.getTask({ id: event.taskId });
    final = read.result.artifacts[0].parts[0].text;
  }
}
console.log(`stream: shown once, ${shown === final ? "as the task has it" : `not as the task has it: ${JSON.stringify(shown)}`}`);
const again = await client.sendMessage({ message: message("Again, in the same context"), configuration: { blocking: true } });
console.log(`same chat: ${again.result.metadata.chatId === task.metadata.chatId}`);
