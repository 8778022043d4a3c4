CREATE TABLE `devices` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`public_key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`executors` text NOT NULL,
	`state` text NOT NULL,
	`platform` text,
	`tier` text,
	`created_at` integer NOT NULL,
	`last_seen_at` integer,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE TABLE `device_pairings` (
	`lookup` text PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`executors` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`device` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `device_calls` (
	`key` text PRIMARY KEY NOT NULL,
	`trace` text NOT NULL,
	`device` text NOT NULL,
	`executor` text NOT NULL,
	`version` text,
	`args` text NOT NULL,
	`caller` text NOT NULL,
	`state` text NOT NULL,
	`result` text,
	`before` text,
	`after` text,
	`laptop_audit` text,
	`undo_of` text,
	`undone_by` text,
	`created_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `device_calls_trace` ON `device_calls` (`trace`);