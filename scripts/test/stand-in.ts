// Another server on a port the scripts might take for their own: it answers everything with 200 and notes each request.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

type SeenRequest = { method: string; url: string; authorization: string | undefined };

/** Listens on 127.0.0.1 (a free port unless given); /dev/server answers as a dev server with another id would. */
export async function startStandIn(port = 0) {
  const requests: SeenRequest[] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method!, url: request.url!, authorization: request.headers.authorization });
    request.resume();
    const body = request.url === "/dev/server" ? { id: "someone-else", agent: "local" } : { ok: true };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
