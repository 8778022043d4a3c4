CREATE TABLE `terminator_gaps` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`cause` text NOT NULL,
	`signature` text NOT NULL,
	`example` text NOT NULL,
	`detail` text NOT NULL,
	`count` integer NOT NULL,
	`first_seen` text NOT NULL,
	`last_seen` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `terminator_gaps_key` ON `terminator_gaps` (`cause`,`signature`);--> statement-breakpoint
CREATE TABLE `scratchpad_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`turn_id` text NOT NULL,
	`kind` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`content` text NOT NULL,
	`metadata` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `scratchpad_entries_turn` ON `scratchpad_entries` (`turn_id`);