import { describe, expect } from "vitest";
import { admin, call, expectProblem, newAccount, newToken, signIn, world } from "../helpers";
import { hooksPath, register } from "./webhook-helpers";
import { it } from "../fixtures/chat";

describe("webhook endpoints", () => {
  it("are created by the project's owner with a secret shown once, listed without it, and deleted once", async ({ w }) => {
    const r = await register(w, "https://receiver.example.com/a", { description: "mine", events: ["submission.failed", "message.completed"] });
    expect(r.status).toBe(201);
    expect(r.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(r.json.endpoint).toMatchObject({ url: "https://receiver.example.com/a", description: "mine", events: ["message.completed", "submission.failed"], disabledAt: null });
    const everything = await register(w, "https://receiver.example.com/b");
    expect(everything.json.endpoint.events).toEqual(["message.completed", "chat.awaiting_user", "submission.failed", "question.asked", "question.closed"]);
    const list = await call("GET", hooksPath(w), { token: w.token });
    expect(list.status).toBe(200);
    expect(list.json.items.map((e: { id: string }) => e.id)).toEqual([r.json.endpoint.id, everything.json.endpoint.id]);
    expect(list.text).not.toContain(r.json.secret.slice(6));
    expect((await call("GET", `${hooksPath(w)}/${r.json.endpoint.id}/deliveries`, { token: w.token })).json).toEqual({ items: [] });
    expect((await call("DELETE", `${hooksPath(w)}/${r.json.endpoint.id}`, { token: w.token })).status).toBe(204);
    expectProblem(await call("DELETE", `${hooksPath(w)}/${r.json.endpoint.id}`, { token: w.token }), 404, "not_found");
    expectProblem(await call("GET", `${hooksPath(w)}/${r.json.endpoint.id}/deliveries`, { token: w.token }), 404, "not_found");
    expectProblem(await call("DELETE", `${hooksPath(w)}/not-a-uuid`, { token: w.token }), 404, "not_found");
  });

  it("are the owner's alone: an editor or viewer gets 403, a read-only token cannot write, a stranger gets 404, no token 401", async ({ w }) => {
    for (const role of ["editor", "viewer"]) {
      const member = await newAccount();
      expect((await admin("PUT", `/admin/projects/${w.projectId}/members/${member.id}`, { role })).status).toBe(200);
      const token = await newToken(await signIn(member));
      expectProblem(await register(w, "https://receiver.example.com/x", {}, token), 403, "forbidden");
      expectProblem(await call("GET", hooksPath(w), { token }), 403, "forbidden");
    }
    const readOnly = await newToken(w.session, ["chat:read"]);
    expectProblem(await register(w, "https://receiver.example.com/x", {}, readOnly), 403, "insufficient_scope");
    expect((await call("GET", hooksPath(w), { token: readOnly })).status).toBe(200);
    const stranger = await world();
    expectProblem(await call("GET", hooksPath(w), { token: stranger.token }), 404, "not_found");
    expectProblem(await call("GET", hooksPath(w)), 401, "unauthorized");
  });

  it("refuse a bad URL, an unknown or empty event list, an unknown field and an eleventh endpoint", async ({ w }) => {
    for (const url of ["http://example.com/h", "https://10.0.0.7/h", "https://u:p@example.com/h", "http://127.0.0.1:9/h"]) {
      const r = await register(w, url);
      expectProblem(r, 400, "invalid_request");
      expect(r.json.errors[0].path).toBe("url");
    }
    expectProblem(await register(w, "https://receiver.example.com/x", { events: [] }), 400, "invalid_request");
    expectProblem(await register(w, "https://receiver.example.com/x", { events: ["message.completed", "no.such"] }), 400, "invalid_request");
    expectProblem(await register(w, "https://receiver.example.com/x", { secret: "mine" }), 400, "invalid_request");
    expectProblem(await register(w, "https://receiver.example.com/x", { description: "d".repeat(201) }), 400, "invalid_request");
    for (let i = 0; i < 10; i++) expect((await register(w, `https://receiver.example.com/${i}`)).status).toBe(201);
    expectProblem(await register(w, "https://receiver.example.com/11"), 409, "webhook_limit_reached");
  });
});
