import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HostService } from '@metnos/executor-sdk';
import { createRemindersService, Scheduler } from '@metnos/server';
import type { AppConfig } from './config.ts';

/** Channel names a reminder may name: `telegram`, or `telegram:<chat id>` (the channel still checks the chat). */
const TELEGRAM_CHANNEL = /^telegram(?::-?\d{1,20})?$/;

/**
 * Where reminders go: with `[channels.telegram]` in metnos.toml, `telegram`
 * by default and any `telegram:<chat id>`; without it, nowhere (a reminder
 * is recorded and shown in `metnos schedule list`, and fires with no delivery).
 */
export function reminderChannels(config: AppConfig): {
  defaultChannel?: string;
  allowChannel: (name: string) => boolean;
} {
  if (!config.channels?.telegram) return { allowChannel: () => false };
  return { defaultChannel: 'telegram', allowChannel: (name) => TELEGRAM_CHANNEL.test(name) };
}

/**
 * The `reminders` host service of a CLI command (`metnos ask`, `feedback`,
 * `schedule run-now`): reminders go to `<data>/scheduler.sqlite`, the store
 * `metnos schedule` lists and `metnos serve` fires. The store is opened only
 * when an executor asks for a reminder, and `close()` closes it.
 *
 * @example
 * const reminders = cliReminders(data, config);
 * const engine = createEngine({ ...settings, hostServices: { reminders: reminders.service } });
 * reminders.close();
 */
export function cliReminders(data: string, config: AppConfig): { service: HostService; close(): void } {
  let scheduler: Scheduler | undefined;
  const service = createRemindersService({
    scheduler: () => {
      mkdirSync(data, { recursive: true, mode: 0o700 });
      scheduler ??= new Scheduler({
        store: join(data, 'scheduler.sqlite'),
        fire: async () => ({ ok: false, error: 'this process does not fire schedules' }),
      });
      return scheduler;
    },
    ...reminderChannels(config),
  });
  return {
    service,
    close: () => {
      if (scheduler?.store.db.open) scheduler.store.close();
    },
  };
}
