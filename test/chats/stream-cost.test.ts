import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { EventLog, REPLAY_MAX_BYTES, sseComment, sseFrame } from "../../src/chats/room/event-log";
import { JOINED_WRITE_MAX_BYTES, joinSmall, LISTENER_PULL_BYTES, Listeners, type StreamGrant } from "../../src/chats/room/listeners";
import { chatsPath, room } from "../helpers";
import { openEvents } from "../sse";
import { it } from "../fixtures/chat";

const timing = { maxAgeMs: 300_000, stallMs: 30_000 };
const grant: StreamGrant = { gateName: "t", leaseId: "l", accountId: "a", projectId: "p" };

/** A log of n encoded frames of `size` bytes each, as EventLog hands them out (the same arrays every time). */
function fakeLog(n: number, size: number) {
  const frames = Array.from({ length: n }, (_, i) => sseFrame(i + 1, "message", JSON.stringify("x".repeat(size))));
  const asked: number[] = [];
  return {
    frames,
    asked,
    framesAfter(cursor: number, maxBytes: number) {
      asked.push(maxBytes);
      const out: Uint8Array[] = [];
      let bytes = 0;
      for (const f of frames.slice(cursor)) {
        if (bytes > 0 && bytes + f.byteLength > maxBytes) break;
        out.push(f);
        bytes += f.byteLength;
      }
      return { frames: out, last: cursor + out.length };
    },
  };
}

describe("an event stream's cost", () => {
  it("closes a stream whose reader never reads once what is due has waited 30 s, quietly, and frees its place", async () => {
    const ended: StreamGrant[] = [];
    const listeners = new Listeners(fakeLog(3, 100), (g) => ended.push(g));
    const stream = listeners.add(0, [sseFrame(0, "snapshot", "{}")], grant, 0);
    const reader = stream.getReader(); // held, never read until the end
    listeners.pulse(5_000, timing);
    listeners.pulse(34_999, timing);
    expect(listeners.size, "not before 30 s").toBe(1);
    listeners.pulse(35_000, timing);
    expect(listeners.size).toBe(0);
    expect(ended).toEqual([grant]);
    // Closed, not errored: the stream ends (no error for anyone to log), and the snapshot it never asked for was never handed over.
    expect(await reader.read()).toEqual({ done: true, value: undefined });
  });

  it("hands a large snapshot over a pull at a time, as views of the one encoding every stream shares, with its own frames after it", async () => {
    const snapshot = sseFrame(7, "snapshot", JSON.stringify("q".repeat(200_000)));
    const listeners = new Listeners(fakeLog(0, 0), () => {});
    const [a, b] = [listeners.add(7, [snapshot], grant, 0).getReader(), listeners.add(7, [snapshot], grant, 0).getReader()];
    listeners.tell("t", sseComment("note"));
    const parts: Uint8Array[] = [];
    let text = "";
    while (!text.endsWith(": note\n\n")) {
      const { value } = await a.read();
      parts.push(value!);
      text += new TextDecoder().decode(value);
    }
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.slice(0, -1).every((part) => part.byteLength <= LISTENER_PULL_BYTES && part.buffer === snapshot.buffer)).toBe(true);
    expect(text).toBe(new TextDecoder().decode(snapshot) + ": note\n\n");
    // The other stream, not read yet, holds only its place in the same encoding.
    expect((await b.read()).value!.buffer).toBe(snapshot.buffer);
    await Promise.all([a.cancel(), b.cancel()]);
  });

  it("keeps a slow reader that takes something between pulses, even when more is always waiting", async () => {
    const log = fakeLog(200, 30_000);
    const listeners = new Listeners(log, () => {});
    const reader = listeners.add(0, [], grant, 0).getReader();
    // Every 20 s it reads one pull's worth; the log always has more waiting, so no pulse finds it idle.
    for (let now = 20_000; now <= 200_000; now += 20_000) {
      await reader.read();
      await reader.read();
      listeners.pulse(now, timing);
      expect(listeners.size, `still open at ${now / 1000} s`).toBe(1);
    }
    await reader.cancel();
  });

  it("keeps a stream whose reader takes what it is given, with a keep-alive at each pulse", async () => {
    const listeners = new Listeners(fakeLog(0, 0), () => {});
    const reader = listeners.add(0, [], grant, 0).getReader();
    const read = reader.read(); // the reader waits for more
    await Promise.resolve();
    listeners.pulse(40_000, timing);
    expect(new TextDecoder().decode((await read).value)).toBe(": keep-alive\n\n");
    const next = reader.read();
    listeners.pulse(80_000, timing);
    expect((await next).done).toBe(false);
    expect(listeners.size).toBe(1);
  });

  it("hands every reader the same encoded frames, at most 64 KB a pull (or one larger event)", async () => {
    const log = fakeLog(40, 4_000);
    const listeners = new Listeners(log, () => {});
    const [a, b] = [listeners.add(0, [], grant, 0).getReader(), listeners.add(0, [], grant, 0).getReader()];
    const [fromA, fromB] = [(await a.read()).value!, (await b.read()).value!];
    expect(fromA).toBe(log.frames[0]);
    expect(fromB).toBe(fromA);
    expect(log.asked.every((bytes) => bytes === LISTENER_PULL_BYTES)).toBe(true);
    const big = fakeLog(2, 100_000);
    const reader = new Listeners(big, () => {}).add(0, [], grant, 0).getReader();
    expect((await reader.read()).value).toBe(big.frames[0]);
  });

  it("writes small events that are ready together as one chunk, and larger ones as the shared frames they are", () => {
    const frame = (bytes: number) => new Uint8Array(bytes).fill(97);
    const [a, b, c, big, d] = [frame(100), frame(200), frame(300), frame(JOINED_WRITE_MAX_BYTES), frame(50)];
    const chunks = joinSmall([a, b, c, big, d]);
    expect(chunks.map((chunk) => chunk.byteLength)).toEqual([600, JOINED_WRITE_MAX_BYTES, 50]);
    expect(chunks[1]).toBe(big);
    expect(chunks[2]).toBe(d);
    expect(joinSmall([a])[0]).toBe(a);
  });

  it("caps a pull from the log at 64 KB, or one event if it is larger", async ({ chat }) => {
    const pulls = await runInDurableObject(room(chat.id), (_: unknown, state) => {
      const log = new EventLog(state.storage.sql);
      const from = log.newestId();
      for (let i = 0; i < 40; i++) log.append("message", JSON.stringify("y".repeat(4_000)), Date.now());
      log.append("message", JSON.stringify("z".repeat(200_000)), Date.now());
      const bytes = (frames: Uint8Array[]) => frames.reduce((n, f) => n + f.byteLength, 0);
      const first = log.framesAfter(from, LISTENER_PULL_BYTES);
      const last = log.framesAfter(from + 40, LISTENER_PULL_BYTES);
      return { first: bytes(first.frames), firstCount: first.frames.length, last: bytes(last.frames), lastCount: last.frames.length };
    });
    expect(pulls.first).toBeLessThanOrEqual(LISTENER_PULL_BYTES);
    expect(pulls.firstCount).toBeGreaterThan(1);
    expect(pulls.lastCount).toBe(1);
    expect(pulls.last).toBeGreaterThan(LISTENER_PULL_BYTES);
  });

  it("answers a resume point whose replay would pass 8 MB with a fresh snapshot, and replays one within it", async ({ w, chat }) => {
    const path = `${chatsPath(w)}/${chat.id}/events`;
    const ids = await runInDurableObject(room(chat.id), (_: unknown, state) => {
      const log = new EventLog(state.storage.sql);
      const start = log.newestId();
      const big = JSON.stringify({ id: crypto.randomUUID(), text: "b".repeat(1_000_000) });
      let replayBytes = 0;
      for (let i = 0; i < 9; i++) replayBytes += sseFrame(log.append("message.delta", big, Date.now()), "message.delta", big).byteLength;
      return { start, seventh: start + 7, replayBytes };
    });
    // The object reads its log afresh, with the events appended behind its back.
    await evictDurableObject(room(chat.id));
    expect(ids.replayBytes, "a replay from the start would pass the bound").toBeGreaterThan(REPLAY_MAX_BYTES);
    const tooFar = await openEvents(`${path}?after=${ids.start}`, w.token);
    expect((await tooFar.next()).type).toBe("snapshot");
    await tooFar.close();
    const near = await openEvents(`${path}?after=${ids.seventh}`, w.token);
    const first = await near.next();
    expect(first).toMatchObject({ type: "message.delta", id: ids.seventh + 1 });
    await near.close();
  }, 30_000);

  it("keeps about 10 MB of events however much is appended: nothing beyond what a replay could reach", async ({ chat }) => {
    const stored = await runInDurableObject(room(chat.id), (_: unknown, state) => {
      const log = new EventLog(state.storage.sql);
      const big = JSON.stringify("m".repeat(500_000));
      for (let i = 0; i < 60; i++) log.append("message.delta", big, Date.now());
      const sum = (table: string) => state.storage.sql.exec<{ n: number | null }>(`SELECT SUM(length(CAST(data AS BLOB))) AS n FROM ${table}`).one().n ?? 0;
      return sum("events") + sum("event_parts");
    });
    expect(stored).toBeGreaterThanOrEqual(REPLAY_MAX_BYTES);
    expect(stored).toBeLessThanOrEqual(REPLAY_MAX_BYTES + 2.5 * 1024 * 1024);
  });

  it("ends a stream whose reader fell behind what the log keeps, so it resumes from a snapshot, never across a gap", async ({ w, chat }) => {
    const path = `${chatsPath(w)}/${chat.id}/events`;
    const s = await openEvents(path, w.token);
    const snapshot = await s.next();
    // Appended faster than the reader takes them: the listener's cursor stays at the snapshot while the log drops what follows it.
    await room(chat.id).floodLog("n".repeat(500_000), 40);
    await s.closed(10_000);
    expect(s.events.filter((e) => e.id > snapshot.id)).toEqual([]);
    expect(s.comments.at(-1)).toMatch(/reconnect with Last-Event-ID/);
    const resumed = await openEvents(path, w.token, { "last-event-id": String(snapshot.id) });
    expect((await resumed.next()).type).toBe("snapshot");
    await resumed.close();
  }, 30_000);
});
