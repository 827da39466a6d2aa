import { iso } from "../time";

// At most this many attempts to one endpoint are in flight at once: a receiver that hangs holds at most this many connections.
export const ATTEMPTS_IN_FLIGHT_PER_ENDPOINT = 10;

export type Turn = { webhook_id: string; task: string; turn: number };

/**
 * Each endpoint's line of deliveries waiting their turn, in the order they joined, and its attempts
 * in flight. The line is in the object's storage (a restart loses no delivery in it); the count is
 * in memory, since no attempt outlives the object that makes it.
 */
export class EndpointTurns {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly sql: SqlStorage) {}

  /** Puts a delivery at the end of its endpoint's line; one already in it keeps its place. */
  join(endpointId: string, webhookId: string): void {
    this.sql.exec(
      "UPDATE deliveries SET turn = (SELECT COALESCE(MAX(turn), 0) + 1 FROM deliveries WHERE endpoint_id = ?) WHERE webhook_id = ? AND turn IS NULL",
      endpointId,
      webhookId,
    );
  }

  /**
   * The deliveries whose turn has come, first come first: as many as the endpoint has places free,
   * of those due by `dueBy`. Each leaves the line marked in flight since `now` (so a restart before
   * its attempt is counted leaves it overdue, to be handed over again) and holds its place until released.
   */
  take(endpointId: string, now: number, dueBy: number): Turn[] {
    const free = ATTEMPTS_IN_FLIGHT_PER_ENDPOINT - this.inFlightAt(endpointId);
    if (free <= 0) return [];
    const turns = this.sql
      .exec<Turn>(
        "SELECT webhook_id, task, turn FROM deliveries WHERE endpoint_id = ? AND turn IS NOT NULL AND status = 'pending' AND COALESCE(next_attempt_ms, 0) <= ? ORDER BY turn LIMIT ?",
        endpointId,
        dueBy,
        free,
      )
      .toArray();
    for (const t of turns) this.sql.exec("UPDATE deliveries SET turn = NULL, in_flight_until = ? WHERE webhook_id = ?", now, t.webhook_id);
    this.inFlight.set(endpointId, this.inFlightAt(endpointId) + turns.length);
    return turns;
  }

  /** A turn that could not be used (no attempt was made): the delivery goes back to its place in line, due again at `at`. */
  putBack(turn: Turn, at: number): void {
    this.sql.exec(
      "UPDATE deliveries SET turn = ?, in_flight_until = NULL, next_attempt_ms = ?, next_attempt_at = ? WHERE webhook_id = ? AND status = 'pending'",
      turn.turn,
      at,
      iso(at),
      turn.webhook_id,
    );
  }

  /** An attempt taken from the line has ended: its place is free. */
  release(endpointId: string): void {
    this.inFlight.set(endpointId, this.inFlightAt(endpointId) - 1);
  }

  /** Whether deliveries wait their turn: at this endpoint, or at any. One row of the line's index answers. */
  hasWaiting(endpointId?: string): boolean {
    const rows =
      endpointId === undefined
        ? this.sql.exec("SELECT 1 FROM deliveries WHERE turn IS NOT NULL AND status = 'pending' LIMIT 1")
        : this.sql.exec("SELECT 1 FROM deliveries WHERE endpoint_id = ? AND turn IS NOT NULL AND status = 'pending' LIMIT 1", endpointId);
    return rows.toArray().length > 0;
  }

  /** The endpoints whose line is not empty. */
  waitingEndpoints(): string[] {
    return this.sql
      .exec<{ endpoint_id: string }>("SELECT DISTINCT endpoint_id FROM deliveries WHERE turn IS NOT NULL AND status = 'pending'")
      .toArray()
      .map((r) => r.endpoint_id);
  }

  private inFlightAt(endpointId: string): number {
    return this.inFlight.get(endpointId) ?? 0;
  }
}
