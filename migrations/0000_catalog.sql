CREATE TABLE `catalog_banners` (
	`id` text PRIMARY KEY NOT NULL,
	`placement` text NOT NULL,
	`position` integer NOT NULL,
	`content_markdown_en` text DEFAULT '' NOT NULL,
	`content_markdown_ru` text DEFAULT '' NOT NULL,
	`content_markdown_es` text DEFAULT '' NOT NULL,
	`icon_name` text NOT NULL,
	`icon_color` text,
	`link_url` text NOT NULL,
	`open_in_new_tab` integer NOT NULL,
	`archived` integer DEFAULT false NOT NULL,
	`background_color` text,
	`text_color` text,
	`weight` integer
);
--> statement-breakpoint
CREATE TABLE `catalog_free_plan` (
	`id` integer PRIMARY KEY NOT NULL,
	`title_en` text DEFAULT '' NOT NULL,
	`title_ru` text DEFAULT '' NOT NULL,
	`title_es` text DEFAULT '' NOT NULL,
	`description_line_one_en` text DEFAULT '' NOT NULL,
	`description_line_one_ru` text DEFAULT '' NOT NULL,
	`description_line_one_es` text DEFAULT '' NOT NULL,
	`description_line_two_en` text DEFAULT '' NOT NULL,
	`description_line_two_ru` text DEFAULT '' NOT NULL,
	`description_line_two_es` text DEFAULT '' NOT NULL,
	`included_sections` text NOT NULL,
	`available_functions` text NOT NULL,
	`max_projects` integer,
	`max_apps_per_project` integer,
	`main_color` text NOT NULL,
	`monthly_credits` integer NOT NULL,
	`paid_plan_completion_credits` integer NOT NULL,
	`phone_verification_credits` integer NOT NULL,
	`registration_credits` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `catalog_legal_documents` (
	`kind` text PRIMARY KEY NOT NULL,
	`content_markdown_en` text DEFAULT '' NOT NULL,
	`content_markdown_ru` text DEFAULT '' NOT NULL,
	`content_markdown_es` text DEFAULT '' NOT NULL,
	`acceptance_update_title` text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE `catalog_paid_plans` (
	`id` text PRIMARY KEY NOT NULL,
	`position` integer NOT NULL,
	`sort_order` integer NOT NULL,
	`is_active` integer NOT NULL,
	`is_popular` integer NOT NULL,
	`credits_do_not_expire` integer NOT NULL,
	`title_en` text DEFAULT '' NOT NULL,
	`title_ru` text DEFAULT '' NOT NULL,
	`title_es` text DEFAULT '' NOT NULL,
	`description_line_one_en` text DEFAULT '' NOT NULL,
	`description_line_one_ru` text DEFAULT '' NOT NULL,
	`description_line_one_es` text DEFAULT '' NOT NULL,
	`description_line_two_en` text DEFAULT '' NOT NULL,
	`description_line_two_ru` text DEFAULT '' NOT NULL,
	`description_line_two_es` text DEFAULT '' NOT NULL,
	`included_sections` text NOT NULL,
	`available_functions` text NOT NULL,
	`max_projects` integer,
	`max_apps_per_project` integer,
	`main_color` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `catalog_plan_credit_options` (
	`plan_id` text NOT NULL,
	`duration_id` text NOT NULL,
	`id` text NOT NULL,
	`position` integer NOT NULL,
	`credits` integer,
	`price` integer,
	`is_negotiated_price` integer DEFAULT false NOT NULL,
	`is_archived` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`plan_id`, `duration_id`, `id`)
);
--> statement-breakpoint
CREATE TABLE `catalog_plan_durations` (
	`plan_id` text NOT NULL,
	`id` text NOT NULL,
	`position` integer NOT NULL,
	`months` integer NOT NULL,
	`credit_accumulation_months` real DEFAULT 0 NOT NULL,
	`credits_do_not_expire` integer DEFAULT false NOT NULL,
	`is_archived` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`plan_id`, `id`),
	FOREIGN KEY (`plan_id`) REFERENCES `catalog_paid_plans`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `catalog_poll_options` (
	`id` text PRIMARY KEY NOT NULL,
	`question_id` text NOT NULL,
	`position` integer NOT NULL,
	`label_en` text DEFAULT '' NOT NULL,
	`label_ru` text DEFAULT '' NOT NULL,
	`label_es` text DEFAULT '' NOT NULL,
	`is_custom` integer DEFAULT false NOT NULL,
	`next_question_id` text,
	FOREIGN KEY (`question_id`) REFERENCES `catalog_poll_questions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `catalog_poll_questions` (
	`id` text PRIMARY KEY NOT NULL,
	`position` integer NOT NULL,
	`title_en` text DEFAULT '' NOT NULL,
	`title_ru` text DEFAULT '' NOT NULL,
	`title_es` text DEFAULT '' NOT NULL,
	`type` text NOT NULL,
	`next_question_id` text
);
--> statement-breakpoint
CREATE TABLE `catalog_poll` (
	`id` integer PRIMARY KEY NOT NULL,
	`revision` integer NOT NULL,
	`completion_epoch` integer,
	`has_definition` integer NOT NULL,
	`title_en` text DEFAULT '' NOT NULL,
	`title_ru` text DEFAULT '' NOT NULL,
	`title_es` text DEFAULT '' NOT NULL,
	`icon_name` text DEFAULT '' NOT NULL,
	`icon_color` text,
	`background_color` text,
	`text_color` text,
	`weight` integer,
	`preview_title_en` text DEFAULT '' NOT NULL,
	`preview_title_ru` text DEFAULT '' NOT NULL,
	`preview_title_es` text DEFAULT '' NOT NULL,
	`preview_description_en` text DEFAULT '' NOT NULL,
	`preview_description_ru` text DEFAULT '' NOT NULL,
	`preview_description_es` text DEFAULT '' NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`bonus_credits` integer,
	`start_question_id` text DEFAULT '' NOT NULL
);
