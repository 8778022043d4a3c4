CREATE TABLE `recognizer_calibrations` (
	`space` text NOT NULL,
	`embedder_id` text NOT NULL,
	`threshold` real NOT NULL,
	`margin` real NOT NULL,
	`mix` real NOT NULL,
	`examples` integer NOT NULL,
	`correct_reuse` real NOT NULL,
	`wrong_reuse` real NOT NULL,
	`false_hits` real NOT NULL,
	`bounded` integer NOT NULL,
	`calibrated_at` text NOT NULL,
	PRIMARY KEY(`space`, `embedder_id`)
);
--> statement-breakpoint
ALTER TABLE `autopaths` ADD `qualifiers` text;--> statement-breakpoint
ALTER TABLE `autopaths` ADD `pinned` text;--> statement-breakpoint
ALTER TABLE `clusters` ADD `embedder_id` text;--> statement-breakpoint
ALTER TABLE `fastpaths` ADD `intent_hash` text;--> statement-breakpoint
ALTER TABLE `fastpaths` ADD `plan_hash` text;--> statement-breakpoint
ALTER TABLE `fastpaths` ADD `qualifiers` text;--> statement-breakpoint
ALTER TABLE `fastpaths` ADD `pinned` text;--> statement-breakpoint
ALTER TABLE `fastpaths` ADD `embedder_id` text;