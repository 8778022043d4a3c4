import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveConfigDir } from '@metnos/executor-sdk';
import { createPairingCode, PAIRING_LIFETIME_MS, ServerTokenError, serverToken } from '@metnos/server';
import { dataDir, readAppConfig } from '../config.ts';
import { deviceAddress, devicesConfig, openDeviceStore } from '../devices.ts';
import { CliFailure, type CliIo, table } from '../output.ts';
import { resolvePlace } from '../workspace.ts';

export const DEVICES_HELP = `metnos devices — the laptops that run executors for this server

Usage:
  metnos devices pair --executor <name> [--executor <name>…]
                                   a one-time code (ten minutes, one pairing) for a new device that may
                                   run these executors; on the laptop: metnos-laptop pair <address> <code>
  metnos devices list [--json]     paired devices: name, id, state, what they may run, when last seen
  metnos devices rename <device> <name>
  metnos devices revoke <device>   refuse the device from now on: its calls, its link, its certificate
  metnos devices allow <device> <executor>…   the executors the device may run (replaces the list)
  metnos devices call <device> <executor> [--args '<json>'] [--server <url>]
                                   run an executor on the device through the running \`metnos serve\`

<device> is an id (dev_…) or a name. The device channel runs inside \`metnos serve\` when metnos.toml
has [devices] listen = "0.0.0.0:8788" (and address = "tls://<what laptops dial>:8788"); its CA is in
<config dir>/devices, the devices in devices.sqlite in the data dir.
`;

export const UNDO_HELP = `metnos undo <trace-id> [--server <url>]

Undoes the file changes the remote call of a trace made on its laptop, from its before/after
manifest: moves back, files from the laptop's trash area back in place. Refused, with the reason and
nothing changed, when a file the call left has changed since or a path it freed is taken again.
Needs the running \`metnos serve\` (its device channel) and its bearer token.
`;

export const AUDIT_HELP = `metnos audit <trace-id> [--files] [--json]

The audit lines of a trace: the server's (who called, when, the outcome) and, for a remote call, the
laptop's (the paths it touched and their hashes after), with the before/after manifest recorded on
the server. --files lists every file; --json prints the lines as they are.
`;

async function place(options: { executors?: string; workspace?: string; 'config-dir'?: string }) {
  const where = await resolvePlace({
    executors: options.executors,
    workspace: options.workspace,
    configDir: options['config-dir'],
  });
  const config = readAppConfig(where);
  return { place: where, data: dataDir(where, config), devices: devicesConfig(where) };
}

const common = {
  executors: { type: 'string' },
  workspace: { type: 'string' },
  'config-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Calls the running server's API with its bearer token; a refusal becomes a CliFailure with its message. */
async function serverApi(
  options: { server?: string; 'config-dir'?: string },
  path: string,
  body: unknown,
): Promise<unknown> {
  let token: string;
  try {
    token = serverToken(resolveConfigDir(options['config-dir']));
  } catch (error) {
    if (error instanceof ServerTokenError) throw new CliFailure(error.message, 2);
    throw error;
  }
  const base = (options.server ?? 'http://127.0.0.1:8787').replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new CliFailure(
      `cannot reach the server at ${base} (is \`metnos serve\` running?): ${(error as Error).message}`,
    );
  }
  const answer = (await response.json().catch(() => ({}))) as { message?: string };
  if (!response.ok) throw new CliFailure(`the server refused: ${answer.message ?? response.status}`);
  return answer;
}

/** How a remote call's outcome reads on a terminal; exit 1 when it failed. */
function showOutcome(
  io: CliIo,
  outcome: {
    trace: string;
    result: {
      ok: boolean;
      error?: { class: string; message: string };
      metadata?: { applied?: number };
      isolation?: { tier: string };
    };
    manifest?: { before: unknown[]; after: unknown[] };
    replayed?: boolean;
  },
): number {
  const { result } = outcome;
  if (!result.ok) {
    io.err(`error: ${result.error?.class}: ${result.error?.message}`);
    if (outcome.trace) io.err(`trace ${outcome.trace}`);
    return 1;
  }
  io.out(
    `ok: trace ${outcome.trace}${result.metadata?.applied !== undefined ? `, ${result.metadata.applied} file operations applied` : ''}${result.isolation ? `, isolation ${result.isolation.tier}` : ''}${outcome.replayed ? ' (answered from the laptop ledger)' : ''}`,
  );
  if (outcome.manifest)
    io.out(
      `manifest: ${outcome.manifest.before.length} files before, ${outcome.manifest.after.length} after; undo with: metnos undo ${outcome.trace}`,
    );
  return 0;
}

export async function devicesCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      ...common,
      executor: { type: 'string', multiple: true },
      args: { type: 'string' },
      server: { type: 'string' },
    },
  });
  if (sub === undefined || sub === 'help' || values.help) {
    io.out(DEVICES_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'call') {
    const [device, executor, ...extra] = positionals;
    if (!device || !executor || extra.length > 0) throw new CliFailure(DEVICES_HELP, 2);
    let args: unknown = {};
    try {
      args = values.args === undefined ? {} : JSON.parse(values.args);
    } catch {
      throw new CliFailure('--args is not JSON', 2);
    }
    const outcome = await serverApi(values, `/api/devices/${encodeURIComponent(device)}/calls`, {
      executor,
      args,
    });
    if (values.json) {
      io.out(JSON.stringify(outcome, null, 2));
      return 0;
    }
    return showOutcome(io, outcome as Parameters<typeof showOutcome>[1]);
  }
  const where = await place(values);
  const store = openDeviceStore(where.data);
  try {
    switch (sub) {
      case 'pair': {
        const executors = values.executor ?? [];
        if (executors.length === 0 || positionals.length > 0)
          throw new CliFailure(
            'name what the device may run: metnos devices pair --executor photo_organize',
            2,
          );
        const { code, expiresAt } = createPairingCode(store, { executors });
        const address = deviceAddress(where.devices);
        io.out(
          `pairing code: ${code}  (one pairing, until ${new Date(expiresAt).toISOString()}, ${PAIRING_LIFETIME_MS / 60_000} minutes)`,
        );
        io.out(`may run: ${executors.join(', ')}`);
        io.out(`on the laptop: metnos-laptop pair ${address ?? 'tls://<this server>:8788'} ${code}`);
        if (!where.devices.listen)
          io.err('note: no [devices] listen in metnos.toml: `metnos serve` runs no device channel yet');
        return 0;
      }
      case 'list': {
        const devices = store.devices();
        if (values.json) {
          io.out(
            JSON.stringify(
              devices.map(({ publicKey: _key, ...device }) => device),
              null,
              2,
            ),
          );
          return 0;
        }
        if (devices.length === 0) {
          io.out('no paired devices (metnos devices pair --executor <name> makes a code)');
          return 0;
        }
        const when = (at: number | null) =>
          at === null ? '-' : new Date(at).toISOString().slice(0, 16).replace('T', ' ');
        io.out(
          table([
            ['ID', 'NAME', 'STATE', 'MAY RUN', 'PLATFORM', 'TIER', 'LAST SEEN'],
            ...devices.map((device) => [
              device.id,
              device.name,
              device.state,
              device.executors.join(','),
              device.platform ?? '-',
              device.tier ?? '-',
              when(device.lastSeenAt),
            ]),
          ]),
        );
        return 0;
      }
      case 'rename': {
        const [id, name, ...extra] = positionals;
        if (!id || !name || extra.length > 0 || name.length > 64)
          throw new CliFailure('metnos devices rename <device> <name>', 2);
        const device = store.find(id);
        if (!device || !store.rename(device.id, name)) throw new CliFailure(`no device ${id}`);
        io.out(`${device.id} is now ${name}`);
        return 0;
      }
      case 'revoke': {
        const [id, ...extra] = positionals;
        if (!id || extra.length > 0) throw new CliFailure('metnos devices revoke <device>', 2);
        const device = store.find(id);
        if (!device) throw new CliFailure(`no device ${id}`);
        if (!store.revoke(device.id)) {
          io.out(`${device.name} (${device.id}) was revoked already`);
          return 0;
        }
        io.out(
          `revoked ${device.name} (${device.id}): a running server refuses its next frame and every call from now on`,
        );
        return 0;
      }
      case 'allow': {
        const [id, ...executors] = positionals;
        if (!id || executors.length === 0)
          throw new CliFailure('metnos devices allow <device> <executor>…', 2);
        const device = store.find(id);
        if (!device || !store.allow(device.id, executors)) throw new CliFailure(`no device ${id}`);
        io.out(`${device.name} may run: ${executors.join(', ')}`);
        return 0;
      }
      default:
        throw new CliFailure(`unknown devices command "${sub}"\n\n${DEVICES_HELP}`, 2);
    }
  } finally {
    store.close();
  }
}

export async function undoCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...common, server: { type: 'string' } },
  });
  if (values.help) {
    io.out(UNDO_HELP);
    return 0;
  }
  if (positionals.length !== 1 || !/^[A-Za-z0-9_.:-]{1,128}$/.test(positionals[0]!))
    throw new CliFailure(UNDO_HELP, 2);
  const outcome = await serverApi(values, '/api/devices/undo', { trace: positionals[0] });
  if (values.json) {
    io.out(JSON.stringify(outcome, null, 2));
    return 0;
  }
  return showOutcome(io, outcome as Parameters<typeof showOutcome>[1]);
}

/** The lines of `trace` in the audit tree's executors folder, over the last 31 days' files. */
async function traceLines(workspace: string, trace: string): Promise<Array<Record<string, unknown>>> {
  const dir = join(workspace, '.audit', 'executors');
  const names = (await readdir(dir).catch(() => [] as string[]))
    .filter((name) => /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(name))
    .sort()
    .slice(-31);
  const lines: Array<Record<string, unknown>> = [];
  for (const name of names)
    for (const line of (await readFile(join(dir, name), 'utf8')).split('\n')) {
      if (!line.includes(trace)) continue;
      try {
        const value = JSON.parse(line) as Record<string, unknown>;
        if (value.trace_id === trace) lines.push(value);
      } catch {
        // a partial last line is skipped
      }
    }
  return lines.sort((a, b) => String(a.ts).localeCompare(String(b.ts)));
}

export async function auditCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...common, files: { type: 'boolean' } },
  });
  if (values.help) {
    io.out(AUDIT_HELP);
    return 0;
  }
  const trace = positionals[0];
  if (positionals.length !== 1 || !trace || !/^[A-Za-z0-9_.:-]{1,128}$/.test(trace))
    throw new CliFailure(AUDIT_HELP, 2);
  const where = await place(values);
  const lines = await traceLines(where.place.workspace, trace);
  const store = openDeviceStore(where.data);
  let calls: ReturnType<typeof store.callsOfTrace>;
  try {
    calls = store.callsOfTrace(trace);
  } finally {
    store.close();
  }
  if (values.json) {
    io.out(JSON.stringify({ trace, lines, calls }, null, 2));
    return 0;
  }
  if (lines.length === 0 && calls.length === 0)
    throw new CliFailure(`no audit line of trace ${trace} in ${join(where.place.workspace, '.audit')}`);
  io.out(`trace ${trace}`);
  for (const line of lines) {
    const side = String(line.side ?? 'server');
    const remote = line.remote as
      | { device?: string; name?: string; key?: string; tier?: string; before?: number; after?: number }
      | undefined;
    const touched = Array.isArray(line.touched)
      ? (line.touched as Array<{ op: string; from?: string; path: string; hash?: string }>)
      : [];
    const head = [
      side.padEnd(6),
      String(line.ts),
      `${line.executor}${line.version ? `@${line.version}` : ''}`,
      `exit ${line.exit}${line.error_class ? ` (${line.error_class})` : ''}`,
    ];
    if (side === 'server') {
      head.push(`caller ${JSON.stringify(line.caller)}`);
      if (remote)
        head.push(
          `device ${remote.name ?? '?'} (${remote.device})`,
          `tier ${remote.tier ?? '-'}`,
          `files ${remote.before ?? 0} before, ${remote.after ?? 0} after`,
        );
    } else head.push(`tier ${line.tier ?? '-'}`, `touched ${touched.length}`);
    io.out(head.join('  '));
    for (const entry of values.files ? touched : touched.slice(0, 5))
      io.out(
        `        ${entry.op} ${entry.from ? `${entry.from} -> ` : ''}${entry.path}${entry.hash ? `  ${entry.hash}` : ''}`,
      );
    if (!values.files && touched.length > 5)
      io.out(`        … ${touched.length - 5} more (--files shows all)`);
  }
  for (const call of calls)
    io.out(
      `recorded ${call.undoOf ? `undo of ${call.undoOf}` : call.executor} ${call.key}: ${call.state}, ${call.before?.length ?? 0} files before, ${call.after?.length ?? 0} after${call.undoneBy ? `, undone by ${call.undoneBy}` : ''}`,
    );
  return 0;
}
