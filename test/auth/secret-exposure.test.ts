import { describe, expect, vi } from "vitest";
import { secretsEqual } from "../../src/crypto";
import { call, chatsPath, env, expectProblem, inDays, newChat, send, world } from "../helpers";
import { it } from "../fixtures/chat";

function captureLogs() {
  const lines: string[] = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    });
  }
  return lines;
}

describe("secrets", () => {
  it("never appear in logs, even when a request fails on our side", async () => {
    const logs = captureLogs();
    const w = await world();
    const c = await newChat(w);
    await send(w, c.id, "hello");
    await call("GET", chatsPath(w), { token: `${w.token.slice(0, -1)}x` });
    // The session lookup is a drizzle query bound to the session's hash: its failure must not log it.
    await env.DB.exec("ALTER TABLE sessions RENAME TO sessions_offline");
    let failed: Awaited<ReturnType<typeof call>> | undefined;
    try {
      failed = await call("POST", "/auth/api-tokens", { token: w.session, body: { name: "x", scopes: ["chat:read"], expiresAt: inDays(1) } });
    } finally {
      await env.DB.exec("ALTER TABLE sessions_offline RENAME TO sessions");
    }
    expectProblem(failed, 500, "internal_error");
    expect(failed.text).not.toMatch(/sessions|D1|SQL/);
    const requestId = failed.headers.get("x-request-id")!;
    expect(logs.some((line) => line.includes(requestId) && line.includes('"level":"error"'))).toBe(true); // logged, with its request id
    const everything = logs.join("\n");
    for (const secret of [w.token, w.session, w.token.slice(4, 20), w.session.slice(4, 20)]) expect(everything).not.toContain(secret);
    expect(everything.toLowerCase()).not.toContain("authorization");
    expect(everything).not.toContain("params:"); // failed queries are logged without their bound values
  });

  it("are never returned after creation", async ({ w, chat }) => {
    const responses = [
      await call("GET", "/auth/api-tokens", { token: w.session }),
      await call("GET", chatsPath(w), { token: w.token }),
      await call("GET", `${chatsPath(w)}/${chat.id}`, { token: w.token }),
      await send(w, chat.id, "hi"),
    ];
    for (const r of responses) {
      expect(r.text).not.toContain(w.token.slice(12));
      expect(r.text).not.toContain(w.session.slice(4));
    }
  });

  it("are compared by the platform's constant-time comparison, over digests of one length whatever the secrets' lengths", async () => {
    const compared = vi.spyOn(crypto.subtle, "timingSafeEqual");
    expect(await secretsEqual("abc", "abc")).toBe(true);
    expect(await secretsEqual("abc", "abd")).toBe(false);
    expect(await secretsEqual("", "abc")).toBe(false);
    expect(await secretsEqual("a".repeat(10_000), "a")).toBe(false);
    // Each comparison went through timingSafeEqual, with two SHA-256 digests: no length reaches it, no early exit is ours.
    expect(compared).toHaveBeenCalledTimes(4);
    for (const [a, b] of compared.mock.calls) expect([(a as Uint8Array).byteLength, (b as Uint8Array).byteLength]).toEqual([32, 32]);
  });
});
