import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
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
import { openReceiptChain } from '../receipts.ts';
import {
  type CliPlace,
  placeCatalog,
  placeCredentials,
  placeProtection,
  resolvePlace,
  trustedKeys,
  userPath,
} from '../workspace.ts';

export const EXECUTOR_HELP = `metnos executor — author, sign, verify and run executors

Usage:
  metnos executor new <name> [--in <dir>]        scaffold a working, signable executor in <dir>/<name>
  metnos executor sign <name|dir> [--key <name>] write profile.lock and manifest.sig with your key
  metnos executor verify [<name|dir>]            verify one executor or a whole executors folder;
                                                 exits non-zero with the reason on any failure
  metnos executor list                           every version with its state, and reasons
  metnos executor test <name|dir>                run the birth tests (tests/*.test.ts) through the sandbox
  metnos executor run <name|dir> --args '<json>' one sandboxed invocation; prints the result JSON
  metnos executor archive <name> [version]       move to executors/.archive (no longer loaded)
  metnos executor rehabilitate <name> <version>  bring an archived or quarantined version back after re-verifying
  metnos executor promote <name> <version>       make <version> the default (writes CURRENT)

An executor is named by its name (looked up in the executors folder) or by the path of its folder.
Run \`metnos executor <command> --help\` for one command.

Options:
  --executors <dir>    the executors folder (default: metnos.toml's, else ./executors, else .)
  --workspace <dir>    the workspace root for run (default: metnos.toml's root, else .)
  --key <name>         signing key name for sign (default "default")
  --config <json>      per-instance settings passed to the executor as ctx.config (run)
  --config-dir <dir>   Metnos config dir (default $METNOS_CONFIG_DIR or ~/.config/metnos)
`;

/** One page per subcommand: what it does, its arguments and the options it reads. */
const SUB_HELP: Record<string, string> = {
  new: `metnos executor new <name> [--in <dir>]

Scaffolds a working executor (manifest.toml, main.ts, schema.json, tests/birth.test.ts) in
<dir>/<name>; <dir> defaults to the workspace's executors folder, else the current folder.
Next: metnos executor sign <name>, metnos executor test <name>, metnos executor run <name>.
`,
  sign: `metnos executor sign <name|dir> [--key <name>] [--config-dir <dir>]

Writes profile.lock and manifest.sig, signing with your key (default "default"; create one with
metnos keys init). <name> is looked up in the executors folder; a path names the folder itself.
`,
  verify: `metnos executor verify [<name|dir>] [--executors <dir>]

Verifies one executor, or every executor of a folder (default: the executors folder), against the
keys you trust. Prints the reason and the artefact of each failure and exits non-zero.
`,
  list: `metnos executor list [--executors <dir>]

Every version in the executors folder: its state (active, quarantined, archived …), whether it
is the default, and the reason of a refusal.
`,
  test: `metnos executor test <name|dir>

Runs the executor's birth tests (tests/*.test.ts) with vitest, every call through the sandbox.
`,
  run: `metnos executor run <name|dir> [version] --args '<json>' [--config '<json>'] [--workspace <dir>]

One sandboxed call. Prints the result as JSON (ok, content or error, and the isolation that
wrapped it) and exits non-zero when the call failed. When the executor is not invocable, the
reason (quarantine, rollback, untrusted key …) is printed instead.
`,
  archive: `metnos executor archive <name> [version]

Moves a version (default: all) to the executors folder's .archive/; it is no longer loaded.
`,
  rehabilitate: `metnos executor rehabilitate <name> <version>

Brings an archived or quarantined version back after verifying it again; also accepts, on
purpose, a lower version the rollback protection refused.
`,
  promote: `metnos executor promote <name> <version>

Makes <version> the default (writes CURRENT): the deliberate way to move back a version.
`,
};

/**
 * The folder an executor argument names: a path to a folder with a manifest, else a name in the
 * executors folder (flat, or versioned with CURRENT). Undefined when neither exists.
 */
export async function executorFolder(place: CliPlace, target: string): Promise<string | undefined> {
  const direct = userPath(place, target);
  if (await hasManifest(direct)) return direct;
  if (!/^[a-z][a-z0-9_]*$/.test(target)) return undefined;
  const named = join(place.executors, target);
  if (await hasManifest(named)) return named;
  const current = await readFile(join(named, 'CURRENT'), 'utf8').catch(() => undefined);
  if (current && (await hasManifest(join(named, current.trim())))) return join(named, current.trim());
  return undefined;
}

async function requireFolder(place: CliPlace, target: string): Promise<string> {
  const dir = await executorFolder(place, target);
  if (!dir) {
    throw new CliFailure(
      `no executor "${target}": not a folder with a manifest.toml, nor a name in ${place.executors} (metnos executor list shows what is there)`,
    );
  }
  return dir;
}

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
  if (values.help && sub && SUB_HELP[sub]) {
    io.out(SUB_HELP[sub]);
    return 0;
  }
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
      // the name works when the executor sits in the executors folder; otherwise its path
      const handle = (await executorFolder(place, target)) === dir ? target : dir;
      io.out(
        `created ${dir}\n  next: metnos executor sign ${handle}\n        metnos executor test ${handle}\n        metnos executor run ${handle} --args '{"name":"Ada"}'`,
      );
      return 0;
    }
    case 'sign': {
      if (!target) throw new CliFailure('usage: metnos executor sign <name|dir> [--key <name>]', 2);
      const dir = await requireFolder(place, target);
      const key = await createKeyStore({ configDir: values['config-dir'] }).load(values.key);
      const result = await signExecutor(dir, key);
      io.out(
        `signed ${result.name}@${result.version} with ${result.keyId}\n  profile.lock ${result.profileLock}`,
      );
      return 0;
    }
    case 'verify': {
      const dir = target
        ? ((await executorFolder(place, target)) ?? userPath(place, target))
        : place.executors;
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
      if (!target) throw new CliFailure(`usage: metnos executor run <name|dir> --args '<json>'`, 2);
      const args = parseJson(values.args ?? '{}', '--args');
      const config = values.config
        ? (parseJson(values.config, '--config') as Record<string, unknown>)
        : undefined;
      // a path names its folder: the catalog is the folder that holds it, the name its manifest's
      const folder = await executorFolder(place, target);
      let name = target;
      let runPlace = place;
      if (folder && folder === userPath(place, target) && !/^[a-z][a-z0-9_]*$/.test(target)) {
        const versioned = /^\d+\.\d+\.\d+/.test(basename(folder));
        const root = versioned ? dirname(dirname(folder)) : dirname(folder);
        name = versioned ? basename(dirname(folder)) : basename(folder);
        runPlace = { ...place, executors: root };
      }
      const { catalog, report } = await openCatalog(runPlace);
      if (!catalog.get(name, extra)) {
        const refused = report.quarantined.filter((entry) => entry.name === name);
        throw new CliFailure(
          refused.length > 0
            ? `${name} cannot be invoked:\n${refused.map((entry) => `  ${entry.name}@${entry.version ?? '?'} ${entry.reason}${entry.artefact ? ` (${entry.artefact})` : ''}: ${entry.message}`).join('\n')}`
            : `no executor "${name}"${extra ? `@${extra}` : ''} in ${runPlace.executors} (metnos executor list shows what is there)`,
        );
      }
      const audit = createAuditLog({ workspace: place.workspace });
      const invoker = createInvoker({
        catalog,
        runner: await sandboxRunner(),
        audit,
        receipts: await openReceiptChain(place.workspace),
        protect: placeProtection(place),
        credentials: await placeCredentials(place),
      });
      const result = await invoker.invoke(name, args, {
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
      const dir = await requireFolder(place, target);
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
