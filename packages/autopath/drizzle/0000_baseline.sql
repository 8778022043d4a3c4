CREATE TABLE `anti_autopaths` (
	`id` text PRIMARY KEY NOT NULL,
	`intent_hash` text NOT NULL,
	`plan_hash` text NOT NULL,
	`reason` text NOT NULL,
	`failures` integer NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `anti_autopaths_intent_hash_plan_hash_unique` ON `anti_autopaths` (`intent_hash`,`plan_hash`);--> statement-breakpoint
CREATE TABLE `autopaths` (
	`id` text PRIMARY KEY NOT NULL,
	`cluster_id` text NOT NULL,
	`intent_hash` text NOT NULL,
	`plan_hash` text NOT NULL,
	`template` text NOT NULL,
	`slots` text NOT NULL,
	`tools` text NOT NULL,
	`uses` integer NOT NULL,
	`successes` integer NOT NULL,
	`failures` integer NOT NULL,
	`total_latency_ms` real NOT NULL,
	`feedback_up` integer NOT NULL,
	`feedback_down` integer NOT NULL,
	`score` real NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `autopaths_intent` ON `autopaths` (`intent_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `autopaths_cluster_id_plan_hash_unique` ON `autopaths` (`cluster_id`,`plan_hash`);--> statement-breakpoint
CREATE TABLE `clusters` (
	`id` text PRIMARY KEY NOT NULL,
	`centroid` blob NOT NULL,
	`members` integer NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `fastpaths` (
	`id` text PRIMARY KEY NOT NULL,
	`fingerprint` text NOT NULL,
	`request` text NOT NULL,
	`template` text NOT NULL,
	`slots` text NOT NULL,
	`tools` text NOT NULL,
	`vector` blob,
	`uses` integer NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `fastpaths_fingerprint_unique` ON `fastpaths` (`fingerprint`);--> statement-breakpoint
CREATE TABLE `memory_vectors` (
	`id` text PRIMARY KEY NOT NULL,
	`space` text NOT NULL,
	`text` text NOT NULL,
	`label` text,
	`embedder_id` text NOT NULL,
	`vector` blob NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `memory_vectors_space` ON `memory_vectors` (`space`);--> statement-breakpoint
CREATE TABLE `observations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`ts` text NOT NULL,
	`turn_id` text NOT NULL,
	`request` text NOT NULL,
	`intent_hash` text,
	`plan_hash` text,
	`plan` text,
	`layer` text NOT NULL,
	`latency_ms` real NOT NULL,
	`vector` blob,
	`outcome` text NOT NULL,
	`error_class` text,
	`feedback` text
);
--> statement-breakpoint
CREATE INDEX `observations_turn` ON `observations` (`turn_id`);--> statement-breakpoint
-- Written by hand: drizzle's schema has no triggers (see observations in src/stores/schema.ts).
CREATE TRIGGER `observations_append_only` BEFORE DELETE ON `observations`
BEGIN SELECT RAISE(ABORT, 'observations are append-only'); END;
