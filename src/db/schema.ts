import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { Scope } from "../auth/scopes";
import { PROJECT_STATUSES, ROLES } from "../projects/roles";
import type { AVAILABLE_FUNCTIONS } from "../catalog/schema";

// Translatable text keeps all three authored languages; the plain field is chosen per request.
const translated = <N extends string>(name: N, column: string) =>
  ({
    [`${name}En`]: text(`${column}_en`).notNull().default(""),
    [`${name}Ru`]: text(`${column}_ru`).notNull().default(""),
    [`${name}Es`]: text(`${column}_es`).notNull().default(""),
  }) as Record<`${N}En` | `${N}Ru` | `${N}Es`, ReturnType<typeof text>>;

const json = <T>(column: string) => text(column, { mode: "json" }).$type<T>().notNull();

export type IncludedSection = {
  titleEn: string;
  titleRu: string;
  titleEs: string;
  contentMarkdownEn: string;
  contentMarkdownRu: string;
  contentMarkdownEs: string;
};

const planColumns = () => ({
  ...translated("title", "title"),
  ...translated("descriptionLineOne", "description_line_one"),
  ...translated("descriptionLineTwo", "description_line_two"),
  includedSections: json<IncludedSection[]>("included_sections"),
  availableFunctions: json<(typeof AVAILABLE_FUNCTIONS)[number][]>("available_functions"),
  maxProjects: integer("max_projects"),
  maxAppsPerProject: integer("max_apps_per_project"),
  mainColor: text("main_color").notNull(),
});

/** The single free plan (id is always 1). */
export const freePlan = sqliteTable("catalog_free_plan", {
  id: integer("id").primaryKey(),
  ...planColumns(),
  monthlyCredits: integer("monthly_credits").notNull(),
  paidPlanCompletionCredits: integer("paid_plan_completion_credits").notNull(),
  phoneVerificationCredits: integer("phone_verification_credits").notNull(),
  registrationCredits: integer("registration_credits").notNull(),
});

export const paidPlans = sqliteTable("catalog_paid_plans", {
  id: text("id").primaryKey(),
  position: integer("position").notNull(),
  order: integer("sort_order").notNull(),
  isActive: integer("is_active", { mode: "boolean" }).notNull(),
  isPopular: integer("is_popular", { mode: "boolean" }).notNull(),
  creditsDoNotExpire: integer("credits_do_not_expire", { mode: "boolean" }).notNull(),
  ...planColumns(),
});

export const planDurations = sqliteTable(
  "catalog_plan_durations",
  {
    planId: text("plan_id")
      .notNull()
      .references(() => paidPlans.id, { onDelete: "cascade" }),
    id: text("id").notNull(),
    position: integer("position").notNull(),
    months: integer("months").notNull(),
    creditAccumulationMonths: real("credit_accumulation_months").notNull().default(0),
    creditsDoNotExpire: integer("credits_do_not_expire", { mode: "boolean" }).notNull().default(false),
    isArchived: integer("is_archived", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.planId, t.id] })],
);

export const planCreditOptions = sqliteTable(
  "catalog_plan_credit_options",
  {
    planId: text("plan_id").notNull(),
    durationId: text("duration_id").notNull(),
    id: text("id").notNull(),
    position: integer("position").notNull(),
    credits: integer("credits"),
    price: integer("price"),
    isNegotiatedPrice: integer("is_negotiated_price", { mode: "boolean" }).notNull().default(false),
    isArchived: integer("is_archived", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.planId, t.durationId, t.id] })],
);

export const legalDocuments = sqliteTable("catalog_legal_documents", {
  kind: text("kind", { enum: ["privacy_policy", "terms_of_use"] }).primaryKey(),
  ...translated("contentMarkdown", "content_markdown"),
  acceptanceUpdateTitle: text("acceptance_update_title").notNull().default(""),
});

export const banners = sqliteTable("catalog_banners", {
  id: text("id").primaryKey(),
  placement: text("placement", { enum: ["chat", "page_top"] }).notNull(),
  position: integer("position").notNull(),
  ...translated("contentMarkdown", "content_markdown"),
  iconName: text("icon_name").notNull(),
  iconColor: text("icon_color"),
  linkUrl: text("link_url").notNull(),
  openInNewTab: integer("open_in_new_tab", { mode: "boolean" }).notNull(),
  archived: integer("archived", { mode: "boolean" }).notNull().default(false),
  backgroundColor: text("background_color"),
  textColor: text("text_color"),
  weight: integer("weight"),
});

/** The single questionnaire (id is always 1); its questions and options have their own tables. */
export const polls = sqliteTable("catalog_poll", {
  id: integer("id").primaryKey(),
  revision: integer("revision").notNull(),
  completionEpoch: integer("completion_epoch"),
  hasDefinition: integer("has_definition", { mode: "boolean" }).notNull(),
  ...translated("title", "title"),
  iconName: text("icon_name").notNull().default(""),
  iconColor: text("icon_color"),
  backgroundColor: text("background_color"),
  textColor: text("text_color"),
  weight: integer("weight"),
  ...translated("previewTitle", "preview_title"),
  ...translated("previewDescription", "preview_description"),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(false),
  bonusCredits: integer("bonus_credits"),
  startQuestionId: text("start_question_id").notNull().default(""),
});

export const pollQuestions = sqliteTable("catalog_poll_questions", {
  id: text("id").primaryKey(),
  position: integer("position").notNull(),
  ...translated("title", "title"),
  type: text("type", { enum: ["single", "multiple"] }).notNull(),
  nextQuestionId: text("next_question_id"),
});

export const pollOptions = sqliteTable("catalog_poll_options", {
  id: text("id").primaryKey(),
  questionId: text("question_id")
    .notNull()
    .references(() => pollQuestions.id, { onDelete: "cascade" }),
  position: integer("position").notNull(),
  ...translated("label", "label"),
  isCustom: integer("is_custom", { mode: "boolean" }).notNull().default(false),
  nextQuestionId: text("next_question_id"),
});

// ---- accounts, projects, sessions and API tokens ----

export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    // Stored lower-cased, so the unique index makes addresses unique case-insensitively.
    email: text("email").notNull().unique(),
    passwordHash: text("password_hash").notNull(),
    // The opening balance; from then on the account's AccountLedger object holds the balance.
    credits: integer("credits").notNull().default(0),
    createdAt: text("created_at").notNull(),
  },
  // From the days when D1 took the charges; kept so the rows the ledgers move are never negative.
  (t) => [check("credits_not_negative", sql`${t.credits} >= 0`)],
);

export const projects = sqliteTable("projects", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  ownerAccountId: text("owner_account_id")
    .notNull()
    .references(() => accounts.id),
  status: text("status", { enum: PROJECT_STATUSES }).notNull().default("active"),
  createdAt: text("created_at").notNull(),
});

export const projectMembers = sqliteTable(
  "project_members",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    role: text("role", { enum: ROLES }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.accountId] })],
);

export const sessions = sqliteTable("sessions", {
  id: text("id").primaryKey(),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  tokenHash: text("token_hash").notNull().unique(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    scopes: json<Scope[]>("scopes"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    lastUsedAt: text("last_used_at"),
  },
  (t) => [index("api_tokens_by_account").on(t.accountId, t.createdAt)],
);

// ---- chats: read-only since chat lists and credits moved into Durable Objects ----
// Each project's ProjectChats object and each account's AccountLedger reads these rows once (the
// one-time move, docs/deploy.md); nothing writes them any more.

/** Chat summaries as they were listed before ProjectChats objects held them. */
export const chatIndex = sqliteTable(
  "chat_index",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id").notNull(),
    title: text("title").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    archivedAt: text("archived_at"),
    lastMessageAt: text("last_message_at"),
    latestAgentPreview: text("latest_agent_preview").notNull().default(""),
    isWorking: integer("is_working", { mode: "boolean" }).notNull().default(false),
    isAwaitingUser: integer("is_awaiting_user", { mode: "boolean" }).notNull().default(false),
    queuedCount: integer("queued_count").notNull().default(0),
    // Written only when newer, so a late write of an older snapshot cannot win.
    version: integer("version").notNull(),
  },
  (t) => [index("chat_index_by_project").on(t.projectId, t.archivedAt, t.updatedAt)],
);

/** Charges taken before AccountLedger objects held balances; a ledger brings its account's recent ones when it starts. */
export const creditCharges = sqliteTable(
  "credit_charges",
  {
    taskId: text("task_id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    amount: integer("amount").notNull(),
    chargedAt: text("charged_at").notNull(),
  },
  // The move reads one account's recent charges.
  (t) => [index("credit_charges_by_account").on(t.accountId, t.chargedAt)],
);

/** Service-wide switches (the maintenance flag), read-mostly: chats read them every few seconds at most. */
export const settings = sqliteTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
