CREATE TABLE `pinned_properties` (
	`subject` text NOT NULL,
	`property` text NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pinned_properties_key` ON `pinned_properties` (`subject`,`property`);