import { hasTable, metaValue, migrateSchema } from "../../db/object-schema";
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { readChatListToMove } from "./moved-chat-lists";
import type { JsonText } from "../../http/router";
import type { Chat, ChatList } from "../schemas";
import { ProjectUsage, type TaskUsage, type UsageDay } from "../../credits/project-usage";
import { SWITCH_CLOCK_MARGIN_MS, SWITCH_LEASE_MS, type SwitchLease, type WebhookSwitch } from "../webhook-switch";
import { log } from "../../log";
import { isUuid } from "../../ids";
import type { IndexedTask } from "../room-calls";
import { ProjectTasks, type TaskPage, type TaskQuery } from "./project-tasks";

export type ListMoveOutcome = "moved" | "already_moved";
/** A channel's message key: new (what the claim named is recorded), a replay of the same message (what the first claim named), or a different message. */
type MessageMade = { chatId: string; taskId: string; submissionId: string };
export type MessageClaim = { kind: "new" } | ({ kind: "replay" | "conflict" } & MessageMade);
/**
 * The chat an A2A contextId names, and the context its tasks show (a client's as that client sent it, else the chat's
 * id); `exists` false while the chat may not be made yet (it is not on the list).
 */
export type ContextChat = { chatId: string; shown: string; exists: boolean };
export type CreateClaim = { kind: "new"; chatId: string } | { kind: "replay"; chatId: string; answer: string | null } | { kind: "conflict" };
// Keys of chat creations are remembered this long per project.
const CREATE_KEYS_KEPT_MS = 24 * 3600_000;
type Listing = "active" | "archived";

// Append-only (db/object-schema.ts). The first is IF NOT EXISTS throughout: objects from before the
// schema had versions hold some of its tables already.
const MIGRATIONS = [
  [
    "CREATE TABLE IF NOT EXISTS create_keys (key TEXT PRIMARY KEY, chat_id TEXT NOT NULL, title TEXT NOT NULL, at INTEGER NOT NULL, answer TEXT)",
    "CREATE INDEX IF NOT EXISTS create_keys_by_age ON create_keys (at)",
    "CREATE TABLE IF NOT EXISTS chats (id TEXT PRIMARY KEY, version INTEGER NOT NULL, archived INTEGER NOT NULL, updated_at TEXT NOT NULL, summary TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS chats_by_listing ON chats (archived, updated_at DESC, id DESC)",
    ...ProjectUsage.schema,
  ],
  // Summaries sent before questions were typed lack pendingQuestionId: null until their chat sends its next one (json_insert keeps one that is there).
  ["UPDATE chats SET summary = json_insert(summary, '$.pendingQuestionId', NULL)"],
  // Until when each chat was told the project has no webhook endpoint (chats/webhook-switch.ts).
  ["ALTER TABLE chats ADD COLUMN switch_lease_until INTEGER NOT NULL DEFAULT 0"],
  // A channel's message keys (A2A's messageId, per account), with what the message was and the chat and task it made; and which chat each task is in.
  [
    "CREATE TABLE IF NOT EXISTS message_keys (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, chat_id TEXT NOT NULL, task_id TEXT, submission_id TEXT, message TEXT)",
    "CREATE INDEX IF NOT EXISTS message_keys_by_task ON message_keys (task_id)",
    "CREATE TABLE IF NOT EXISTS task_chats (task_id TEXT PRIMARY KEY, chat_id TEXT NOT NULL)",
  ],
  // How many A2A push configs each chat's tasks that have not ended hold, as the chat last said (its word numbered).
  ["CREATE TABLE IF NOT EXISTS push_counts (chat_id TEXT PRIMARY KEY, count INTEGER NOT NULL, version INTEGER NOT NULL)"],
  // The contexts A2A clients made (their contextId as sent) and the chat each one names, minted here.
  ["CREATE TABLE IF NOT EXISTS contexts (context TEXT PRIMARY KEY, chat_id TEXT NOT NULL)", "CREATE INDEX IF NOT EXISTS contexts_by_chat ON contexts (chat_id)"],
  // The project's tasks, for listing them across its chats (project-tasks.ts).
  ProjectTasks.schema,
  // Summaries sent before forks lack forkedFrom: null until their chat sends its next one (no fork came before it).
  ["UPDATE chats SET summary = json_insert(summary, '$.forkedFrom', NULL)"],
];
// At most this many A2A push configs across the project's tasks that have not ended.
const PUSH_CONFIGS_PER_PROJECT = 100;
// Chats told at once when the webhook switch flips on, and the tries each gets.
const TELL_AT_ONCE = 50;
const TELL_TRIES = 3;

/**
 * One object per project (named by its id): the summaries of its chats, for the chat list. Each
 * ChatRoom sends its summary with a version after every change; an older version never replaces a
 * newer one, so retries and late deliveries are harmless. The list is served as JSON text built
 * once per change, so a read is one call that returns a string. The same hand-off carries what the
 * chat's ended tasks cost, so the project's daily usage costs a task's end no call of its own.
 */
export class ProjectChats extends DurableObject<Env> {
  private started = false;
  private schemaReady = false;
  private starting: Promise<void> | undefined;
  private readonly lists: Partial<Record<Listing, string>> = {};
  private readonly usage = new ProjectUsage(this.ctx.storage.sql);
  private readonly tasks = new ProjectTasks(this.ctx.storage.sql);
  // The project's webhook switch as its webhooks object last said (undefined: not read; null: never said), and the one question put to it.
  private switchState: WebhookSwitch | null | undefined;
  private askingSwitch: Promise<WebhookSwitch> | undefined;

  /** A new project: nothing to bring from D1, and no webhook endpoint yet. */
  async open(): Promise<void> {
    this.createSchema();
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('moved', 1)");
    this.started = true;
    this.learnSwitch({ on: false, version: 0 });
  }

  /**
   * Records a chat's summary unless a newer version of it is held, counts its ended tasks' usage (each
   * task once), notes which chat its new tasks are in and indexes the states its tasks entered. Answers the project's webhook switch; while it is off the chat holds a lease on that, recorded
   * here, so the chat is told before an endpoint's creation is answered.
   */
  async upsert(
    projectId: string,
    chat: Chat,
    version: number,
    usage: readonly TaskUsage[] = [],
    tasks: readonly string[] = [],
    states: readonly IndexedTask[] = [],
  ): Promise<SwitchLease> {
    await this.start(projectId);
    this.createSchema();
    for (const taskId of tasks) this.ctx.storage.sql.exec("INSERT OR IGNORE INTO task_chats (task_id, chat_id) VALUES (?, ?)", taskId, chat.id);
    this.tasks.record(chat.id, states);
    const webhooks = await this.webhookSwitch(projectId);
    const now = Date.now();
    const until = webhooks.on ? 0 : now + SWITCH_LEASE_MS;
    this.put(chat, version, until);
    if (usage.length > 0) this.usage.record(usage, now);
    return { ...webhooks, until };
  }

  /**
   * The project's webhooks object says its switch flipped. When it is on, every chat that may hold a lease
   * saying it is off is told before this returns (each TELL_TRIES times at most; one that cannot be told
   * records again once its lease ends). A word older than the one held changes nothing.
   */
  async webhooksSwitched(projectId: string, word: WebhookSwitch): Promise<void> {
    await this.start(projectId);
    if (!this.learnSwitch(word) || !word.on) return;
    const leased = this.ctx.storage.sql
      .exec<{ id: string }>("SELECT id FROM chats WHERE switch_lease_until > ?", Date.now() - SWITCH_CLOCK_MARGIN_MS)
      .toArray()
      .map((r) => r.id);
    for (let i = 0; i < leased.length; i += TELL_AT_ONCE) {
      await Promise.all(leased.slice(i, i + TELL_AT_ONCE).map((chatId) => this.tell(chatId, word)));
    }
  }

  private async tell(chatId: string, word: WebhookSwitch): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.env.CHAT_ROOM.getByName(chatId).webhooksSwitched(word);
        return;
      } catch (error) {
        if (attempt >= TELL_TRIES) return log.error("webhook_switch_not_told", { chatId }, error);
      }
    }
  }

  /** The switch as held here; a project from before the switch existed asks its webhooks object once. */
  private async webhookSwitch(projectId: string): Promise<WebhookSwitch> {
    if (this.switchState === undefined) {
      const on = this.metaValue("webhook_switch_on");
      this.switchState = on === undefined ? null : { on: on === 1, version: this.metaValue("webhook_switch_version") ?? 0 };
    }
    if (this.switchState) return this.switchState;
    this.askingSwitch ??= this.env.PROJECT_WEBHOOKS.getByName(projectId)
      .switchState()
      .finally(() => (this.askingSwitch = undefined));
    this.learnSwitch(await this.askingSwitch);
    return this.switchState!;
  }

  /** Keeps a word about the switch unless a newer one is held; true when it was newer. */
  private learnSwitch(word: WebhookSwitch): boolean {
    this.createSchema();
    const held = this.metaValue("webhook_switch_version");
    if (held !== undefined && this.metaValue("webhook_switch_on") !== undefined && word.version <= held) return false;
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('webhook_switch_on', ?), ('webhook_switch_version', ?)", word.on ? 1 : 0, word.version);
    this.switchState = { on: word.on, version: word.version };
    return true;
  }

  private metaValue(key: string): number | undefined {
    return hasTable(this.ctx.storage.sql, "meta") ? metaValue(this.ctx.storage.sql, key) : undefined;
  }

  /** A page of the project's tasks across its chats, from the index (project-tasks.ts). */
  async taskPage(query: TaskQuery): Promise<TaskPage> {
    this.createSchema();
    return this.tasks.page(query);
  }

  /** The project's usage per UTC day from `from` to `to` (YYYY-MM-DD, inclusive), oldest first. */
  async usageDays(from: string, to: string): Promise<UsageDay[]> {
    this.createSchema();
    return this.usage.days(from, to);
  }

  /** `{"items":[…]}`: the project's active (or archived) chats, newest updatedAt first. */
  async list(projectId: string, archived: boolean): Promise<JsonText<ChatList>> {
    await this.start(projectId);
    this.createSchema();
    const listing: Listing = archived ? "archived" : "active";
    this.lists[listing] ??= `{"items":[${this.ctx.storage.sql
      .exec<{ summary: string }>("SELECT summary FROM chats WHERE archived = ? ORDER BY updated_at DESC, id DESC", archived ? 1 : 0)
      .toArray()
      .map((r) => r.summary)
      .join(",")}]}`;
    return this.lists[listing];
  }

  /** The one-time move: brings the project's D1 chat list here unless it was brought already. */
  async moveFromD1(projectId: string): Promise<ListMoveOutcome> {
    if (this.hasMoved()) return "already_moved";
    await this.start(projectId);
    return "moved";
  }

  /** Keeps a chat's summary when new or newer, and the chat's lease on the webhook switch being off (0: none) whatever its version. */
  private put(chat: Chat, version: number, switchLeaseUntil = 0): void {
    const sql = this.ctx.storage.sql;
    // One statement, written only when new or newer; RETURNING tells whether it was.
    const written =
      sql
        .exec(
          `INSERT INTO chats (id, version, archived, updated_at, summary, switch_lease_until) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET version = excluded.version, archived = excluded.archived, updated_at = excluded.updated_at, summary = excluded.summary,
           switch_lease_until = MAX(switch_lease_until, excluded.switch_lease_until)
         WHERE excluded.version > chats.version
         RETURNING 1`,
          chat.id,
          version,
          chat.archivedAt === null ? 0 : 1,
          chat.updatedAt,
          JSON.stringify(chat),
          switchLeaseUntil,
        )
        .toArray().length > 0;
    // Both lists are built again when next read: the chat may have moved from one to the other.
    if (written) for (const listing of ["active", "archived"] as const) delete this.lists[listing];
    else if (switchLeaseUntil > 0) sql.exec("UPDATE chats SET switch_lease_until = MAX(switch_lease_until, ?) WHERE id = ?", switchLeaseUntil, chat.id);
  }

  /** Ready once the project's list is here; a project from before the lists moved brings its D1 rows the first time. */
  private async start(projectId: string): Promise<void> {
    this.started ||= this.hasMoved();
    if (this.started) return;
    this.starting ??= this.startFromD1(projectId).finally(() => (this.starting = undefined));
    await this.starting;
  }

  private async startFromD1(projectId: string): Promise<void> {
    const rows = await readChatListToMove(this.env.DB, projectId);
    this.createSchema();
    // put() keeps the newer version, so D1's rows and summaries sent meanwhile may arrive in any order.
    for (const { chat, version } of rows) this.put(chat, version);
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('moved', 1)");
    this.started = true;
  }

  private hasMoved(): boolean {
    const sql = this.ctx.storage.sql;
    if (!hasTable(sql, "meta")) return false;
    return sql.exec("SELECT 1 FROM meta WHERE key = 'moved'").toArray().length > 0;
  }

  /**
   * An idempotency-key of a chat creation, per project, for 24 hours: the first claim gets a new chat
   * id; the same key with the same title gets that id again (with the first answer once it is
   * recorded), with another title a conflict. Serialised here, so concurrent creations make one chat.
   */
  async claimCreateKey(key: string, title: string, now = Date.now()): Promise<CreateClaim> {
    this.createSchema();
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM create_keys WHERE at < ?", now - CREATE_KEYS_KEPT_MS);
    const held = sql.exec<{ chat_id: string; title: string; answer: string | null }>("SELECT chat_id, title, answer FROM create_keys WHERE key = ?", key).toArray()[0];
    if (held) return held.title === title ? { kind: "replay", chatId: held.chat_id, answer: held.answer } : { kind: "conflict" };
    const chatId = crypto.randomUUID();
    sql.exec("INSERT INTO create_keys (key, chat_id, title, at) VALUES (?, ?, ?, ?)", key, chatId, title, now);
    return { kind: "new", chatId };
  }

  /** The first answer to a keyed creation, so a replay gets the chat as first created. */
  async recordCreateAnswer(key: string, answer: string): Promise<void> {
    this.createSchema();
    this.ctx.storage.sql.exec("UPDATE create_keys SET answer = ? WHERE key = ? AND answer IS NULL", answer, key);
  }

  /**
   * A channel's message key (one per project and sending account), serialised here so concurrent retries agree. The
   * first claim binds it to its message's fingerprint and to what it will make (its submission's id is fixed by the chat
   * and the key): the chat, the task it is or goes on with, and the message as received; the task's chat is recorded
   * with it, so the task can be found the moment it exists. A later claim with the same fingerprint gets those again.
   */
  async claimMessageKey(
    key: string,
    fingerprint: string,
    made: MessageMade & { message: string },
    // The caller found that the message holding the key made nothing (its send was refused): this one takes the key.
    rebind = false,
  ): Promise<MessageClaim> {
    this.createSchema();
    const sql = this.ctx.storage.sql;
    const held = sql
      .exec<{ fingerprint: string; chat_id: string; task_id: string; submission_id: string }>(
        "SELECT fingerprint, chat_id, task_id, submission_id FROM message_keys WHERE key = ?",
        key,
      )
      .toArray()[0];
    if (held && (held.fingerprint === fingerprint || !rebind)) {
      const first = { chatId: held.chat_id, taskId: held.task_id, submissionId: held.submission_id };
      return held.fingerprint === fingerprint ? { kind: "replay", ...first } : { kind: "conflict", ...first };
    }
    sql.exec(
      "INSERT OR REPLACE INTO message_keys (key, fingerprint, chat_id, task_id, submission_id, message) VALUES (?, ?, ?, ?, ?, ?)",
      key,
      fingerprint,
      made.chatId,
      made.taskId,
      made.submissionId,
      made.message,
    );
    sql.exec("INSERT OR IGNORE INTO task_chats (task_id, chat_id) VALUES (?, ?)", made.taskId, made.chatId);
    return { kind: "new" };
  }

  /**
   * The chat an A2A contextId names: a UUID that is a chat of this project is that chat (in any case); any other context
   * is matched exactly, and the first to name it (when `make`) gets a chat id minted here, so two first sends at once
   * agree on one chat. Null: a context no chat has and not made.
   */
  async contextChat(projectId: string, context: string, make: boolean): Promise<ContextChat | null> {
    await this.start(projectId);
    this.createSchema();
    const sql = this.ctx.storage.sql;
    const listed = (chatId: string) => sql.exec("SELECT 1 FROM chats WHERE id = ?", chatId).toArray().length > 0;
    const made = () => sql.exec<{ chat_id: string }>("SELECT chat_id FROM contexts WHERE context = ?", context).toArray()[0]?.chat_id;
    const asChat = context.toLowerCase();
    const ownContext = (chatId: string) => sql.exec<{ context: string }>("SELECT context FROM contexts WHERE chat_id = ?", chatId).toArray()[0]?.context ?? chatId;
    if (isUuid(asChat) && listed(asChat)) return { chatId: asChat, shown: ownContext(asChat), exists: true };
    if (!made() && isUuid(asChat)) {
      // A chat the list has not heard of yet (its hand-off failed and waits for a retry) is asked itself.
      const chat = await this.env.CHAT_ROOM.getByName(asChat).get(projectId);
      if (chat.kind === "chat") return { chatId: asChat, shown: ownContext(asChat), exists: true };
    }
    // Checked again after the wait: another send may have made the context meanwhile, and the first to make it wins.
    if (!made()) {
      if (!make) return null;
      sql.exec("INSERT INTO contexts (context, chat_id) VALUES (?, ?)", context, crypto.randomUUID());
    }
    const chatId = made()!;
    return { chatId, shown: context, exists: listed(chatId) };
  }

  /** The chat a recorded task is in (null when none is), and the messages channels sent into it, by submission. */
  async taskEntry(taskId: string): Promise<{ chatId: string; sent: { submissionId: string; message: string }[] } | null> {
    this.createSchema();
    const sql = this.ctx.storage.sql;
    const chatId = sql.exec<{ chat_id: string }>("SELECT chat_id FROM task_chats WHERE task_id = ?", taskId).toArray()[0]?.chat_id;
    if (!chatId) return null;
    const sent = sql
      .exec<{ submission_id: string; message: string }>("SELECT submission_id, message FROM message_keys WHERE task_id = ? AND message IS NOT NULL", taskId)
      .toArray()
      .map((row) => ({ submissionId: row.submission_id, message: row.message }));
    return { chatId, sent };
  }

  /**
   * A chat's word on how many push configs its open tasks hold; an older word than one heard is ignored. `checked`: the
   * count includes one being added, recorded (and true answered) only when the project stays within its limit.
   */
  async holdPushConfigs(chatId: string, count: number, version: number, checked: boolean): Promise<boolean> {
    this.createSchema();
    const sql = this.ctx.storage.sql;
    const others = sql.exec<{ n: number | null }>("SELECT SUM(count) AS n FROM push_counts WHERE chat_id != ?", chatId).one().n ?? 0;
    if (checked && others + count > PUSH_CONFIGS_PER_PROJECT) return false;
    sql.exec(
      "INSERT INTO push_counts (chat_id, count, version) VALUES (?, ?, ?) ON CONFLICT (chat_id) DO UPDATE SET count = excluded.count, version = excluded.version WHERE excluded.version > version",
      chatId,
      count,
      version,
    );
    return true;
  }

  /** The messages a channel sent into these tasks, as it sent them (at most 100 tasks: one list page). */
  async sentIn(taskIds: readonly string[]): Promise<{ taskId: string; submissionId: string; message: string }[]> {
    this.createSchema();
    const ids = taskIds.slice(0, 100);
    return this.ctx.storage.sql
      .exec<{ task_id: string; submission_id: string; message: string }>(
        `SELECT task_id, submission_id, message FROM message_keys WHERE message IS NOT NULL AND task_id IN (${ids.map(() => "?").join(", ")})`,
        ...ids,
      )
      .toArray()
      .map((row) => ({ taskId: row.task_id, submissionId: row.submission_id, message: row.message }));
  }

  private createSchema(): void {
    // Once per wake: objects from before a migration get it the first time they are used.
    if (this.schemaReady) return;
    this.schemaReady = true;
    migrateSchema(this.ctx.storage.sql, MIGRATIONS);
  }
}
