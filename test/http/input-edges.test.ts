import { describe, expect } from "vitest";
import { call, chatsPath, expectProblem, newAccount, newChat, world } from "../helpers";
import { it } from "../fixtures/chat";

const signInRaw = (raw: BodyInit, contentType: string) => call("POST", "/auth/token", { raw, headers: { "content-type": contentType } });

describe("JSON request bodies", () => {
  it("refuses a body that is not valid UTF-8 instead of substituting U+FFFD", async ({ w }) => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"title":"ab'), 0xff, 0xfe, ...new TextEncoder().encode('"}')]);
    const r = await call("POST", chatsPath(w), { token: w.token, raw: bytes, headers: { "content-type": "application/json" } });
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors).toEqual([{ path: "(body)", message: "not valid UTF-8" }]);
    expect((await call("GET", chatsPath(w), { token: w.token })).json.items).toEqual([]);
  });

  it("reads each body on its own: one cut inside a character leaves nothing behind for the next", async ({ w }) => {
    const encode = (text: string) => new TextEncoder().encode(text);
    const post = (raw: Uint8Array) => call("POST", chatsPath(w), { token: w.token, raw, headers: { "content-type": "application/json" } });
    // Ends on the first byte of "é": a decoder kept between requests must not carry it into the next body.
    expectProblem(await post(new Uint8Array([...encode('{"title":"caf'), 0xc3])), 400, "invalid_request");
    const next = await post(encode('{"title":"café"}'));
    expect(next.status).toBe(201);
    expect(next.json.title).toBe("café");
    // A byte order mark is dropped, as UTF-8 decoding does, on every body and not only the first.
    for (const title of ["first BOM", "second BOM"]) {
      const r = await post(new Uint8Array([0xef, 0xbb, 0xbf, ...encode(JSON.stringify({ title }))]));
      expect(r.status).toBe(201);
      expect(r.json.title).toBe(title);
    }
  });

  it("refuses a string with an unpaired surrogate escape, which storage would keep as U+FFFD, and accepts a whole pair", async ({ w }) => {
    const chat = (await call("POST", chatsPath(w), { token: w.token, body: { title: "surrogates" } })).json;
    const sendRaw = (raw: string) =>
      call("POST", `${chatsPath(w)}/${chat.id}/messages`, { token: w.token, raw, headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() } });
    for (const raw of ['{"content":"half \\uD83D"}', '{"content":"\\uDE00 half"}', '{"content":"ok","\\uD83D":1}']) {
      const r = await sendRaw(raw);
      expectProblem(r, 400, "invalid_request");
      expect(r.json.errors, raw).toEqual([{ path: "(body)", message: "unpaired UTF-16 surrogate in a string" }]);
    }
    expect((await sendRaw('{"content":"a whole pair \\uD83D\\uDE00 and a \\\\uD83D that is text"}')).status).toBe(202);
  });

  it("accepts media type parameters with whitespace, as RFC 9110 allows", async () => {
    const a = await newAccount();
    const body = JSON.stringify({ email: a.email, password: a.password });
    for (const type of ["application/json ; charset=utf-8", "application/json;charset=UTF-8", 'Application/JSON; charset="utf-8"', "application/json\t;\tcharset=utf-8"]) {
      expect((await signInRaw(body, type)).status, type).toBe(200);
    }
  });

  it("refuses a charset other than UTF-8 and a type that is not JSON", async () => {
    const a = await newAccount();
    const body = JSON.stringify({ email: a.email, password: a.password });
    const latin = await signInRaw(body, "application/json; charset=iso-8859-1");
    expectProblem(latin, 400, "invalid_request");
    expect(latin.json.errors[0].path).toBe("content-type");
    expectProblem(await signInRaw(body, "application/jsonx"), 400, "invalid_request");
    expectProblem(await signInRaw(body, "text/plain; charset=utf-8"), 400, "invalid_request");
  });

  it("names an unknown body field itself", async ({ w }) => {
    const r = await call("POST", chatsPath(w), { token: w.token, body: { title: "x", colour: "red" } });
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors).toEqual([{ path: "colour", message: "unknown field" }]);
  });
});

describe("query parameters", () => {
  it.each(["0x10", "1e1", "+5", "5.0", " 5", "-1", "", "0", "101", "99999999999999999999"])("refuses limit=%s on the messages page", async (limit) => {
    const w = await world();
    const c = await newChat(w);
    const r = await call("GET", `${chatsPath(w)}/${c.id}/messages?limit=${encodeURIComponent(limit)}`, { token: w.token });
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors[0].path).toBe("limit");
  });

  it("accepts decimal limits 1 to 100", async ({ w, chat }) => {
    for (const limit of ["1", "05", "100"]) {
      expect((await call("GET", `${chatsPath(w)}/${chat.id}/messages?limit=${limit}`, { token: w.token })).status, limit).toBe(200);
    }
  });

  it("names an unknown query parameter, not the body", async ({ w, chat }) => {
    const r = await call("GET", `${chatsPath(w)}/${chat.id}/messages?limit=5&colour=red&size=1`, { token: w.token });
    expectProblem(r, 400, "invalid_request");
    expect(r.json.errors).toEqual([
      { path: "colour", message: "unknown query parameter" },
      { path: "size", message: "unknown query parameter" },
    ]);
    const list = await call("GET", `${chatsPath(w)}?page=2`, { token: w.token });
    expect(list.json.errors).toEqual([{ path: "page", message: "unknown query parameter" }]);
  });
});
