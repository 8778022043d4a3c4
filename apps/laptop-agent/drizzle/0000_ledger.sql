CREATE TABLE `laptop_calls` (
	`key` text PRIMARY KEY NOT NULL,
	`trace` text NOT NULL,
	`kind` text NOT NULL,
	`executor` text NOT NULL,
	`version` text,
	`digest` text NOT NULL,
	`args_digest` text NOT NULL,
	`target` text,
	`state` text NOT NULL,
	`runs` integer DEFAULT 0 NOT NULL,
	`plan` text,
	`outcome` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `laptop_calls_trace` ON `laptop_calls` (`trace`);--> statement-breakpoint
CREATE TABLE `laptop_nonces` (
	`nonce` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `laptop_operations` (
	`key` text NOT NULL,
	`seq` integer NOT NULL,
	`op` text NOT NULL,
	`source` text NOT NULL,
	`target` text,
	`trash` text,
	`size` integer NOT NULL,
	`hash` text NOT NULL,
	`identity` text NOT NULL,
	`replaced_size` integer,
	`replaced_hash` text,
	`after_hash` text,
	`state` text NOT NULL,
	PRIMARY KEY(`key`, `seq`)
);
