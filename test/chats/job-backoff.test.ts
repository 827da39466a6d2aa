import { runInDurableObject } from "cloudflare:test";
import { describe, expect } from "vitest";
import { JOB_BACKOFF_MAX_MS, JOB_BACKOFF_MS } from "../../src/chats/room/schedule";
import type { FaultyJobChatRoom } from "../doubles/faulty-job-chat-room";
import { runNextAlarm } from "../clock";
import { SENT_BY_TEST, env } from "../helpers";
import { it } from "../fixtures/chat";

const faultyRuns = (stub: DurableObjectStub<FaultyJobChatRoom>) => runInDurableObject(stub, (room: FaultyJobChatRoom) => [...room.faultyRuns]);

describe("a deferred job that keeps throwing", () => {
  it("backs off on its own schedule, 5 s and doubling to at most 5 minutes, while the chat's other work goes on", async ({ clock, w }) => {
    const chatId = crypto.randomUUID();
    const stub = env.FAULTY_CHAT_ROOM.getByName(chatId);
    await stub.create(chatId, w.projectId, "faulty");
    const seen = { maintenance: { value: false, at: clock.now() }, project: { value: { status: "active" as const, ownerAccountId: w.account.id }, at: clock.now() } };
    const sent = await stub.submit(w.projectId, { kind: "send", idempotencyKey: crypto.randomUUID(), content: "hello", replyToMessageId: null, ...SENT_BY_TEST, seen });
    expect(sent.kind).toBe("accepted");

    const start = clock.now();
    let alarms = 0;
    while ((await runNextAlarm(stub, clock, start + 30 * 60_000)) && alarms < 200) alarms++;

    const runs = await faultyRuns(stub);
    const gaps = runs.slice(1).map((at, i) => at - runs[i]!);
    // Each wait at least the backoff, doubling, and never past the cap (plus the millisecond an alarm is run after).
    gaps.forEach((gap, i) => {
      const backoff = Math.min(JOB_BACKOFF_MAX_MS, JOB_BACKOFF_MS * 2 ** i);
      expect(gap).toBeGreaterThanOrEqual(backoff);
      expect(gap).toBeLessThanOrEqual(backoff + 1_000);
    });
    expect(runs.filter((at) => at < start + 60_000).length, "runs in the first minute").toBeLessThanOrEqual(5);
    expect(alarms, "every alarm ran the job or the chat's own work").toBeLessThan(runs.length + 20);
    // The message was still dispatched and answered: the failing job held nothing else up.
    const state = await stub.submissionState(w.projectId, (sent as { submission: { submissionId: string } }).submission.submissionId);
    expect(state).toMatchObject({ kind: "submission", submission: { status: "done" } });
  });
});
