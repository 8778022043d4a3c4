CREATE TABLE `executor_uses` (
	`executor` text PRIMARY KEY NOT NULL,
	`uses` integer NOT NULL,
	`first_seen_at` text NOT NULL,
	`last_used_at` text
);
--> statement-breakpoint
CREATE TABLE `mnests` (
	`src` text NOT NULL,
	`dst` text NOT NULL,
	`dst_exists` integer NOT NULL,
	`weight` real NOT NULL,
	`uses` integer NOT NULL,
	`first_used_at` text NOT NULL,
	`last_used_at` text NOT NULL,
	`decayed_at` text NOT NULL,
	`state` text NOT NULL,
	`desired_signature` text,
	PRIMARY KEY(`src`, `dst`)
);
--> statement-breakpoint
CREATE INDEX `mnests_dst_exists` ON `mnests` (`dst_exists`);