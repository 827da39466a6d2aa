#!/usr/bin/env node
// npm run webhook:receiver -- --secret whsec_… [--port 7790]: a webhook endpoint for local development. Verifies each
// delivery's Standard Webhooks signature with the endpoint's secret (or $WEBHOOK_SECRET), prints the verified event and
// answers 204; a delivery that is not authentic or not fresh gets 401 and is printed as refused. A2A push notifications
// too, with the secret whsec_ + base64 of the push config's token. No dependencies.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { secret: { type: "string", default: process.env.WEBHOOK_SECRET }, port: { type: "string", default: process.env.WEBHOOK_PORT ?? "7790" } },
});
if (!values.secret?.startsWith("whsec_")) {
  console.error("Give the endpoint's secret (whsec_…, shown once when it was registered): --secret whsec_… or WEBHOOK_SECRET.");
  process.exit(2);
}
const key = Buffer.from(values.secret.slice("whsec_".length), "base64");
// Standard Webhooks' tolerance: a delivery signed more than five minutes away from now could be a replay.
const TOLERANCE_SECONDS = 300;

/** True when one of the space-separated `v1,<base64>` signatures is the HMAC of "{id}.{timestamp}.{body}". */
function authentic(id, timestamp, body, signatures) {
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(" ").some((signature) => {
    const given = Buffer.from(signature.split(",")[1] ?? "", "base64");
    return signature.startsWith("v1,") && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8"); // whole characters, even where a chunk splits one
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    const { "webhook-id": id = "", "webhook-timestamp": timestamp = "", "webhook-signature": signatures = "" } = req.headers;
    const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) < TOLERANCE_SECONDS;
    if (!fresh || !authentic(id, timestamp, body, signatures)) {
      console.log(`refused ${id || "(no webhook-id)"}: ${fresh ? "bad signature" : "stale or missing timestamp"}`);
      return res.writeHead(401).end();
    }
    const event = JSON.parse(body);
    // Delivery is at least once: a receiver that acts on events deduplicates on the webhook-id.
    if (event.type) console.log(`verified ${event.type} ${id} ${JSON.stringify(event.data)}`);
    else {
      // An A2A push (its config's token is the secret: whsec_ + base64 of the token): a status update or the ended Task.
      const [kind, value] = Object.entries(event)[0] ?? [];
      console.log(`verified a2a ${kind} ${id} ${value?.status?.state} ${value?.taskId ?? value?.id}`);
    }
    res.writeHead(204).end();
  });
});
server.listen(Number(values.port), "127.0.0.1", () => console.log(`Listening on http://127.0.0.1:${server.address().port}/ for signed webhooks`));
const stop = () => server.close(() => process.exit(0));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, stop);
// `kill` of a backgrounded `npm run webhook:receiver` ends npm's shell but not this process: stop when orphaned.
const parent = process.ppid;
setInterval(() => process.ppid !== parent && stop(), 500).unref();
