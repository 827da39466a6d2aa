import type { Env } from "../../env";
import { projectAccess } from "../../projects/access";
import { type FrameSource, Listeners, type StreamGrant } from "./listeners";
import { log } from "../../log";

// A keep-alive and an access check this often, and a keep-alive alone half-way between; streams end after MAX_AGE (clients resume); slow readers are dropped.
const STREAM_PULSE_MS = 5_000;
export const STREAM_MAX_AGE_MS = 5 * 60_000;
const STREAM_STALL_MS = 30_000;
const TIMING = { maxAgeMs: STREAM_MAX_AGE_MS, stallMs: STREAM_STALL_MS };
export const RETRY_HINT = new TextEncoder().encode("retry: 2000\n\n");

/**
 * A chat object's open event streams, and what keeps them honest: the pulse that sends keep-alives,
 * ends old or slow streams, renews each stream's lease in its token's TokenGate and ends the
 * streams whose token or project access is gone.
 */
export class ChatStreams {
  private readonly listeners: Listeners;
  private pulseTimer: ReturnType<typeof setInterval> | undefined;
  private beats = 0;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    frames: FrameSource,
  ) {
    this.listeners = new Listeners(frames, (grant) => this.release(grant));
  }

  get size(): number {
    return this.listeners.size;
  }

  /** A stream that sends `first`, then every event after `cursor`; the pulse runs while any stream is open. */
  open(cursor: number, first: Uint8Array[], grant: StreamGrant, now: number): ReadableStream<Uint8Array> {
    const stream = this.listeners.add(cursor, first, grant, now);
    this.pulseTimer ??= setInterval(() => void this.beat(), STREAM_PULSE_MS / 2);
    return stream;
  }

  /**
   * Every other beat is the pulse; the ones between only write keep-alives. A hang-up shows at the second write
   * after it (a proxy still takes the first), so a closed stream is found within about 5 s, at no access check.
   */
  beat(now = Date.now()): Promise<void> {
    if (this.beats++ % 2 === 0) {
      try {
        this.listeners.pulse(now, TIMING);
      } catch (error) {
        log.warn("stream_pulse_failed", {}, error);
      }
      return Promise.resolve();
    }
    return this.pulse(now).catch((error) => log.warn("stream_pulse_failed", {}, error));
  }

  /** A frame for the streams of one credential only. */
  tell(gateName: string, frame: Uint8Array): void {
    this.listeners.tell(gateName, frame);
  }

  /** The stream's client went away (its Worker saw the hang-up): it ends, and frees its place, now rather than at its own next failed write. */
  hungUp(leaseId: string): void {
    this.listeners.endWhere((grant) => grant.leaseId === leaseId);
  }

  /** New events are in the log. */
  wake(): void {
    this.listeners.wake();
  }

  async pulse(now = Date.now()): Promise<void> {
    this.listeners.pulse(now, TIMING);
    const grants = this.listeners.grants();
    const denied = new Set<StreamGrant>();
    await Promise.all([
      // One call per token renews its leases and says whether it was revoked or expired.
      ...[...Map.groupBy(grants, (g) => g.gateName).values()].map(async (held) => {
        const { gateName } = held[0]!;
        const valid = await this.env.TOKEN_GATE.getByName(gateName)
          .renewStreams(
            gateName,
            held.map((g) => g.leaseId),
          )
          .catch(() => true);
        if (!valid) for (const g of held) denied.add(g);
      }),
      // One membership read per account; lost access ends the stream, D1 trouble does not.
      ...[...Map.groupBy(grants, (g) => `${g.projectId}\n${g.accountId}`).values()].map(async (held) => {
        const { projectId, accountId } = held[0]!;
        const allowed = await projectAccess(this.env.DB, projectId, accountId).then(
          (access) => access !== null,
          () => true,
        );
        if (!allowed) for (const g of held) denied.add(g);
      }),
    ]);
    // A stream that hung up while its lease was renewed may have had its release reach the gate first: released again, after the renewal.
    const open = new Set(this.listeners.grants());
    for (const grant of grants) if (!open.has(grant)) this.release(grant);
    this.listeners.endWhere((g) => denied.has(g));
    if (this.listeners.size === 0 && this.pulseTimer !== undefined) {
      clearInterval(this.pulseTimer);
      this.pulseTimer = undefined;
    }
  }

  private release(grant: StreamGrant): void {
    this.ctx.waitUntil(
      this.env.TOKEN_GATE.getByName(grant.gateName)
        .closeStream(grant.leaseId)
        .catch(() => undefined),
    );
  }
}
