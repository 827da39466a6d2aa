import { describe, expect, it, vi } from "vitest";
import { RETRY_WINDOW_MS } from "../../src/auth/refresh-lineage";
import { call, expectProblem, world } from "../helpers";
import { connect, mcpCall, tokenRequest } from "./flow";

type Connected = Awaited<ReturnType<typeof connect>>;
const refresh = (app: Connected, token: string) => tokenRequest({ grant_type: "refresh_token", client_id: app.clientId, refresh_token: token });
const listedApps = async (session: string) => (await call("GET", "/auth/oauth-grants", { token: session })).json.items as unknown[];
const later = (ms: number) => {
  const at = Date.now() + ms;
  vi.spyOn(Date, "now").mockReturnValue(at);
};

/** The grant is gone for everyone: each access token 401 at /mcp, each refresh token invalid_grant, the app no longer listed. */
async function expectGrantEnded(app: Connected, session: string, accessTokens: string[], refreshTokens: string[]) {
  for (const token of accessTokens) expectProblem(await mcpCall(token, "tools/list"), 401, "unauthorized");
  for (const token of refreshTokens) expect((await refresh(app, token)).json.error).toBe("invalid_grant");
  expect(await listedApps(session)).toEqual([]);
}

describe("refresh tokens presented again", () => {
  it("thief first: the real client's later use of the stolen token ends the grant for both", async () => {
    const w = await world();
    const app = await connect(w.account);
    const thief = await refresh(app, app.refreshToken);
    expect(thief.status, thief.text).toBe(200);
    later(RETRY_WINDOW_MS + 1_000);
    const client = await refresh(app, app.refreshToken);
    expect(client.status).toBe(400);
    expect(client.json.error).toBe("invalid_grant");
    await expectGrantEnded(app, w.session, [thief.json.access_token, app.accessToken], [thief.json.refresh_token]);
  });

  it("client first: the thief's use of a superseded token ends the grant, even within the minute once the successor was used", async () => {
    const w = await world();
    const app = await connect(w.account);
    const second = await refresh(app, app.refreshToken);
    const third = await refresh(app, second.json.refresh_token);
    expect(third.status, third.text).toBe(200);
    const thief = await refresh(app, app.refreshToken);
    expect(thief.json.error).toBe("invalid_grant");
    await expectGrantEnded(app, w.session, [third.json.access_token], [third.json.refresh_token]);
  });

  it("answers a lost answer's retry once more within the minute: the first answer's tokens stop, the grant stays", async () => {
    const w = await world();
    const app = await connect(w.account);
    const lost = await refresh(app, app.refreshToken);
    const retried = await refresh(app, app.refreshToken);
    expect(retried.status, retried.text).toBe(200);
    expect((await mcpCall(retried.json.access_token, "tools/list")).status).toBe(200);
    expectProblem(await mcpCall(lost.json.access_token, "tools/list"), 401, "unauthorized");
    expect(await listedApps(w.session)).toHaveLength(1);
    const next = await refresh(app, retried.json.refresh_token);
    expect(next.status, next.text).toBe(200);
  });

  it("ends the grant when the refresh token a retry replaced is presented", async () => {
    const w = await world();
    const app = await connect(w.account);
    const lost = await refresh(app, app.refreshToken);
    const retried = await refresh(app, app.refreshToken);
    expect((await refresh(app, lost.json.refresh_token)).json.error).toBe("invalid_grant");
    await expectGrantEnded(app, w.session, [retried.json.access_token], [retried.json.refresh_token]);
  });

  it("keeps one grant when a client refreshes from two workers at once: both are answered, the later answer's tokens work", async () => {
    const w = await world();
    const app = await connect(w.account);
    const answers = await Promise.all([refresh(app, app.refreshToken), refresh(app, app.refreshToken)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const working = await Promise.all(answers.map(async (a) => (await mcpCall(a.json.access_token, "tools/list")).status));
    expect([...working].sort()).toEqual([200, 401]);
    const kept = answers[working.indexOf(200)]!;
    expect((await refresh(app, kept.json.refresh_token)).status).toBe(200);
  });
});
