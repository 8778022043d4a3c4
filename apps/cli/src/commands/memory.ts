import { parseArgs } from 'node:util';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { dataDir, readAppConfig } from '../config.ts';
import { CliFailure, type CliIo, table } from '../output.ts';
import { storePath } from '../stores.ts';
import { resolvePlace } from '../workspace.ts';

export const MEMORY_HELP = `metnos memory — what Metnos remembers, and forgetting it by hand

Usage:
  metnos memory list                 remembered plans (L0 fast paths) and learned autopaths
  metnos memory forget <id>          remove one fast path by its id
  metnos memory age [--days N]       drop fast paths never reused after N days (default 30)
`;

export async function memoryCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { days: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [sub, target] = positionals;
  if (values.help || !sub) {
    io.out(MEMORY_HELP);
    return values.help ? 0 : 2;
  }
  const place = await resolvePlace({});
  const data = dataDir(place, readAppConfig(place));
  const fastpath = createFastpathStore({ path: storePath(data, 'fastpath') });
  try {
    switch (sub) {
      case 'list': {
        const entries = fastpath.list();
        io.out(
          entries.length === 0
            ? 'no remembered plans yet'
            : table([
                ['ID', 'USES', 'TOOLS', 'REQUEST'],
                ...entries.map((entry) => [
                  entry.id,
                  String(entry.uses),
                  entry.tools.map((tool) => `${tool.name}@${tool.version}`).join(','),
                  entry.request.slice(0, 60),
                ]),
              ]),
        );
        const autopath = createAutopathStore({ path: storePath(data, 'autopath') });
        try {
          const learned = autopath.list().filter((entry) => entry.status !== 'candidate');
          if (learned.length > 0) {
            io.out('\nautopaths:');
            io.out(
              table([
                ['STATUS', 'USES', 'SCORE', 'TOOLS'],
                ...learned.map((entry) => [
                  entry.status,
                  String(entry.uses),
                  entry.score.toFixed(2),
                  entry.tools.map((tool) => tool.name).join(','),
                ]),
              ]),
            );
          }
        } finally {
          autopath.close();
        }
        return 0;
      }
      case 'forget': {
        if (!target) throw new CliFailure('usage: metnos memory forget <id>', 2);
        const removed = fastpath.remove(target);
        if (!removed) throw new CliFailure(`no remembered plan ${target} (metnos memory list shows them)`);
        io.out(`forgot ${target}`);
        return 0;
      }
      case 'age': {
        const days = values.days === undefined ? 30 : Number(values.days);
        if (!Number.isFinite(days) || days < 0) throw new CliFailure('--days takes a number of days', 2);
        const removed = fastpath.age({ neverReusedDays: days });
        io.out(`dropped ${removed.length} remembered plan(s)`);
        return 0;
      }
      default:
        throw new CliFailure(`unknown memory command "${sub}"\n\n${MEMORY_HELP}`, 2);
    }
  } finally {
    fastpath.close();
  }
}
