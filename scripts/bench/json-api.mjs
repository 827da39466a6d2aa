// A bench script's client of the service: one call, its status, text and JSON (undefined when the body is not JSON).
export function jsonApi(base) {
  return async function api(method, path, token, body, headers = {}) {
    const r = await fetch(base + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: r.status, text, json };
  };
}

/** The JSON of an answer with the status expected; any other status stops the bench, saying what came. */
export function must(answer, status) {
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${answer.text}`);
  return answer.json;
}
