// Fan-out of chat event streams: many listeners, one message a second per chat. For each message and
// listener: the time from the send's 202 to that listener receiving the user's `message` event.
import { randomUUID } from "node:crypto";

const STREAMS_PER_TOKEN = 10;

/** Opens an event stream and calls onEvent(event, arrivedAt) for each event; resolves once the snapshot is in. */
async function listen(url, token, onEvent, signal) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" }, signal });
  if (response.status !== 200) throw new Error(`events: HTTP ${response.status} ${await response.text()}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let snapshotSeen;
  const snapshot = new Promise((resolve) => (snapshotSeen = resolve));
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        const arrivedAt = performance.now();
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const field = (name) =>
            block
              .split("\n")
              .find((l) => l.startsWith(`${name}: `))
              ?.slice(name.length + 2);
          const data = field("data");
          if (data === undefined) continue;
          const event = { id: Number(field("id")), type: field("event"), data: JSON.parse(data) };
          if (event.type === "snapshot") snapshotSeen();
          onEvent(event, arrivedAt);
        }
      }
    } catch {
      // Aborted at the end of the scenario.
    }
  })();
  await snapshot;
}

export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/**
 * One scenario: `chats` chats with `listenersPerChat` listeners each, `messages` messages per chat
 * at one a second. Returns latency percentiles and whether every listener saw every event.
 */
export async function fanOut({ service, admin, chats, listenersPerChat, messages }) {
  const password = "fanout-password";
  const call = async (method, path, body, token, headers = {}) => {
    const r = await fetch(service + path, {
      method,
      body: body && JSON.stringify(body),
      headers: { ...(body ? { "content-type": "application/json" } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    });
    const json = await r.json().catch(() => undefined);
    if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
  const account = (await admin("POST", "/admin/accounts", { email: `fanout-${randomUUID()}@example.test`, password, credits: 1_000_000 })).json;
  const project = (await admin("POST", "/admin/projects", { name: "fan-out", ownerAccountId: account.id })).json;
  const session = (await call("POST", "/auth/token", { email: account.email, password })).token;
  const listeners = chats * listenersPerChat;
  const tokens = [];
  for (let i = 0; i < Math.ceil(listeners / STREAMS_PER_TOKEN) + 1; i++) {
    tokens.push(
      (await call("POST", "/auth/api-tokens", { name: `fan-out ${i}`, scopes: ["chat:read", "chat:write"], expiresAt: new Date(Date.now() + 86400_000).toISOString() }, session))
        .token,
    );
  }
  const sender = tokens.pop();
  const chatsPath = `/v1/projects/${project.id}/chats`;
  const chatIds = [];
  for (let i = 0; i < chats; i++) chatIds.push((await call("POST", chatsPath, { title: `fan-out ${i}` }, sender)).id);

  // Per listener: the ids it saw and when each user message arrived.
  const abort = new AbortController();
  const seen = [];
  await Promise.all(
    chatIds.flatMap((chatId, c) =>
      Array.from({ length: listenersPerChat }, (_, l) => {
        const index = c * listenersPerChat + l;
        const record = { chatId, ids: [], arrivals: new Map() };
        seen.push(record);
        return listen(
          `${service}${chatsPath}/${chatId}/events`,
          tokens[Math.floor(index / STREAMS_PER_TOKEN)],
          (event, at) => {
            if (event.type === "snapshot") return;
            record.ids.push(event.id);
            if (event.type === "message" && event.data.role === "user") record.arrivals.set(event.data.content, at);
          },
          abort.signal,
        );
      }),
    ),
  );

  // One message a second per chat, the chats staggered across the second.
  const accepted = new Map();
  await Promise.all(
    chatIds.map(async (chatId, c) => {
      await new Promise((r) => setTimeout(r, (1000 * c) / chats));
      for (let n = 0; n < messages; n++) {
        const content = `fan-out ${chatId} #${n}`;
        const due = performance.now() + 1000;
        await call("POST", `${chatsPath}/${chatId}/messages`, { content }, sender, { "idempotency-key": randomUUID() });
        accepted.set(content, { chatId, at: performance.now() });
        await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      }
    }),
  );
  await new Promise((r) => setTimeout(r, 2000)); // the last replies' events
  abort.abort();

  const latencies = [];
  let missing = 0;
  for (const record of seen) {
    for (const [content, sent] of accepted) {
      if (sent.chatId !== record.chatId) continue;
      const arrived = record.arrivals.get(content);
      if (arrived === undefined) missing++;
      // An event can beat the 202 to the client; that counts as no wait.
      else latencies.push(Math.max(0, arrived - sent.at));
    }
  }
  // Every listener of a chat must have seen the same ids, strictly increasing.
  const disagreeing = seen.filter((r) => {
    const first = seen.find((x) => x.chatId === r.chatId);
    return r.ids.some((id, i) => i > 0 && id <= r.ids[i - 1]) || r.ids.join() !== first.ids.join();
  }).length;
  latencies.sort((a, b) => a - b);
  return {
    listeners,
    messages: accepted.size,
    deliveries: latencies.length,
    missing,
    disagreeing,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1),
  };
}
