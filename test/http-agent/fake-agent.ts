import { expect, vi } from "vitest";
import { runNextAlarm, type Clock } from "../clock";
import { call, peek, room, send, type World } from "../helpers";
import { unplannedHost } from "../network";

export type AgentCall = { url: string; authorization: string | null; body: any };
/** Replaces the outbound agent (https://agent.test/) with a fake that answers with respond(); any other host fails the test. */
export function fakeAgent(respond: (call: AgentCall) => Response | Promise<Response>) {
  const calls: AgentCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    if (!request.url.startsWith("https://agent.test/")) return unplannedHost(request);
    const agentCall = { url: request.url, authorization: request.headers.get("authorization"), body: await request.json() };
    calls.push(agentCall);
    return respond(agentCall);
  });
  return calls;
}

/** An agent that accepts every task for a later callback; the test plays its part. */
export const acceptingAgent = () => fakeAgent(() => new Response(null, { status: 202 }));

/** The agent's calls to the service about a task (docs/agent-protocol.md), with the shared secret. */
export const agentCalls = (chatId: string, taskId: string, secret = "agent-test-secret") => {
  const path = (what: string) => `/agent/chats/${chatId}/tasks/${taskId}/${what}`;
  return {
    result: (body: unknown) => call("POST", path("result"), { token: secret, body }),
    partial: (body: unknown) => call("POST", path("partial"), { token: secret, body }),
    steering: () => call("GET", path("steering"), { token: secret }),
    ack: (body: unknown) => call("POST", path("steering/ack"), { token: secret, body }),
  };
};

/** Sends a message and runs the alarm that starts its task at the agent; the reply it is writing. */
export async function runningTask(w: World, chatId: string, clock: Clock, content = "work on this") {
  await send(w, chatId, content);
  await runNextAlarm(room(chatId), clock);
  const reply = (await peek(w, chatId))[0]!;
  expect(reply).toMatchObject({ role: "owner", status: "working", taskId: expect.any(String) });
  return reply;
}
