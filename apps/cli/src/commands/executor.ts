import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createAuditLog,
  createCatalog,
  createInvoker,
  createKeyStore,
  type ExecutorRunner,
  jsonTextDepth,
  MAX_JSON_DEPTH,
  scaffoldExecutor,
  signExecutor,
  VerificationError,
  verifyExecutor,
} from '@metnos/executor-sdk';
import { CliFailure, type CliIo, table } from '../output.ts';
import {
  type CliPlace,
  placeCatalog,
  placeProtection,
  resolvePlace,
  trustedKeys,
  userPath,
} from '../workspace.ts';

export const EXECUTOR_HELP = `metnos executor — author, sign, verify and run executors

Usage:
  metnos executor new <name> [--in <dir>]        scaffold a working, signable executor in <dir>/<name>
  metnos executor sign <dir> [--key <name>]      write profile.lock and manifest.sig with your key
  metnos executor verify <dir>                   verify one executor folder or a whole executors folder;
                                                 exits non-zero with the reason on any failure
  metnos executor list                           every version with its state, and reasons
  metnos executor test <name|dir>                run the birth tests (tests/*.test.ts) through the sandbox
  metnos executor run <name> --args '<json>'     one sandboxed invocation; prints the result JSON
  metnos executor archive <name> [version]       move to executors/.archive (no longer loaded)
  metnos executor rehabilitate <name> <version>  bring an archived or quarantined version back after re-verifying
  metnos executor promote <name> <version>       make <version> the default (writes CURRENT)

Options:
  --executors <dir>    the executors folder (default: metnos.toml's, else ./executors, else .)
  --workspace <dir>    the workspace root for run (default: metnos.toml's root, else .)
  --key <name>         signing key name for sign (default "default")
  --config <json>      per-instance settings passed to the executor as ctx.config (run)
  --config-dir <dir>   Metnos config dir (default $METNOS_CONFIG_DIR or ~/.config/metnos)
`;

async function hasManifest(dir: string): Promise<boolean> {
  return stat(join(dir, 'manifest.toml')).then(
    () => true,
    () => false,
  );
}

/** JSON from the command line: refused when it is not JSON or nests deeper than the one limit. */
function parseJson(text: string, what: string): unknown {
  if (jsonTextDepth(text) > MAX_JSON_DEPTH) {
    throw new CliFailure(
      `${what} nests deeper than ${MAX_JSON_DEPTH} levels, the limit for executor input`,
      2,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliFailure(`${what} is not valid JSON: ${(error as Error).message}`, 2);
  }
}

async function openCatalog(place: CliPlace, ledger: 'update' | 'check' = 'update') {
  const keys = await trustedKeys(place, place.executors);
  if (keys.length === 0) {
    throw new CliFailure(
      'no trusted keys: run `metnos keys init`, `metnos keys trust <file.pub>`, or list keys in metnos.toml',
    );
  }
  const catalog = await placeCatalog(place, keys, ledger);
  const report = await catalog.load();
  return { catalog, report, keys };
}

/** The sandbox runner; every CLI invocation and birth test goes through it. */
async function sandboxRunner(): Promise<ExecutorRunner> {
  const { createSandboxRunner } = await import('@metnos/sandbox');
  return createSandboxRunner();
}

export async function executorCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      in: { type: 'string' },
      key: { type: 'string', default: 'default' },
      args: { type: 'string' },
      config: { type: 'string' },
      executors: { type: 'string' },
      workspace: { type: 'string' },
      'config-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [sub, target, extra] = positionals;
  if (values.help || !sub) {
    io.out(EXECUTOR_HELP);
    return sub || values.help ? 0 : 2;
  }
  const place = await resolvePlace({
    executors: values.executors,
    workspace: values.workspace,
    configDir: values['config-dir'],
  });

  switch (sub) {
    case 'new': {
      if (!target) throw new CliFailure('usage: metnos executor new <name> [--in <dir>]', 2);
      const parent = values.in ? userPath(place, values.in) : place.config ? place.executors : place.cwd;
      const dir = await scaffoldExecutor({ parent, name: target });
      io.out(
        `created ${dir}\n  next: metnos executor sign ${dir}\n        metnos executor test ${dir}\n        metnos executor run ${target} --args '{"name":"Ada"}'`,
      );
      return 0;
    }
    case 'sign': {
      if (!target) throw new CliFailure('usage: metnos executor sign <dir> [--key <name>]', 2);
      const key = await createKeyStore({ configDir: values['config-dir'] }).load(values.key);
      const result = await signExecutor(userPath(place, target), key);
      io.out(
        `signed ${result.name}@${result.version} with ${result.keyId}\n  profile.lock ${result.profileLock}`,
      );
      return 0;
    }
    case 'verify': {
      const dir = userPath(place, target ?? place.executors);
      const keys = await trustedKeys(place, dir);
      if (await hasManifest(dir)) {
        try {
          const executor = await verifyExecutor(dir, { trustedKeys: keys });
          io.out(`ok  ${executor.name}@${executor.version}  signed by ${executor.keyId}`);
          return 0;
        } catch (error) {
          if (!VerificationError.isInstance(error)) throw error;
          io.err(
            `FAIL  ${dir}\n  reason: ${error.reason}${error.artefact ? `\n  artefact: ${error.artefact}` : ''}\n  ${error.message}`,
          );
          return 1;
        }
      }
      const stateDir = await mkdtemp(join(tmpdir(), 'metnos-verify-'));
      try {
        const catalog = createCatalog({ root: dir, trustedKeys: keys, stateDir, ledger: 'check' });
        const report = await catalog.load();
        for (const executor of report.loaded) io.out(`ok    ${executor.name}@${executor.version}`);
        for (const entry of report.quarantined) {
          io.err(
            `FAIL  ${entry.name}@${entry.version ?? '?'}  ${entry.reason}${entry.artefact ? ` (${entry.artefact})` : ''}: ${entry.message}`,
          );
        }
        io.out(`${report.loaded.length} valid, ${report.quarantined.length} refused`);
        return report.quarantined.length === 0 && report.loaded.length > 0 ? 0 : 1;
      } finally {
        await rm(stateDir, { recursive: true, force: true });
      }
    }
    case 'list': {
      const { catalog } = await openCatalog(place);
      const rows = catalog.list();
      if (rows.length === 0) {
        io.out(`no executors in ${place.executors}`);
        return 0;
      }
      io.out(
        table([
          ['NAME', 'VERSION', 'STATE', 'DEFAULT', 'REASON / SUMMARY'],
          ...rows.map((row) => [
            row.name,
            row.version,
            row.state,
            row.current ? '*' : '',
            row.state === 'active' || row.state === 'seed' ? (row.summary ?? '') : (row.reason ?? ''),
          ]),
        ]),
      );
      return 0;
    }
    case 'run': {
      if (!target) throw new CliFailure(`usage: metnos executor run <name> --args '<json>'`, 2);
      const args = parseJson(values.args ?? '{}', '--args');
      const config = values.config
        ? (parseJson(values.config, '--config') as Record<string, unknown>)
        : undefined;
      const { catalog } = await openCatalog(place);
      const audit = createAuditLog({ workspace: place.workspace });
      const invoker = createInvoker({
        catalog,
        runner: await sandboxRunner(),
        audit,
        protect: placeProtection(place),
      });
      const result = await invoker.invoke(target, args, {
        workspace: place.workspace,
        caller: { kind: 'cli' },
        config,
        version: extra,
      });
      io.out(JSON.stringify(result, null, 2));
      return result.ok ? 0 : 1;
    }
    case 'test': {
      if (!target) throw new CliFailure('usage: metnos executor test <name|dir>', 2);
      const direct = userPath(place, target);
      const dir = (await hasManifest(direct)) ? direct : join(place.executors, target);
      if (!(await hasManifest(dir))) throw new CliFailure(`no executor at ${direct} or ${dir}`);
      const { runBirthTests } = await import('../birth-tests.ts');
      return runBirthTests(dir, io);
    }
    case 'archive': {
      if (!target) throw new CliFailure('usage: metnos executor archive <name> [version]', 2);
      const { catalog } = await openCatalog(place);
      const moved = await catalog.archive(target, extra);
      io.out(`archived ${moved.join(', ')} into ${join(place.executors, '.archive')}`);
      return 0;
    }
    case 'rehabilitate': {
      if (!target || !extra) throw new CliFailure('usage: metnos executor rehabilitate <name> <version>', 2);
      const { catalog } = await openCatalog(place);
      const executor = await catalog.rehabilitate(target, extra);
      io.out(`rehabilitated ${executor.name}@${executor.version}: active`);
      return 0;
    }
    case 'promote': {
      if (!target || !extra) throw new CliFailure('usage: metnos executor promote <name> <version>', 2);
      const { catalog } = await openCatalog(place);
      await catalog.promote(target, extra);
      io.out(`${target}@${extra} is now the default`);
      return 0;
    }
    default:
      throw new CliFailure(`unknown executor command "${sub}"\n\n${EXECUTOR_HELP}`, 2);
  }
}
