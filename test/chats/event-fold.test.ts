import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { EventLog, REPLAY_MAX_BYTES } from "../../src/chats/room/event-log";
import { settle } from "../clock";
import { chatsPath, newToken, peek, room, send } from "../helpers";
import { openEvents, type StreamEvent } from "../sse";
import { it } from "../fixtures/chat";

const decoder = new TextDecoder();
/** Every frame after each id, as one string per id: what a replay from there sends. */
const replays = (log: EventLog, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) =>
    log
      .framesAfter(from + i, Number.MAX_SAFE_INTEGER)
      .frames.map((f) => decoder.decode(f))
      .join(""),
  );

describe("folding the event log", () => {
  it("replays the very same bytes from every id of a folded run, also from storage alone, with the same resume rule", async ({ chat }) => {
    await runInDurableObject(room(chat.id), (_: unknown, state) => {
      const sql = state.storage.sql;
      const log = new EventLog(sql);
      const start = log.newestId();
      const now = Date.now();
      // Escapes, line separators, pairs of surrogates, and one event long enough to be stored in parts.
      const texts = ['{"text":"a"}', '{"text":"\\n\\"quoted\\""}', '{"text":"\u2028😀 é"}', JSON.stringify({ text: "x".repeat(600_000) }), '{"id":"end"}'];
      for (const [i, text] of texts.entries()) log.append(i === 4 ? "message" : "message.delta", text, now);
      const end = log.newestId();
      const before = replays(new EventLog(sql), start, end);
      const resumable = Array.from({ length: end - start + 1 }, (_, i) => new EventLog(sql).canResumeFrom(start + i, 1_000_000));

      log.fold();
      // One row from the chat's first event (its creation's, not folded before) to the last.
      const rows = sql.exec<{ id: number; last_id: number | null; parts: number }>("SELECT id, last_id, parts FROM events").toArray();
      expect(rows).toEqual([{ id: 1, last_id: end, parts: expect.any(Number) }]);
      expect(rows[0]!.parts).toBeGreaterThan(1);
      // A fresh log reads from storage alone (nothing in memory): the same bytes after every id.
      const fresh = new EventLog(sql);
      expect(replays(fresh, start, end)).toEqual(before);
      expect(Array.from({ length: end - start + 1 }, (_, i) => fresh.canResumeFrom(start + i, 1_000_000))).toEqual(resumable);
      expect(fresh.newestId()).toBe(end);
      expect(fresh.lastData("message")).toBe('{"id":"end"}');
      // The log goes on after a run, and the next fold starts where this one ended.
      const next = fresh.append("chat", '{"after":true}', now);
      expect(next).toBe(end + 1);
      fresh.append("chat", '{"after":2}', now);
      fresh.fold();
      expect(sql.exec("SELECT id, last_id FROM events").toArray()).toEqual([
        { id: 1, last_id: end },
        { id: end + 1, last_id: end + 2 },
      ]);
      expect(new EventLog(sql).framesAfter(end, REPLAY_MAX_BYTES).frames.map((f) => decoder.decode(f))).toEqual([
        `id: ${end + 1}\nevent: chat\ndata: {"after":true}\n\n`,
        `id: ${end + 2}\nevent: chat\ndata: {"after":2}\n\n`,
      ]);
    });
  });

  it("drops a run whole once its newest event is 24 hours old; a resume point inside it then gets a snapshot", async ({ chat }) => {
    await runInDurableObject(room(chat.id), (_: unknown, state) => {
      const sql = state.storage.sql;
      const now = Date.now();
      const log = new EventLog(sql);
      for (const hour of [0, 1, 2]) log.append("chat", JSON.stringify({ hour }), now + hour * 3600_000);
      const runEnd = log.newestId();
      log.fold();
      // A day after the run's newest event, but not after its oldest: the run stays, whole.
      const fresh = new EventLog(sql);
      fresh.append("chat", '{"hour":25}', now + 25 * 3600_000);
      expect(sql.exec("SELECT id, last_id FROM events").toArray()).toEqual([
        { id: 1, last_id: runEnd },
        { id: runEnd + 1, last_id: null },
      ]);
      expect(fresh.canResumeFrom(2, REPLAY_MAX_BYTES)).toBe(true);
      // A day after its newest: gone, and resume points inside it or at its end are not resumable from the log.
      const later = new EventLog(sql);
      later.append("chat", '{"hour":27}', now + 27 * 3600_000);
      expect(sql.exec("SELECT id, last_id FROM events").toArray()).toEqual([
        { id: runEnd + 1, last_id: null },
        { id: runEnd + 2, last_id: null },
      ]);
      expect(later.canResumeFrom(2, REPLAY_MAX_BYTES)).toBe(false);
      expect(later.framesAfter(2, REPLAY_MAX_BYTES)).toMatchObject({ lost: true });
      expect(later.canResumeFrom(runEnd, REPLAY_MAX_BYTES)).toBe(true);
      expect(later.framesAfter(runEnd, REPLAY_MAX_BYTES).frames.map((f) => decoder.decode(f))).toEqual([
        `id: ${runEnd + 1}\nevent: chat\ndata: {"hour":25}\n\n`,
        `id: ${runEnd + 2}\nevent: chat\ndata: {"hour":27}\n\n`,
      ]);
    });
  });

  it("resumes from every event id of a finished turn, folded into one row, with the exact text after it and no repeats", async ({ clock, w, chat }) => {
    const path = `${chatsPath(w)}/${chat.id}/events`;
    const live = await openEvents(path, w.token);
    const snapshot = await live.next();
    await send(w, chat.id, "a reply in several parts");
    await settle(room(chat.id), clock);
    const reply = (await peek(w, chat.id)).find((m) => m.role === "owner")!;
    expect(reply.status).toBe("success");
    const final = await live.until((e) => e.type === "message" && e.data.id === reply.id && e.data.status === "success");
    const last = await live.until((e) => e.type === "chat" && e.id > final.id);
    await live.close();
    const seen = live.events.filter((e) => e.id <= last.id);
    expect(seen.filter((e) => e.type === "message.delta").length).toBeGreaterThan(1);
    const rows = await runInDurableObject(room(chat.id), (_: unknown, state) =>
      state.storage.sql.exec<{ id: number; last_id: number | null }>("SELECT id, last_id FROM events").toArray(),
    );
    // The chat's first events and the whole turn, one row.
    expect(rows).toEqual([{ id: 1, last_id: last.id }]);

    // Read from storage: a restart empties the object's memory of recent events.
    await abortAllDurableObjects();
    const deltasUpTo = (events: StreamEvent[], id: number) =>
      events
        .filter((e) => e.id <= id && e.type === "message.delta" && e.data.id === reply.id)
        .map((e) => e.data.text)
        .join("");
    let token = w.token;
    for (let from = snapshot.id; from < last.id; from++) {
      // A token holds at most 10 streams, and a closed one frees its place within seconds, not at once.
      if ((from - snapshot.id) % 8 === 7) token = await newToken(w.session);
      const resumed = await openEvents(path, token, { "last-event-id": String(from) });
      await resumed.until((e) => e.id === last.id);
      await resumed.close();
      const replayed = resumed.events.filter((e) => e.id <= last.id);
      expect(replayed, `resumed after ${from}`).toEqual(seen.filter((e) => e.id > from));
      // What a client had before the cut and what the resume gives add up to the reply, nothing twice.
      expect(deltasUpTo(seen, from) + deltasUpTo(replayed, last.id)).toBe(reply.content);
    }
  });
});
