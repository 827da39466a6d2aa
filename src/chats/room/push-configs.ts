import type { ChainState } from "../chain-schemas";
import type { Env } from "../../env";
import { log } from "../../log";
import type { NewPushConfig, PushConfigOutcome, PushConfigView, PushDeliveryRead } from "../room-calls";
import type { Change } from "./change";
import type { ChatRow, RoomStorage } from "./room-storage";
import { PUSH_EVENT, type WebhookTask } from "../webhook-task";
import type { Chains } from "./chains";
import type { QuestionStorage } from "./question-storage";
import type { SubmissionStorage } from "./submission-storage";
import type { OutboxRow, WebhookOutbox } from "./webhook-outbox";

// At most this many configs per task.
const PUSH_CONFIGS_PER_TASK = 5;
const ENDED: ReadonlySet<ChainState> = new Set(["completed", "failed", "refused", "cancelled"]);

type ConfigRow = { task_id: string; id: string; url: string; scheme: string | null; sealed: string | null; has_token: number; protocol: "1.0" | "0.3" };
/** What a push outbox row refers to: the task and the state it entered, when, and the question it then waited on. */
type Told = { taskId: string; state: ChainState; at: number; questionId: string | null };

/**
 * The A2A push notification configs of the chat's tasks, and what each such task was last pushed as. After every change
 * (change.ts) a task whose state moved gets a push event in the webhook outbox, in the same synchronous stretch, so it
 * commits with the change; the hand-off makes one delivery per config. A chat without configs does nothing more.
 */
export class PushConfigs {
  // Whether a task that has not ended has a config (undefined: not looked at since the object started, or changed since).
  private open: boolean | undefined;

  constructor(
    private readonly sql: SqlStorage,
    private readonly submissions: SubmissionStorage,
    private readonly chains: Chains,
    private readonly questions: QuestionStorage,
    private readonly outbox: WebhookOutbox,
  ) {}

  /**
   * Adds a config to a task, or replaces the one with its id; "task_limit" when the task has its five. A task's first
   * config starts where it stands (its next change is pushed), unless `announce` asks for its state now too.
   */
  set(taskId: string, config: NewPushConfig, now: number, announce: boolean): "set" | "task_limit" {
    const ids = this.sql.exec<{ id: string }>("SELECT id FROM push_configs WHERE task_id = ?", taskId).toArray();
    if (ids.length >= PUSH_CONFIGS_PER_TASK && !ids.some((row) => row.id === config.id)) return "task_limit";
    this.sql.exec(
      // A replaced config keeps its place in the list.
      `INSERT INTO push_configs (task_id, id, url, scheme, sealed, has_token, protocol, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (task_id, id) DO UPDATE SET url = excluded.url, scheme = excluded.scheme, sealed = excluded.sealed, has_token = excluded.has_token, protocol = excluded.protocol`,
      taskId,
      config.id,
      config.url,
      config.scheme,
      config.sealed,
      config.hasToken ? 1 : 0,
      config.protocol,
      now,
    );
    const told = announce ? null : this.toldOf(taskId);
    this.sql.exec("INSERT INTO push_tasks (task_id, told) VALUES (?, ?) ON CONFLICT (task_id) DO NOTHING", taskId, told === undefined ? null : JSON.stringify(told));
    this.open = undefined;
    return "set";
  }

  list(taskId: string): PushConfigView[] {
    return this.sql.exec<ConfigRow>("SELECT * FROM push_configs WHERE task_id = ? ORDER BY rowid", taskId).toArray().map(viewOf);
  }

  remove(taskId: string, id: string): void {
    this.sql.exec("DELETE FROM push_configs WHERE task_id = ? AND id = ?", taskId, id);
    // With its last config gone, what the task was pushed as goes too: a config added later starts where the task then stands.
    this.sql.exec("DELETE FROM push_tasks WHERE task_id = ? AND NOT EXISTS (SELECT 1 FROM push_configs WHERE task_id = ?)", taskId, taskId);
    this.open = undefined;
  }

  /** The configs of tasks that have not ended: what counts against the project's limit. */
  openCount(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM push_configs c JOIN push_tasks t ON t.task_id = c.task_id WHERE t.ended = 0").one().n;
  }

  /** Whether a task has ended (configs cannot be added to it then). */
  hasEnded(taskId: string): boolean {
    const root = this.submissions.byId(taskId);
    return root !== undefined && ENDED.has(this.chains.view(root, "").state);
  }

  /**
   * After a change: each task with configs whose state moved since it was last pushed gets a push event. Returns whether
   * a task ended (the project's count of open configs fell).
   */
  notice(now: number): boolean {
    if (this.open === false) return false;
    const tasks = this.sql
      .exec<{ task_id: string; told: string | null }>(
        "SELECT task_id, told FROM push_tasks t WHERE ended = 0 AND EXISTS (SELECT 1 FROM push_configs c WHERE c.task_id = t.task_id)",
      )
      .toArray();
    this.open = tasks.length > 0;
    let ended = false;
    for (const { task_id: taskId, told } of tasks) {
      const state = this.toldOf(taskId);
      // A state is told once: when it was entered may be read more exactly later (a working task's reply begins).
      const before = told === null ? null : (JSON.parse(told) as Told);
      if (!state || (before && before.state === state.state && before.questionId === state.questionId)) continue;
      const text = JSON.stringify(state);
      this.outbox.recordPush(text, now);
      const end = ENDED.has(state.state);
      this.sql.exec("UPDATE push_tasks SET told = ?, ended = ? WHERE task_id = ?", text, end ? 1 : 0, taskId);
      ended ||= end;
    }
    if (ended) this.open = undefined;
    return ended;
  }

  /** A push event's deliveries: one per config its task has at the hand-off. */
  targets(event: OutboxRow, projectId: string, chatId: string): WebhookTask[] {
    const { taskId } = JSON.parse(event.ref) as Told;
    return this.sql
      .exec<{ id: string }>("SELECT id FROM push_configs WHERE task_id = ?", taskId)
      .toArray()
      .map(({ id }) => ({ projectId, chatId, eventId: event.id, endpointId: `push:${chatId}:${taskId}:${id}`, type: PUSH_EVENT, push: { taskId, configId: id } }));
  }

  /** What an attempt needs: the config (null once deleted), the state the event told, and the task as it now stands. */
  delivery(taskId: string, configId: string, event: OutboxRow | undefined, chatId: string): PushDeliveryRead | null {
    const config = this.sql.exec<ConfigRow>("SELECT * FROM push_configs WHERE task_id = ? AND id = ?", taskId, configId).toArray()[0];
    const root = this.submissions.byId(taskId);
    if (!config || !event || !root) return null;
    const told = JSON.parse(event.ref) as Told;
    const asked = told.questionId === null ? undefined : this.questions.byId(told.questionId);
    return {
      url: config.url,
      scheme: config.scheme,
      sealed: config.sealed,
      hasToken: config.has_token === 1,
      protocol: config.protocol,
      told: { state: told.state, at: told.at },
      question: asked ? JSON.stringify(this.questions.viewAsAsked(asked, chatId)) : null,
      // A push's Task carries no history.
      task: JSON.stringify(this.chains.task(root, chatId, false)),
    };
  }

  /** The task's state as a push tells it; undefined when there is no such submission. */
  private toldOf(taskId: string): Told | undefined {
    const root = this.submissions.byId(taskId);
    if (!root) return undefined;
    const { chain, enteredAt } = this.chains.standing(root, "");
    return { taskId, state: chain.state, at: enteredAt, questionId: chain.state === "awaiting" ? (chain.question?.id ?? null) : null };
  }
}

const viewOf = (row: ConfigRow): PushConfigView => ({ id: row.id, taskId: row.task_id, url: row.url, scheme: row.scheme });

/** What the book works with: the chat's storage and its configs, the change, and the project's chat list to count with. */
type BookParts = { env: Env; ctx: DurableObjectState; store: RoomStorage; submissions: SubmissionStorage; pushes: PushConfigs; change: Change };

/**
 * The chat's push configs as the project counts them: a new one is added only within the project's limit across its
 * chats' tasks that have not ended, which its chat list counts; the chat tells the list its count after every change to it.
 */
export class PushConfigBook {
  // Configs being added whose project-wide count is being asked, and the number of the chat's last word on its count.
  #reservations = 0;
  #countVersion = Date.now() * 1000;

  constructor(private readonly parts: BookParts) {}

  /**
   * Adds a config to a task, or replaces the one with its id: at most five a task, and (for a new one) within the project's
   * limit. `announce`: the task's state now is pushed too (a task created with its config).
   */
  async set(chat: ChatRow, taskId: string, config: NewPushConfig, announce: boolean): Promise<PushConfigOutcome> {
    const { env, submissions, pushes, change } = this.parts;
    if (!submissions.byId(taskId)) return { kind: "submission_not_found" };
    if (pushes.hasEnded(taskId)) return { kind: "ended" };
    const configs = pushes.list(taskId);
    const replacing = configs.some((c) => c.id === config.id);
    if (!replacing) {
      if (configs.length >= PUSH_CONFIGS_PER_TASK) return { kind: "task_limit" };
      // Counted before it exists, with the others being added meanwhile, so two at once cannot both take the last place.
      this.#reservations++;
      try {
        const count = pushes.openCount() + this.#reservations;
        if (!(await env.PROJECT_CHATS.getByName(chat.project_id).holdPushConfigs(chat.id, count, ++this.#countVersion, true))) return { kind: "project_limit" };
      } finally {
        this.#reservations--;
      }
      if (pushes.hasEnded(taskId)) return { kind: "ended" };
    }
    const now = Date.now();
    let outcome: "set" | "task_limit" = "task_limit";
    change(now, () => (outcome = pushes.set(taskId, config, now, announce)), "unlisted");
    if (!replacing) this.tellCount();
    if (outcome === "task_limit") return { kind: "task_limit" };
    return { kind: "set", config: pushes.list(taskId).find((c) => c.id === config.id)! };
  }

  list(taskId: string): PushConfigOutcome {
    if (!this.parts.submissions.byId(taskId)) return { kind: "submission_not_found" };
    return { kind: "configs", configs: this.parts.pushes.list(taskId) };
  }

  remove(taskId: string, configId: string): PushConfigOutcome {
    if (!this.parts.submissions.byId(taskId)) return { kind: "submission_not_found" };
    this.parts.pushes.remove(taskId, configId);
    this.tellCount();
    return { kind: "removed" };
  }

  /** Tells the project's chat list how many push configs the chat's open tasks hold, in the background (a lost word only leaves the count high). */
  tellCount(): void {
    const { env, ctx, store, pushes } = this.parts;
    const chat = store.chat();
    if (!chat) return;
    const told = env.PROJECT_CHATS.getByName(chat.project_id)
      .holdPushConfigs(chat.id, pushes.openCount() + this.#reservations, ++this.#countVersion, false)
      .catch((error) => log.warn("push_count_not_told", { chatId: chat.id }, error));
    ctx.waitUntil(told);
  }
}
