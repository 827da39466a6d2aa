// Follows one chat's events and resumes after any dropped connection, without gaps or duplicates.
// BASE=http://127.0.0.1:8787 TOKEN=pct_… PROJECT=… CHAT=… node scripts/follow-chat.mjs
const { BASE = "http://127.0.0.1:8787", TOKEN, PROJECT, CHAT } = process.env;
if (!TOKEN || !PROJECT || !CHAT) throw new Error("set TOKEN, PROJECT and CHAT (and BASE for a deployed Worker)");

let lastEventId; // the resume point: the id of the last event handled
let retryMs = 2000; // the server's `retry:` hint replaces this

for (;;) {
  try {
    const headers = { authorization: `Bearer ${TOKEN}`, accept: "text/event-stream" };
    if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
    const response = await fetch(`${BASE}/v1/projects/${PROJECT}/chats/${CHAT}/events`, { headers });
    if (response.status === 429) retryMs = Number(response.headers.get("retry-after") ?? 5) * 1000;
    // 401, 403 and 404 will not get better by retrying.
    else if (!response.ok) throw Object.assign(new Error(`${response.status} ${await response.text()}`), { fatal: true });
    else {
      let buffer = "";
      for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        for (let end; (end = buffer.indexOf("\n\n")) >= 0; buffer = buffer.slice(end + 2)) {
          const lines = buffer
            .slice(0, end)
            .split("\n")
            .filter((l) => !l.startsWith(":"));
          const field = (name) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
          if (field("retry")) retryMs = Number(field("retry"));
          if (field("data") === undefined) continue;
          handle(field("event"), JSON.parse(field("data")));
          lastEventId = field("id"); // handled: resume after it
        }
      }
    }
  } catch (error) {
    if (error.fatal) throw error;
    console.error(`connection lost (${error.message}); resuming after event ${lastEventId}`);
  }
  await new Promise((r) => setTimeout(r, retryMs));
}

function handle(type, data) {
  if (type === "snapshot") console.log(`chat "${data.chat.title}", ${data.queue.items.length} queued`);
  else if (type === "message.delta") process.stdout.write(data.text);
  else if (type === "message") console.log(`\n[${data.role}${data.status ? ` ${data.status}` : ""}] ${data.role === "owner" ? "" : data.content}`);
  else if (type === "chat") console.log(`\n(chat: working ${data.isWorking}, queued ${data.queuedCount}, awaiting you ${data.isAwaitingUser})`);
}
