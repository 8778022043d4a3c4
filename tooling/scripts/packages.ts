// What the package checks share: the public packages of the workspace, running a
// command, building them and packing each into a tarball the way `pnpm publish` would.
import { spawn } from 'node:child_process';
import { cp, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The repository root. */
export const REPO = join(import.meta.dirname, '..', '..');

/** A workspace package that is published (not `private`). */
export interface PublicPackage {
  name: string;
  version: string;
  dir: string;
}

/** A packed package: the tarball `pnpm pack` wrote and the files in it. */
export interface PackedPackage extends PublicPackage {
  tarball: string;
  files: string[];
}

/** What a finished command printed, and how it ended. */
export interface CommandResult {
  code: number;
  output: string;
}

/** Every non-private package under packages/ and apps/, in folder order. */
export async function publicPackages(): Promise<PublicPackage[]> {
  const found: PublicPackage[] = [];
  for (const group of ['packages', 'apps']) {
    for (const name of (await readdir(join(REPO, group))).sort()) {
      const dir = join(REPO, group, name);
      const manifest = await readFile(join(dir, 'package.json'), 'utf8').then(JSON.parse, () => undefined);
      if (!manifest || manifest.private === true) continue;
      found.push({ name: manifest.name, version: manifest.version, dir });
    }
  }
  return found;
}

/** Runs a command without a shell; its output (stdout and stderr interleaved) comes back whole. */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 128 : 1), output: Buffer.concat(chunks).toString('utf8') }),
    );
  });
}

/** Runs a command and throws with its output when it fails. */
export async function runOrThrow(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (exit ${result.code}):\n${result.output}`);
  }
  return result.output;
}

/** Milliseconds since `start` as seconds with one decimal, for progress lines. */
export function seconds(start: number): string {
  return `${((performance.now() - start) / 1000).toFixed(1)} s`;
}

/** Builds every package (Turborepo; unchanged packages come from its cache). */
export async function buildAll(): Promise<void> {
  await runOrThrow('pnpm', ['run', 'build']);
}

/**
 * Packs each public package into `destination` with `pnpm pack`, which applies
 * `publishConfig`, replaces `workspace:` ranges with versions, runs the
 * prepack/postpack scripts and adds the root LICENSE — the tarball `pnpm publish`
 * would upload.
 */
export async function packAll(destination: string): Promise<PackedPackage[]> {
  const packed: PackedPackage[] = [];
  for (const pkg of await publicPackages()) {
    const output = await runOrThrow('pnpm', ['pack', '--pack-destination', destination, '--json'], {
      cwd: pkg.dir,
    });
    // lifecycle scripts may print before the report, which starts on a line of its own
    const json = output.match(/^\{$[\s\S]*^\}$/m)?.[0];
    if (!json) throw new Error(`pnpm pack in ${pkg.dir} printed no report:\n${output}`);
    const report = JSON.parse(json) as {
      filename: string;
      files: { path: string }[];
    };
    await stat(report.filename);
    packed.push({ ...pkg, tarball: report.filename, files: report.files.map((file) => file.path) });
  }
  return packed;
}

/**
 * Copies the signed seed executors (every folder of executors/ with a manifest.toml,
 * without node_modules) into `target`, and the release public key to `keyFile`.
 * Returns the names copied.
 */
export async function copySeeds(target: string, keyFile: string): Promise<string[]> {
  const source = join(REPO, 'executors');
  const names: string[] = [];
  for (const name of (await readdir(source)).sort()) {
    const isExecutor = await stat(join(source, name, 'manifest.toml')).then(
      (info) => info.isFile(),
      () => false,
    );
    if (!isExecutor) continue;
    await cp(join(source, name), join(target, name), {
      recursive: true,
      filter: (from) => !from.split('/').includes('node_modules'),
    });
    names.push(name);
  }
  await mkdir(join(keyFile, '..'), { recursive: true });
  await cp(join(REPO, 'keys', 'metnos-release.pub'), keyFile);
  return names;
}
