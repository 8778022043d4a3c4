#!/usr/bin/env node
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MetnosError } from '@metnos/executor-sdk';
import { caFingerprint, startLaptopAgent } from './agent.ts';
import { createExecutorCache } from './cache.ts';
import type { Confinement } from './confinement.ts';
import { grantFolder } from './grant.ts';
import { loadIdentity } from './identity.ts';
import { pairDevice } from './pair.ts';
import { laptopPlaces } from './places.ts';

export const LAPTOP_HELP = `metnos-laptop — run Metnos executors on this laptop for a paired Metnos server

Usage:
  metnos-laptop pair <server> <code> [--name <name>] [--grant <folder>]
                         pair with the server: <server> and <code> as \`metnos devices pair\` printed them
  metnos-laptop grant <folder>      the one folder remote executors may work in (e.g. ~/Pictures)
  metnos-laptop run [--confinement sandbox|node-permission]
                         connect and serve the server's calls until Ctrl-C (reconnects when the link drops)
  metnos-laptop status              this device, its server, its grant, its cached executors

Files: the device key, its certificate and the pinned CA in <config dir>/device (METNOS_CONFIG_DIR,
else ~/.config/metnos); the ledger, the executor cache, the trash area and the audit log in
$XDG_STATE_HOME/metnos/laptop (else ~/.local/state/metnos/laptop).
`;

/** Where the CLI writes; injected so tests can capture it. */
export interface LaptopIo {
  out(text: string): void;
  err(text: string): void;
}

const processIo: LaptopIo = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

/** Resolves at the first SIGINT or SIGTERM. */
function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

/** Runs one command; returns the exit code. Never throws. */
export async function runLaptopCli(argv: string[], io: LaptopIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  const places = laptopPlaces({});
  try {
    switch (command) {
      case 'pair': {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: { name: { type: 'string' }, grant: { type: 'string' } },
        });
        if (positionals.length !== 2) {
          io.err(LAPTOP_HELP);
          return 2;
        }
        const paired = await pairDevice({
          places,
          server: positionals[0]!,
          code: positionals[1]!,
          name: values.name ?? hostname().slice(0, 64),
        });
        io.out(`paired as ${paired.name} (${paired.device}) with ${paired.server}`);
        if (values.grant) {
          const folder = await grantFolder(places, await loadIdentity(places), values.grant);
          io.out(`granted ${folder} to remote executors`);
        }
        return 0;
      }
      case 'grant': {
        if (rest.length !== 1) {
          io.err(LAPTOP_HELP);
          return 2;
        }
        const folder = await grantFolder(places, await loadIdentity(places), rest[0]!);
        io.out(`granted ${folder} to remote executors`);
        return 0;
      }
      case 'status': {
        const identity = await loadIdentity(places);
        const cache = createExecutorCache({
          dir: join(places.stateDir, 'cache'),
          trustedKeys: identity.keys,
        });
        io.out(
          [
            `device ${identity.name} (${identity.device}), paired ${identity.pairedAt}`,
            `server ${identity.server}, CA ${caFingerprint(identity)}`,
            `grant ${identity.grant ?? 'none: run `metnos-laptop grant <folder>`'}`,
            ...(await cache.list()).map(
              (executor) => `cached ${executor.name}@${executor.version} ${executor.code}`,
            ),
          ].join('\n'),
        );
        return 0;
      }
      case 'run': {
        const { values } = parseArgs({ args: rest, options: { confinement: { type: 'string' } } });
        const confinement = values.confinement as Confinement | undefined;
        if (confinement !== undefined && confinement !== 'sandbox' && confinement !== 'node-permission') {
          io.err('--confinement is sandbox or node-permission');
          return 2;
        }
        const agent = await startLaptopAgent({
          places,
          ...(confinement ? { confinement } : {}),
          log: (line) => io.err(`metnos-laptop: ${line}`),
        });
        io.out(`metnos-laptop: serving ${agent.device} (Ctrl-C stops)`);
        const ended = await Promise.race([agent.stopped, stopSignal().then(() => undefined)]);
        await agent.stop();
        if (ended && ended.reason !== 'stopped') {
          io.err(`metnos-laptop: ${ended.message}`);
          return 3;
        }
        return 0;
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(LAPTOP_HELP);
        return command === undefined ? 2 : 0;
      case '--version':
        io.out('metnos-laptop 0.1.0');
        return 0;
      default:
        io.err(`unknown command "${command}"\n\n${LAPTOP_HELP}`);
        return 2;
    }
  } catch (error) {
    if (MetnosError.isInstance(error)) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    if ((error as { code?: string })?.code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(error as Error).message}\n\n${LAPTOP_HELP}`);
      return 2;
    }
    io.err(`unexpected error: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  }
}

if (import.meta.main) {
  process.exitCode = await runLaptopCli(process.argv.slice(2));
}
