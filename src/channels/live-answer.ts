// While a waiting call has nothing to send, something goes out this often, as on a chat's event stream:
// a client that went away is noticed by the write that fails (or the runtime's cancel), whatever else the platform tells.
export const ANSWER_KEEP_ALIVE_MS = 5_000;
const SSE_KEEP_ALIVE = new TextEncoder().encode(": keep-alive\n\n");
// JSON allows white space before the value, so a JSON answer can be kept alive before it is known.
const JSON_KEEP_ALIVE = new TextEncoder().encode(" ");

/**
 * The event-stream answer of a call that reports progress, as the transport sends it, with a comment
 * whenever nothing else went out for a while; a client that goes away ends the wait behind it (never the work).
 */
export function liveEventStream(response: Response, hangUp: AbortController): Response {
  const source = response.body?.getReader();
  if (!source) return response;
  const live = keptAlive(SSE_KEEP_ALIVE, hangUp, () => source.cancel().catch(() => undefined));
  void (async () => {
    for (let chunk = await source.read(); !chunk.done; chunk = await source.read()) await live.write(chunk.value);
    await live.close();
  })().catch((error: unknown) => live.fail(error));
  return new Response(live.readable, response);
}

/**
 * The JSON answer of a call that waits: 200 at once (with `headers`, a content type of its own among them),
 * white space now and then until the answer is known, then the answer; a client that goes away ends the wait.
 */
export function liveJsonAnswer(answer: Promise<Response>, hangUp: AbortController, headers: Record<string, string> = {}): Response {
  const live = keptAlive(JSON_KEEP_ALIVE, hangUp, () => undefined);
  void answer
    .then(async (response) => {
      await live.write(new Uint8Array(await response.arrayBuffer()));
      await live.close();
    })
    .catch((error: unknown) => live.fail(error));
  // Never compressed: the edge (and wrangler dev, which plays it) would gzip a JSON body and hold the beats in its
  // encoder, so a hung-up client would never be written to, and never noticed, until the answer.
  return new Response(live.readable, {
    status: 200,
    headers: { "content-type": "application/json", ...headers, "content-encoding": "identity", "cache-control": "no-store, no-transform" },
  });
}

/**
 * A body the answer writes into, with `beat` written ANSWER_KEEP_ALIVE_MS after the last write whenever
 * nothing else went out; a cancel or failed write is a hang-up. A client that went away is noticed by the
 * second write after it left (the first is still taken by the connection), so within two beats.
 */
function keptAlive(beat: Uint8Array, hangUp: AbortController, onHangUp: () => void) {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  const gone = () => {
    ended = true;
    clearTimeout(timer);
    hangUp.abort();
    onHangUp();
  };
  const write = (chunk: Uint8Array) => {
    clearTimeout(timer);
    // setTimeout counts real time even under a test's frozen Date.now.
    if (!ended) timer = setTimeout(() => void write(beat), ANSWER_KEEP_ALIVE_MS);
    return writer.write(chunk).catch(gone);
  };
  timer = setTimeout(() => void write(beat), ANSWER_KEEP_ALIVE_MS);
  writer.closed.catch(gone);
  return {
    readable,
    write,
    close: async () => {
      ended = true;
      clearTimeout(timer);
      await writer.close().catch(gone);
    },
    /** The answer could not be made: the body breaks off, and the wait (if any) ends. */
    fail: (error: unknown) => {
      gone();
      writer.abort(error).catch(() => undefined);
    },
  };
}
