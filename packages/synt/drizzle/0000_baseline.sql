CREATE TABLE `synt_model_calls` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`stage` text NOT NULL,
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`tier` text NOT NULL,
	`prompt_hash` text NOT NULL,
	`answer` text,
	`error` text,
	`input_tokens` integer,
	`output_tokens` integer,
	`at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `synt_model_calls_run` ON `synt_model_calls` (`run_id`);--> statement-breakpoint
CREATE TABLE `synt_proposals` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`key` text NOT NULL,
	`state` text NOT NULL,
	`title` text NOT NULL,
	`motivation` text NOT NULL,
	`evidence` text NOT NULL,
	`run_id` text,
	`note` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`decided_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `synt_proposals_key_unique` ON `synt_proposals` (`key`);--> statement-breakpoint
CREATE INDEX `synt_proposals_state` ON `synt_proposals` (`state`);--> statement-breakpoint
CREATE TABLE `synt_run_stages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`stage` text NOT NULL,
	`outcome` text NOT NULL,
	`note` text NOT NULL,
	`detail` text,
	`at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `synt_run_stages_run` ON `synt_run_stages` (`run_id`);--> statement-breakpoint
CREATE TABLE `synt_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`proposal_id` text NOT NULL,
	`state` text NOT NULL,
	`stage` text NOT NULL,
	`waiting_for` text,
	`reason` text,
	`draft` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
