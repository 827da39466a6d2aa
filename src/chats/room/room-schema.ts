import { WAITING_PROMPT } from "../../agent/asked-question";
import { FAILED_KEPT_BYTES, FAILED_KEPT_ENTRIES, FAILED_KEPT_MS } from "./submission-storage";
import { PROMPT_MAX } from "../../agent/limits";

/** The chat object's SQLite schema. */

const SQL_NOW = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
// A version 4 UUID made by SQLite (the variant nibble 8, 9, a or b), for rows a migration creates.
const SQL_UUID = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
  || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
// The failed entries of the last day beyond the newest FAILED_KEPT_ENTRIES holding FAILED_KEPT_BYTES (as keepFailedWithinBound keeps them).
const FAILED_BEYOND_BOUND = `SELECT seq FROM (
    SELECT seq, ROW_NUMBER() OVER newest AS entries, SUM(content_bytes) OVER newest AS bytes FROM submissions
    WHERE status = 'failed' AND left_queue_at IS NULL AND failed_at > ${SQL_NOW} - ${FAILED_KEPT_MS}
    WINDOW newest AS (ORDER BY failed_at DESC, seq DESC))
  WHERE entries > ${FAILED_KEPT_ENTRIES} OR bytes > ${FAILED_KEPT_BYTES}`;

// Append-only: each entry upgrades the schema by one version, once, when the object wakes.
export const MIGRATIONS: string[][] = [
  [
    `CREATE TABLE chat (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
       archived_at TEXT, version INTEGER NOT NULL, indexed_version INTEGER NOT NULL DEFAULT 0, callback_origin TEXT)`,
    `CREATE TABLE messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, role TEXT NOT NULL, content TEXT NOT NULL,
       created_at TEXT NOT NULL, status TEXT, task_id TEXT)`,
    `CREATE TABLE submissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, idempotency_key TEXT NOT NULL UNIQUE,
       content TEXT NOT NULL, reply_to TEXT, disposition TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, task_id TEXT, failed_at INTEGER)`,
    "CREATE INDEX submissions_by_status ON submissions (status, seq)",
    `CREATE TABLE tasks (id TEXT PRIMARY KEY, submission_id TEXT NOT NULL, owner_message_id TEXT NOT NULL, started_at INTEGER NOT NULL, check_at INTEGER NOT NULL)`,
    // Refunds owed to the project owner for failed tasks, until the owner's ledger has taken them.
    "CREATE TABLE pending_refunds (task_id TEXT PRIMARY KEY)",
  ],
  [
    // Every change, in order, for event streams; AUTOINCREMENT so an id is never given out twice.
    "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, data TEXT NOT NULL, at INTEGER NOT NULL, parts INTEGER NOT NULL DEFAULT 1)",
    // The rest of an event's data past its first part (SQLite rows hold at most 2 MB).
    "CREATE TABLE event_parts (event_id INTEGER NOT NULL, part INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (event_id, part))",
    "ALTER TABLE chat ADD COLUMN awaiting_user INTEGER NOT NULL DEFAULT 0",
    // How many partial outputs of the running task have been appended (http agents number them).
    "ALTER TABLE tasks ADD COLUMN partials INTEGER NOT NULL DEFAULT 0",
    // The http agent's callback address now comes from PUBLIC_URL, never from a request.
    "ALTER TABLE chat DROP COLUMN callback_origin",
  ],
  [
    // Credits are taken by the owner's AccountLedger object: whose it is, fixed with the task id, so a refund goes back to it.
    "ALTER TABLE submissions ADD COLUMN account_id TEXT",
    "ALTER TABLE pending_refunds ADD COLUMN account_id TEXT",
  ],
  [
    // Control of running work: steering and cancelled submissions, the queue bound, and the links from a submission to its messages.
    "ALTER TABLE submissions ADD COLUMN kind TEXT NOT NULL DEFAULT 'send'",
    "ALTER TABLE submissions ADD COLUMN content_bytes INTEGER NOT NULL DEFAULT 0",
    // Only waiting entries count for the queue bound; the others keep 0 rather than have every row rewritten.
    "UPDATE submissions SET content_bytes = length(CAST(content AS BLOB)) WHERE status IN ('queued', 'dispatching')",
    "ALTER TABLE submissions ADD COLUMN user_message_id TEXT",
    "ALTER TABLE submissions ADD COLUMN reply_message_id TEXT",
    "ALTER TABLE messages ADD COLUMN submission_id TEXT",
    "CREATE INDEX submissions_by_task ON submissions (task_id)",
    // Earlier messages keep null links (rewriting every row of a long chat could outlast the request that wakes it); the task
    // running now is linked: its reply, and its user message, written just before the reply in the same stretch.
    "UPDATE messages SET submission_id = (SELECT submission_id FROM tasks) WHERE id = (SELECT owner_message_id FROM tasks)",
    `UPDATE messages SET task_id = (SELECT id FROM tasks), submission_id = (SELECT submission_id FROM tasks)
       WHERE seq = (SELECT r.seq - 1 FROM tasks t JOIN messages r ON r.id = t.owner_message_id) AND role = 'user' AND task_id IS NULL`,
    `UPDATE submissions SET reply_message_id = (SELECT owner_message_id FROM tasks),
       user_message_id = (SELECT m.id FROM tasks t JOIN messages r ON r.id = t.owner_message_id JOIN messages m ON m.seq = r.seq - 1 AND m.role = 'user')
       WHERE id = (SELECT submission_id FROM tasks)`,
  ],
  [
    // Queue changes as events per entry: a failed entry leaves the queue when its 24 hours end or newer failures push it out.
    "ALTER TABLE submissions ADD COLUMN left_queue_at INTEGER",
    "CREATE INDEX submissions_failed_in_queue ON submissions (failed_at) WHERE status = 'failed' AND left_queue_at IS NULL",
    // Failed entries older than a day had left the queue before anything recorded it; those of the last day are weighed by their bytes.
    `INSERT OR REPLACE INTO meta (key, value) VALUES ('failed_floor', ${SQL_NOW})`,
    `UPDATE submissions SET content_bytes = length(CAST(content AS BLOB))
       WHERE status = 'failed' AND left_queue_at IS NULL AND failed_at > (SELECT value FROM meta WHERE key = 'failed_floor') - 86400000`,
    // Each event's place in bytes, so whether a replay would pass 8 MB is one lookup; the events before it cannot be resumed from.
    "ALTER TABLE events ADD COLUMN end_offset INTEGER",
    `INSERT OR REPLACE INTO meta (key, value) VALUES ('events_offset_base',
       MAX((SELECT COALESCE(MAX(id), 0) FROM events), (SELECT COALESCE(MAX(value), 0) FROM meta WHERE key = 'events_pruned_through')))`,
  ],
  [
    // A chat upgraded to entry events with more failed entries of the last day than the queue keeps: the oldest leave now,
    // unannounced, so the resume points from before this get a snapshot.
    `INSERT OR REPLACE INTO meta (key, value) SELECT 'events_offset_base', COALESCE(MAX(id), 0) FROM events WHERE EXISTS (${FAILED_BEYOND_BOUND})`,
    `UPDATE submissions SET left_queue_at = ${SQL_NOW} WHERE seq IN (${FAILED_BEYOND_BOUND})`,
  ],
  [
    // Webhook events, written with the change that causes them and handed to the delivery queue from here.
    `CREATE TABLE webhook_outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, ref TEXT NOT NULL,
       at INTEGER NOT NULL, handed_off_at INTEGER)`,
    "CREATE INDEX webhook_outbox_by_hand_off ON webhook_outbox (handed_off_at, seq)",
  ],
  [
    // Credits and usage: an ended reply's usage (JSON), the running task's token counts so far, what a submission was charged
    // (null: before this was kept) and given back, why it failed (before this every failure was a lack of credits), and ended
    // tasks' usage until the project has it.
    "ALTER TABLE messages ADD COLUMN usage TEXT",
    "ALTER TABLE tasks ADD COLUMN input_tokens INTEGER",
    "ALTER TABLE tasks ADD COLUMN output_tokens INTEGER",
    "ALTER TABLE submissions ADD COLUMN charged INTEGER",
    "ALTER TABLE submissions ADD COLUMN refunded INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE submissions ADD COLUMN failure_code TEXT",
    "UPDATE submissions SET failure_code = 'insufficient_credits' WHERE status = 'failed'",
    `CREATE TABLE usage_outbox (task_id TEXT PRIMARY KEY, ended_at INTEGER NOT NULL, credits INTEGER NOT NULL, input_tokens INTEGER,
       output_tokens INTEGER)`,
  ],
  [
    // Bounded submissions: a submission that can no longer run keeps the hash of its text, not the text.
    "ALTER TABLE submissions ADD COLUMN content_hash TEXT",
  ],
  [
    // Questions the agent asks, typed and answered through the API: one row each, kept as long as the chat; at most one pending.
    `CREATE TABLE questions (id TEXT PRIMARY KEY, task_id TEXT NOT NULL, message_id TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
       prompt TEXT NOT NULL, options TEXT, multi_select INTEGER NOT NULL DEFAULT 0, allow_text INTEGER NOT NULL DEFAULT 0, action TEXT, url TEXT,
       created_at INTEGER NOT NULL, expires_at INTEGER, closed_at INTEGER, answer TEXT, submission_id TEXT)`,
    "CREATE INDEX questions_pending ON questions (status) WHERE status = 'pending'",
    // The reply that asks names its question; a submission names the question it answered.
    "ALTER TABLE messages ADD COLUMN question_id TEXT",
    "ALTER TABLE submissions ADD COLUMN question_id TEXT",
    // A chat awaiting the user before questions were typed gets a text question asked by its last reply (its first PROMPT_MAX
    // characters), asked now; its expires_at stays null: it expires QUESTION_TTL_HOURS (as the var then says) after it was made.
    `INSERT INTO questions (id, task_id, message_id, kind, status, prompt, allow_text, created_at)
       SELECT ${SQL_UUID}, m.task_id, m.id, 'text', 'pending', COALESCE(NULLIF(substr(m.content, 1, ${PROMPT_MAX}), ''), '${WAITING_PROMPT}'), 1, ${SQL_NOW}
       FROM chat c, (SELECT id, task_id, content FROM messages WHERE role = 'owner' ORDER BY seq DESC LIMIT 1) m
       WHERE c.awaiting_user = 1 AND m.task_id IS NOT NULL`,
    "UPDATE messages SET question_id = (SELECT id FROM questions) WHERE id = (SELECT message_id FROM questions)",
    // Whether the agent waits is now whether a question is pending.
    "ALTER TABLE chat DROP COLUMN awaiting_user",
  ],
  [
    // The running task's reply, named for what it is (the message's role is still "owner").
    "ALTER TABLE tasks RENAME COLUMN owner_message_id TO reply_message_id",
  ],
  [
    // A row may hold a folded run of consecutive events, from its id to last_id (event-log.ts).
    "ALTER TABLE events ADD COLUMN last_id INTEGER",
  ],
  [
    // How a send joins a busy chat (If-Busy): the value it was accepted with (null: queue, as before it was kept), and its place
    // in the run order (null: its seq; an interrupt goes ahead of every pending entry with a number below them).
    "ALTER TABLE submissions ADD COLUMN if_busy TEXT",
    "ALTER TABLE submissions ADD COLUMN run_order INTEGER",
    // An interrupt or a cancel stopped it while it was being dispatched: its reply is written stopped, and the agent never starts.
    "ALTER TABLE submissions ADD COLUMN stop_requested INTEGER NOT NULL DEFAULT 0",
    // The credential (its TokenGate's name) that made it: its task's credits count against that credential's limit.
    "ALTER TABLE submissions ADD COLUMN credential TEXT",
    "ALTER TABLE pending_refunds ADD COLUMN credential TEXT",
  ],
  [
    // The chain of a submission (what MCP and A2A tasks report): the submission whose reply asked the question it answers leads it.
    // Null for submissions from before it was kept: each leads its own.
    "ALTER TABLE submissions ADD COLUMN chain_root_id TEXT",
    "CREATE INDEX submissions_by_chain ON submissions (chain_root_id, seq)",
  ],
  [
    // When a reply ended (ms): the moment its task's state (completed, failed, stopped) was entered, for the chain's tasks.
    "ALTER TABLE messages ADD COLUMN ended_at INTEGER",
    // The last submission whose task the chat list has been told of (ProjectChats keeps which chat each task is in).
    "ALTER TABLE chat ADD COLUMN tasks_listed_seq INTEGER NOT NULL DEFAULT 0",
  ],
  [
    // A2A push notification configs of the chat's tasks (push-configs.ts): where to post, the token and credentials sealed by
    // the Worker, and the protocol version whose body the receiver gets.
    `CREATE TABLE push_configs (task_id TEXT NOT NULL, id TEXT NOT NULL, url TEXT NOT NULL, scheme TEXT, sealed TEXT, has_token INTEGER NOT NULL,
       protocol TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (task_id, id))`,
    // What each such task was last pushed as (its state, when entered, its question), and whether it has ended.
    "CREATE TABLE push_tasks (task_id TEXT PRIMARY KEY, told TEXT, ended INTEGER NOT NULL DEFAULT 0)",
  ],
  [
    // The context an A2A client made for this chat (its contextId as sent), shown on the chat's tasks; null: the chat's own id.
    "ALTER TABLE chat ADD COLUMN a2a_context TEXT",
  ],
  [
    // The tasks the project's task index follows until their end is told, with what it was last told (task-index.ts);
    // every task is told again from the first, so the index learns the tasks of chats from before it.
    "CREATE TABLE indexed_tasks (task_id TEXT PRIMARY KEY, told TEXT)",
    "UPDATE chat SET tasks_listed_seq = 0",
  ],
  [
    // A fork (forks.ts): the chat and message it was forked at (JSON), and how far its copy has come (the source's last
    // copied message's seq; null once the copy is whole). A source's fork keys, each with the fork it made.
    "ALTER TABLE chat ADD COLUMN forked_from TEXT",
    "ALTER TABLE chat ADD COLUMN fork_copied_seq INTEGER",
    `CREATE TABLE fork_keys (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, fork_chat_id TEXT NOT NULL, through_seq INTEGER NOT NULL,
       at_message_id TEXT NOT NULL, title TEXT NOT NULL, rerun_content TEXT)`,
  ],
];
