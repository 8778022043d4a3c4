import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createCatalog,
  createKeyStore,
  createTrustStore,
  defaultStateDir,
  readPublicKey,
  resolveConfigDir,
} from '@metnos/executor-sdk';
import { ServerTokenError, serverToken, TOKEN_FILE } from '@metnos/server';
import { CliFailure, type CliIo } from '../output.ts';
import { RECEIPT_KEY, receiptKey } from '../receipts.ts';
import { defaultInitDir, userCwd } from '../workspace.ts';

export const INIT_HELP = `metnos init — create a Metnos workspace

Usage:
  metnos init [dir] [--no-key] [--force] [--config-dir <dir>]

Creates <dir> (default $XDG_DATA_HOME/metnos-workspace, else ~/.local/share/metnos-workspace) with:
  metnos.toml      where the workspace, the executors and the trusted release key are
  workspace/       the folder executors read and write (its .audit/ is Metnos's own)
  executors/       the seed executors, copied and verified against the release key
  keys/            the public release key the seeds are signed with
and, unless --no-key, your own signing key (metnos keys init) if you have none yet, and the bearer
token of \`metnos serve\` in <config dir>/server.token (mode 0600) if there is none yet. Always, the
installation's receipt key ("receipts" in the key store) if there is none yet: it signs the chain of
receipts \`metnos receipts verify\` checks, and is never trusted to sign executors.
Commands run from <dir> or below it use this workspace.
`;

/** The CLI package folder: the nearest folder above this file with a package.json (src/ and dist/ alike). */
function cliRoot(): string {
  for (let dir = import.meta.dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  return resolve(import.meta.dirname, '..', '..');
}

/**
 * Where the seed executors and the release key come from: the copies packed
 * into `@metnos/cli` (`seeds/`), else the repository the CLI runs from.
 */
export function seedSource(): { executors: string; releaseKey: string } | undefined {
  const CLI_ROOT = cliRoot();
  const candidates = [
    { executors: join(CLI_ROOT, 'seeds'), releaseKey: join(CLI_ROOT, 'seeds', 'metnos-release.pub') },
    {
      executors: join(CLI_ROOT, '..', '..', 'executors'),
      releaseKey: join(CLI_ROOT, '..', '..', 'keys', 'metnos-release.pub'),
    },
  ];
  return candidates.find((candidate) => existsSync(candidate.executors) && existsSync(candidate.releaseKey));
}

export async function initCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'no-key': { type: 'boolean' },
      force: { type: 'boolean' },
      'config-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(INIT_HELP);
    return 0;
  }
  const cwd = userCwd();
  const dir = positionals[0] ? resolve(cwd, positionals[0]) : defaultInitDir();
  const toml = join(dir, 'metnos.toml');
  if (existsSync(toml) && !values.force) {
    throw new CliFailure(
      `${toml} exists already: this folder is a Metnos workspace (run metnos init ${dir} --force to copy the seeds again)`,
    );
  }
  const source = seedSource();
  if (!source) {
    throw new CliFailure('the seed executors are not with this installation of @metnos/cli (reinstall it)');
  }
  const made: string[] = [];
  await mkdir(join(dir, 'workspace'), { recursive: true, mode: 0o700 });
  await mkdir(join(dir, 'keys'), { recursive: true });
  await cp(source.releaseKey, join(dir, 'keys', 'metnos-release.pub'));
  const executors = join(dir, 'executors');
  await mkdir(executors, { recursive: true });
  const seeds: string[] = [];
  for (const entry of await readdir(source.executors, { withFileTypes: true })) {
    if (!entry.isDirectory() || !existsSync(join(source.executors, entry.name, 'manifest.toml'))) continue;
    await cp(join(source.executors, entry.name), join(executors, entry.name), {
      recursive: true,
      force: true,
      // a node_modules inside a seed, not the one an installed CLI itself lives in
      filter: (from) => !relative(source.executors, from).split(sep).includes('node_modules'),
    });
    seeds.push(entry.name);
  }
  // verified here, against the release key, before anything is written that trusts it
  const release = await readPublicKey(join(dir, 'keys', 'metnos-release.pub'));
  const check = await createCatalog({
    root: executors,
    trustedKeys: [release],
    stateDir: defaultStateDir(executors),
  }).load();
  if (check.quarantined.length > 0) {
    const reasons = check.quarantined.map((entry) => `  ${entry.name}: ${entry.reason}: ${entry.message}`);
    throw new CliFailure(`the copied seed executors do not verify:\n${reasons.join('\n')}`);
  }
  if (!existsSync(toml) || values.force) {
    await writeFile(
      toml,
      `# A Metnos workspace, made by \`metnos init\`.
[workspace]
root = "workspace"                       # where executors read and write
executors = "executors"                  # the executors Metnos loads
trusted_keys = ["keys/metnos-release.pub"]  # the key the seed executors are signed with
`,
    );
  }
  made.push(
    `${toml}`,
    `${join(dir, 'workspace')}/`,
    `${executors}/ (${check.loaded.length} seed executors, verified: ${seeds.sort().join(', ')})`,
    `${join(dir, 'keys', 'metnos-release.pub')} (release key ${release.keyId})`,
  );
  if (!values['no-key']) {
    const settings = { configDir: values['config-dir'] };
    const store = createKeyStore(settings);
    if ((await store.list()).some((key) => key.name === 'default')) {
      made.push(`your key: "default" in ${store.dir} (already there)`);
    } else {
      const key = await store.create('default');
      await createTrustStore(settings).add(key);
      made.push(`your key: "default" ${key.keyId} in ${store.dir} (mode 0600), trusted by you`);
    }
  }
  // the installation's receipt key: signs the receipt chain only, never trusted for executors
  const receipts = await receiptKey(values['config-dir']);
  made.push(
    receipts.created
      ? `the receipt key: "${RECEIPT_KEY}" ${receipts.key.keyId} (mode 0600), signs the receipt chain only`
      : `the receipt key: "${RECEIPT_KEY}" ${receipts.key.keyId} (already there)`,
  );
  // the bearer token of `metnos serve`: made once, kept across inits, never printed
  const configDir = resolveConfigDir(values['config-dir']);
  const tokenPath = join(configDir, TOKEN_FILE);
  const hadToken = existsSync(tokenPath);
  try {
    serverToken(configDir, { create: true });
  } catch (error) {
    // one there already that the server would refuse (a link, another user's, readable by others)
    if (error instanceof ServerTokenError) throw new CliFailure(error.message);
    throw error;
  }
  made.push(
    hadToken
      ? `the server token: ${tokenPath} (already there)`
      : `the server token: ${tokenPath} (mode 0600; metnos serve asks every request for it)`,
  );
  io.out(
    `created a Metnos workspace in ${dir}\n${made.map((line) => `  ${line}`).join('\n')}\n\nnext:\n  cd ${dir}\n  metnos ask "what time is it?"\n  metnos serve           the same, always on: the HTTP API on 127.0.0.1:8787\n  metnos executor new hello && metnos executor sign hello && metnos executor test hello\n  metnos executor run hello --args '{"name":"Ada"}'\n  metnos doctor          what isolation this machine gives executors`,
  );
  return 0;
}
