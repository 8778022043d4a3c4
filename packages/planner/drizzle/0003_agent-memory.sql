CREATE TABLE `agent_memory` (
	`run` text NOT NULL,
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_memory_key` ON `agent_memory` (`run`,`scope`,`key`);