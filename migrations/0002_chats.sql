CREATE TABLE `chat_index` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`title` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`archived_at` text,
	`last_message_at` text,
	`latest_agent_preview` text DEFAULT '' NOT NULL,
	`is_working` integer DEFAULT false NOT NULL,
	`queued_count` integer DEFAULT 0 NOT NULL,
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `chat_index_by_project` ON `chat_index` (`project_id`,`archived_at`,`updated_at`);--> statement-breakpoint
CREATE TABLE `credit_charges` (
	`task_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`amount` integer NOT NULL,
	`charged_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
