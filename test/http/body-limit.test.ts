import { describe, expect } from "vitest";
import { MESSAGE_BODY_LIMIT_BYTES } from "../../src/chats/schemas";
import { call, chatsPath, expectProblem, type world } from "../helpers";
import { it } from "../fixtures/chat";
import { CONTENT_MAX } from "../../src/agent/limits";

const sendRaw = (w: Awaited<ReturnType<typeof world>>, chatId: string, raw: string) =>
  call("POST", `${chatsPath(w)}/${chatId}/messages`, { token: w.token, raw, headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() } });

describe("the request body limit", () => {
  it("accepts the largest valid message: 100000 emoji, each sent as a 12-byte \\uXXXX\\uXXXX escape", async ({ w, chat }) => {
    const raw = `{"content":"${"\\ud83d\\ude00".repeat(CONTENT_MAX)}"}`;
    expect(raw.length).toBeGreaterThan(1_200_000);
    expect(raw.length).toBeLessThanOrEqual(MESSAGE_BODY_LIMIT_BYTES);
    const r = await sendRaw(w, chat.id, raw);
    expect(r.status, r.text).toBe(202);
  });

  it("refuses a body clearly over the limit with a 413 problem", async ({ w, chat }) => {
    const r = await sendRaw(w, chat.id, `{"content":"${"x".repeat(2 * MESSAGE_BODY_LIMIT_BYTES)}"}`);
    expectProblem(r, 413, "payload_too_large");
    expect(r.json.instance).toBe(`urn:request:${r.headers.get("x-request-id")}`);
  });

  it("holds the project's other routers to a MiB: a webhook body the chat limit would take is refused", async ({ w }) => {
    const raw = `{"url":"https://receiver.example.com/${"x".repeat(1024 * 1024)}"}`;
    expect(raw.length).toBeLessThan(MESSAGE_BODY_LIMIT_BYTES);
    const r = await call("POST", `/v1/projects/${w.projectId}/webhooks`, { token: w.token, raw, headers: { "content-type": "application/json" } });
    expectProblem(r, 413, "payload_too_large");
  });
});
