import { describe, expect } from "vitest";
import { runNextAlarm, settle } from "../clock";
import { room } from "../helpers";
import { it } from "../fixtures/chat";
import { errorOf, openStream, resultOf, rpc, type SseFrame, userMessage } from "./a2a-helpers";

const kindOf = (frame: SseFrame) => Object.keys(frame.data.result)[0];
const EVENT_ID = "urn:project-chat:a2a:event-id:v1";

describe("A2A streams", () => {
  it("SendStreamingMessage: the Task first, then the reply in chunks, its whole text, and the state it ends in; each chat event's id as id and in metadata", async ({
    clock,
    w,
    chat,
  }) => {
    const stream = await openStream(w.token, w.projectId, "SendStreamingMessage", { message: userMessage("stream this please", { contextId: chat.id }) });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("cache-control")).toBe("no-store");
    await settle(room(chat.id), clock);
    const frames = await stream.frames();
    expect(kindOf(frames[0]!)).toBe("task");
    expect(frames[0]!.data.result.task.metadata[EVENT_ID].eventId).toBe(frames[0]!.id);
    const last = frames.at(-1)!;
    expect(last.data.result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    expect(last.data.result.statusUpdate.metadata["urn:project-chat:a2a:usage:v1"].credits).toBe(1);
    const final = frames.find((f) => kindOf(f) === "artifactUpdate" && f.data.result.artifactUpdate.lastChunk)!;
    const chunks = frames.filter((f) => kindOf(f) === "artifactUpdate" && !f.data.result.artifactUpdate.lastChunk);
    // The chunks and the last one's rest (it appends) join to the whole text.
    const text = [...chunks, final].map((f) => f.data.result.artifactUpdate.artifact.parts[0].text).join("");
    expect(final.data.result.artifactUpdate.append).toBe(true);
    expect(text).toBe((await resultOf(rpc(w.token, w.projectId, "GetTask", { id: frames[0]!.data.result.task.id }))).artifacts[0].parts[0].text);
    if (chunks.length > 1) expect(chunks.slice(1).every((f) => f.data.result.artifactUpdate.append === true)).toBe(true);
    // Ids only ever grow, and every id shows in the payload's metadata too.
    const ids = frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    for (const frame of frames.filter((f) => f.id !== undefined)) expect(JSON.stringify(frame.data)).toContain(`"eventId":"${frame.id}"`);
  });

  it("a client that appends every chunk shows the reply once: the last chunk appends the rest, also on a stream opened mid-reply", async ({ clock, w, chat }) => {
    const appended = (frames: SseFrame[]) =>
      frames.map((f) => (kindOf(f) === "task" ? (f.data.result.task.artifacts?.[0]?.parts[0].text ?? "") : (f.data.result.artifactUpdate?.artifact.parts[0].text ?? ""))).join("");
    const live = await openStream(w.token, w.projectId, "SendStreamingMessage", { message: userMessage("a reply in several pieces", { contextId: chat.id }) });
    await settle(room(chat.id), clock);
    const frames = await live.frames();
    const taskId = frames[0]!.data.result.task.id;
    const whole = (await resultOf(rpc(w.token, w.projectId, "GetTask", { id: taskId }))).artifacts[0].parts[0].text;
    const last = frames.find((f) => f.data.result.artifactUpdate?.lastChunk)!.data.result.artifactUpdate;
    expect(last.append).toBe(true);
    expect(appended(frames)).toBe(whole);
    // Opened while the reply grows: the Task carries the text so far, and the chunks after it append to it.
    const { task } = await resultOf(
      rpc(w.token, w.projectId, "SendMessage", { message: userMessage("another reply in pieces", { contextId: chat.id }), configuration: { returnImmediately: true } }),
    );
    let sofar = "";
    for (let i = 0; i < 20 && !sofar; i++) {
      await runNextAlarm(room(chat.id), clock);
      sofar = (await resultOf(rpc(w.token, w.projectId, "GetTask", { id: task.id }))).artifacts?.[0]?.parts[0].text ?? "";
    }
    const midway = await openStream(w.token, w.projectId, "SubscribeToTask", { id: task.id });
    await settle(room(chat.id), clock);
    const later = await midway.frames();
    const done = (await resultOf(rpc(w.token, w.projectId, "GetTask", { id: task.id }))).artifacts[0].parts[0].text;
    expect(later[0]!.data.result.task.artifacts[0].parts[0].text.length).toBeLessThan(done.length);
    expect(appended(later)).toBe(done);
  });

  it("SubscribeToTask with Last-Event-ID replays every event after it, with no gap and no repeat, also once the task has ended", async ({ clock, w, chat }) => {
    const stream = await openStream(w.token, w.projectId, "SendStreamingMessage", { message: userMessage("a reply in several pieces", { contextId: chat.id }) });
    await settle(room(chat.id), clock);
    const frames = await stream.frames();
    const taskId = frames[0]!.data.result.task.id;
    const withIds = frames.filter((f) => f.id !== undefined);
    for (const cut of withIds.slice(0, -1)) {
      const resumed = await openStream(w.token, w.projectId, "SubscribeToTask", { id: taskId }, { "last-event-id": cut.id! });
      const replay = await resumed.frames();
      const after = frames.slice(frames.indexOf(cut) + 1);
      // The same events with the same ids; a status's timestamp is when it was told, but for the state the task is in.
      const shown = (list: SseFrame[]) => list.map((f) => [f.id, JSON.stringify(f.data.result).replace(/"timestamp":"[^"]*"/g, "")]);
      expect(shown(replay), `after ${cut.id}`).toEqual(shown(after));
      expect(replay.at(-1)!.data.result.statusUpdate.status.timestamp).toBe(frames.at(-1)!.data.result.statusUpdate.status.timestamp);
    }
    // The state it ended in is stamped with when it was entered: live, in every replay, and as GetTask tells it.
    const ended = await resultOf(rpc(w.token, w.projectId, "GetTask", { id: taskId }));
    expect(frames.at(-1)!.data.result.statusUpdate.status).toMatchObject({ state: "TASK_STATE_COMPLETED", timestamp: ended.status.timestamp });
  });

  it("a resume of an ended task ends after its replay, though the chat went on with other tasks", async ({ clock, w, chat }) => {
    const stream = await openStream(w.token, w.projectId, "SendStreamingMessage", { message: userMessage("first", { contextId: chat.id }) });
    await settle(room(chat.id), clock);
    const frames = await stream.frames();
    const taskId = frames[0]!.data.result.task.id;
    await resultOf(rpc(w.token, w.projectId, "SendMessage", { message: userMessage("second", { contextId: chat.id }), configuration: { returnImmediately: true } }));
    await settle(room(chat.id), clock);
    // From the task's own last event, and from one before it: the rest of its events, then the end (no wait).
    const last = frames.filter((f) => f.id !== undefined).at(-1)!;
    expect(await (await openStream(w.token, w.projectId, "SubscribeToTask", { id: taskId }, { "last-event-id": last.id! })).frames()).toEqual([]);
    const before = frames.filter((f) => f.id !== undefined).at(-2)!;
    const replay = await (await openStream(w.token, w.projectId, "SubscribeToTask", { id: taskId }, { "last-event-id": before.id! })).frames();
    expect(replay.map((f) => f.id)).toEqual(frames.slice(frames.indexOf(before) + 1).map((f) => f.id));
  });

  it("SubscribeToTask without a resume point on an ended task is UnsupportedOperation; a bad Last-Event-ID is -32602", async ({ clock, w, chat }) => {
    const { task } = await resultOf(
      rpc(w.token, w.projectId, "SendMessage", { message: userMessage("done soon", { contextId: chat.id }), configuration: { returnImmediately: true } }),
    );
    await settle(room(chat.id), clock);
    expect((await errorOf(rpc(w.token, w.projectId, "SubscribeToTask", { id: task.id }))).code).toBe(-32004);
    expect((await errorOf(rpc(w.token, w.projectId, "SubscribeToTask", { id: task.id }, { "last-event-id": "-1" }))).code).toBe(-32602);
    expect((await errorOf(rpc(w.token, w.projectId, "SubscribeToTask", { id: crypto.randomUUID() }))).code).toBe(-32001);
  });

  it("a stream that reaches a question ends there, and the answer sent as a stream goes on from the same task", async ({ clock, w, chat }) => {
    const asked = await openStream(w.token, w.projectId, "SendStreamingMessage", { message: userMessage("/ask Your name?", { contextId: chat.id }) });
    await settle(room(chat.id), clock);
    const frames = await asked.frames();
    const end = frames.at(-1)!.data.result.statusUpdate;
    expect(end.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(end.status.message.parts[1].data.kind).toBe("text");
    const answered = await openStream(w.token, w.projectId, "SendStreamingMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", taskId: end.taskId, parts: [{ text: "Ada" }] },
    });
    await settle(room(chat.id), clock);
    const more = await answered.frames();
    expect(more[0]!.data.result.task.id).toBe(end.taskId);
    expect(more.at(-1)!.data.result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("a stream holds one of the token's ten stream places: with none free, 429 too_many_streams and nothing is sent", async ({ w, chat }) => {
    const waits = [];
    for (let i = 0; i < 10; i++) waits.push(await openStream(w.token, w.projectId, "SendStreamingMessage", { message: userMessage(`/ask q${i}?`, { contextId: chat.id }) }));
    const refused = await openStream(w.token, w.projectId, "SendStreamingMessage", { message: userMessage("one too many", { contextId: chat.id }) });
    const answer = await refused.answer!;
    expect(answer.status).toBe(429);
    expect(answer.json.code).toBe("too_many_streams");
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    const messages = (await resultOf(rpc(w.token, w.projectId, "ListTasks", { contextId: chat.id }))).tasks;
    expect(messages).toHaveLength(10);
    for (const stream of waits) await stream.response.body?.cancel();
  });
});
