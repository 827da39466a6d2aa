import { describe, expect, it, vi } from "vitest";
import { call, chatsPath, expectProblem, newChat, world } from "../helpers";
import { connect, mcpCall } from "./flow";

const toolText = (r: Awaited<ReturnType<typeof mcpCall>>) => JSON.parse(r.json.result.content[0].text);
const grants = async (session: string) => (await call("GET", "/auth/oauth-grants", { token: session })).json.items;

describe("a connected app's credit limit", () => {
  it("is listed with creditsUsed, set with PATCH, counts the grant's tasks, and refuses its sends at the limit", async () => {
    const w = await world();
    const { accessToken } = await connect(w.account);
    const [app] = await grants(w.session);
    expect(app).toMatchObject({ creditLimit: null, creditsUsed: 0 });

    const set = await call("PATCH", `/auth/oauth-grants/${app.id}`, { token: w.session, body: { creditLimit: 1 } });
    expect(set.status, set.text).toBe(200);
    expect(set.json).toMatchObject({ id: app.id, clientName: app.clientName, creditLimit: 1, creditsUsed: 0 });
    for (const body of [{}, { creditLimit: 0 }, { creditLimit: "1" }, { creditLimit: 1, extra: true }]) {
      expectProblem(await call("PATCH", `/auth/oauth-grants/${app.id}`, { token: w.session, body }), 400, "invalid_request");
    }
    const stranger = await world();
    expectProblem(await call("PATCH", `/auth/oauth-grants/${app.id}`, { token: stranger.session, body: { creditLimit: 5 } }), 404, "not_found");
    expectProblem(await call("PATCH", `/auth/oauth-grants/${crypto.randomUUID()}`, { token: w.session, body: { creditLimit: 5 } }), 404, "not_found");

    const chat = await newChat(w);
    const args = { projectId: w.projectId, chatId: chat.id };
    const sent = await mcpCall(accessToken, "tools/call", { name: "send_message", arguments: { ...args, content: "one task" } });
    expect(sent.json.result.isError, sent.text).toBeFalsy();
    await vi.waitFor(async () => expect((await grants(w.session))[0]).toMatchObject({ creditLimit: 1, creditsUsed: 1 }), { timeout: 10_000, interval: 200 });

    const credits = await mcpCall(accessToken, "tools/call", { name: "get_credits", arguments: { projectId: w.projectId } });
    expect(toolText(credits)).toMatchObject({ canRun: false, credential: { creditLimit: 1, creditsUsed: 1 } });
    const refused = await mcpCall(accessToken, "tools/call", { name: "send_message", arguments: { ...args, content: "over the limit" } });
    expect(refused.json.result.isError).toBe(true);
    expect(toolText(refused).code).toBe("token_credit_limit");
    // The account's personal token is another credential: not limited.
    const plain = await call("POST", `${chatsPath(w)}/${chat.id}/messages`, { token: w.token, headers: { "idempotency-key": crypto.randomUUID() }, body: { content: "fine" } });
    expect(plain.status).toBe(202);

    expect((await call("PATCH", `/auth/oauth-grants/${app.id}`, { token: w.session, body: { creditLimit: null } })).json.creditLimit).toBeNull();
    const again = await mcpCall(accessToken, "tools/call", { name: "send_message", arguments: { ...args, content: "no limit now", ifBusy: "queue" } });
    expect(again.json.result.isError, again.text).toBeFalsy();
  });

  it("send_message takes ifBusy: reject on a busy chat is the tool error chat_busy, and the submission records the value", async () => {
    const w = await world();
    const { accessToken } = await connect(w.account);
    const chat = await newChat(w);
    const args = { projectId: w.projectId, chatId: chat.id };
    const first = await mcpCall(accessToken, "tools/call", { name: "send_message", arguments: { ...args, content: "busy now", ifBusy: "reject" } });
    expect(toolText(first).state).toMatchObject({ ifBusy: "reject" });
    const refused = await mcpCall(accessToken, "tools/call", { name: "send_message", arguments: { ...args, content: "only if free", ifBusy: "reject" } });
    expect(refused.json.result.isError).toBe(true);
    expect(toolText(refused).code).toBe("chat_busy");
    const bad = await mcpCall(accessToken, "tools/call", { name: "send_message", arguments: { ...args, content: "x", ifBusy: "later" } });
    expect(bad.json.result.isError).toBe(true);
    expect(toolText(bad).code).toBe("invalid_request");
  });
});
