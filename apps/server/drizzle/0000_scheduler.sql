CREATE TABLE `scheduler_leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`expires_at` integer NOT NULL,
	`acquired_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `scheduler_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`schedule_id` text NOT NULL,
	`slot_at` integer,
	`event` text NOT NULL,
	`at` integer NOT NULL,
	`holder` text,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `scheduler_runs_schedule` ON `scheduler_runs` (`schedule_id`,`id`);--> statement-breakpoint
CREATE TABLE `scheduler_schedules` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text,
	`target` text NOT NULL,
	`cadence` text NOT NULL,
	`timezone` text NOT NULL,
	`channel` text,
	`count` integer,
	`expiry` integer,
	`on_failure` text NOT NULL,
	`max_consecutive_failures` integer,
	`state` text NOT NULL,
	`closed_reason` text,
	`fired` integer DEFAULT 0 NOT NULL,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`anchor` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `scheduler_schedules_name` ON `scheduler_schedules` (`name`);--> statement-breakpoint
CREATE TABLE `scheduler_slots` (
	`schedule_id` text NOT NULL,
	`slot_at` integer NOT NULL,
	`status` text NOT NULL,
	`holder` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`claimed_at` integer NOT NULL,
	`finished_at` integer,
	`summary` text,
	`error` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `scheduler_slots_key` ON `scheduler_slots` (`schedule_id`,`slot_at`);--> statement-breakpoint
CREATE INDEX `scheduler_slots_status` ON `scheduler_slots` (`status`);--> statement-breakpoint
CREATE TRIGGER `scheduler_runs_no_update` BEFORE UPDATE ON `scheduler_runs` BEGIN SELECT RAISE(ABORT, 'scheduler_runs is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `scheduler_runs_no_delete` BEFORE DELETE ON `scheduler_runs` BEGIN SELECT RAISE(ABORT, 'scheduler_runs is append-only'); END;
