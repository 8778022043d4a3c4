import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  createAuditLog,
  createCatalog,
  createInvoker,
  defaultStateDir,
  type ExecutorResult,
  type ExecutorRunner,
  findWorkspaceConfig,
  generateSigningKey,
  loadTrustedKeys,
  type ProtectedPath,
  serializePublicKey,
  trustPaths,
} from '@metnos/executor-sdk';
import { writeSignedExecutor } from '@metnos/executor-sdk/test';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkHelper, ensureHelper } from '../src/helper.ts';
import { createSandboxRunner, type SandboxRunner } from '../src/index.ts';
import { createLab, type Lab, observingCode, type ProfileSpec, sandboxToml } from './fixtures.ts';

// Attacks on the host around the sandbox, made as an outsider would: signed executors run through
// the real catalog, invoker and sandbox runner (with the real helper, at the full tier), and the
// host is looked at afterwards: the canary files are unchanged, nothing was written outside, the
// helper is still the binary that was built, and the audit lines are where they must be. Every
// path the runner knows (home, config dir, helper cache, temp root, state and data dirs) is a
// throwaway folder, so no case can reach the user's real ~/.config/metnos or ~/.cache.

type Observed = Record<string, { ok: boolean; code?: string; value?: unknown }>;
type AuditLine = Record<string, unknown> & { trace_id: string };

const ROOT = process.getuid?.() === 0;
const MARKER = 'RAN-MARKER';

/** Executor code that leaves a marker in every folder it may write, and in the workspace: proof it ran. */
const MARK_BODY = `for (const dir of [...ctx.profile.fs.write, ctx.workspace]) { try { fs.writeFileSync(dir + '/${MARKER}', 'ran'); } catch {} }
  out.ran = { ok: true };`;

/** An `fs_read`: reads `args.path` (relative to the workspace unless absolute). */
const READ_BODY = `out.read = await attempt(() => fs.readFileSync(args.path.startsWith('/') ? args.path : ctx.workspace + '/' + args.path, 'utf8'));`;

let lab: Lab;
let runner: SandboxRunner;
let home: string;
let configDir: string;
let helperDir: string;
let tmpRoot: string;
let outside: string;
const canaries = new Map<string, string>();
const previousEnv: Record<string, string | undefined> = {};

function canary(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  canaries.set(path, text);
  return path;
}

/** The host after a case: canaries intact, the outside folder empty, the helper the one built. */
function expectHostIntact(): void {
  for (const [path, text] of canaries) {
    expect(lstatSync(path).isFile(), `${path} is still a plain file`).toBe(true);
    expect(readFileSync(path, 'utf8'), `${path} is unchanged`).toBe(text);
  }
  expect(readdirSync(outside), 'nothing was written outside').toEqual([]);
  expect(checkHelper(runner.host.helperPath!, runner.host.helperDigest!)).toBeUndefined();
}

/** `[sandbox]` TOML with the fields fixtures.ts does not write. */
function profileToml(spec: ProfileSpec, extra: { maxWriteBytes?: number; hardlinks?: boolean } = {}): string {
  let toml = sandboxToml(spec);
  if (extra.maxWriteBytes !== undefined)
    toml = toml.replace('\n\n[sandbox.fs]\n', `\nmax_write_bytes = ${extra.maxWriteBytes}\n\n[sandbox.fs]\n`);
  if (extra.hardlinks !== undefined)
    toml = toml.replace('[sandbox.fs]\n', `[sandbox.fs]\nhardlinks = ${extra.hardlinks}\n`);
  return toml;
}

interface ExecutorOptions {
  name?: string;
  /** The body of {@link observingCode}, or `code` for a whole file. */
  body?: string;
  code?: string;
  profile?: ProfileSpec;
  maxWriteBytes?: number;
  hardlinks?: boolean;
  /** The catalog's executors folder and state dir (default: fresh folders of their own). */
  root?: string;
  stateDir?: string;
  use?: ExecutorRunner;
  protect?: ProtectedPath[];
}

let serial = 0;
const fresh = (label: string) => join(lab.root, 'cases', `${label}-${serial++}`);

/** Signs an executor into its own catalog and returns a way to call it through the real invoker. */
async function prepare(options: ExecutorOptions) {
  const name = options.name ?? `probe_${serial++}`;
  const root = options.root ?? join(lab.root, 'catalogs', name);
  const { dir } = await writeSignedExecutor({
    root,
    name,
    key: lab.key,
    code: options.code ?? observingCode(options.body ?? MARK_BODY),
    sandboxToml: profileToml(options.profile ?? {}, options),
  });
  const catalog = createCatalog({
    root,
    trustedKeys: [lab.key],
    stateDir: options.stateDir ?? join(lab.root, 'state', name),
  });
  const report = await catalog.load();
  expect(report.quarantined).toEqual([]);
  return {
    name,
    dir,
    catalog,
    async invoke(args: unknown, workspace: string, use = options.use ?? runner) {
      const invoker = createInvoker({
        catalog,
        runner: use,
        audit: createAuditLog({ workspace }),
        protect: options.protect,
      });
      const traceId = randomUUID();
      const result = await invoker.invoke(name, args, { workspace, caller: { kind: 'test' }, traceId });
      return { result, traceId, observed: (result.ok ? result.content : {}) as Observed };
    },
  };
}

/** One call of a fresh executor: `{ result, traceId, observed, workspace }`. */
async function call(options: ExecutorOptions & { args?: unknown; workspace?: string }) {
  const workspace = options.workspace ?? fresh('ws');
  const executor = await prepare(options);
  return { ...(await executor.invoke(options.args ?? {}, workspace)), workspace, executor };
}

function auditLines(workspace: string, kind: 'executors' | 'sandbox'): AuditLine[] {
  const dir = join(realpathSync(workspace), '.audit', kind);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.jsonl'))
    .flatMap((file) => readFileSync(join(dir, file), 'utf8').split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as AuditLine);
}

function expectAuditLine(workspace: string, traceId: string, fields: Record<string, unknown>): void {
  const line = auditLines(workspace, 'executors').find((entry) => entry.trace_id === traceId);
  expect(line, `the audit line of call ${traceId}`).toBeDefined();
  expect(line).toMatchObject(fields);
}

function expectRefusedBeforeStart(
  outcome: { result: ExecutorResult; traceId: string; workspace: string },
  errorClass: string,
  rule?: string,
): void {
  const { result, traceId, workspace } = outcome;
  expect(result.ok, JSON.stringify(result).slice(0, 400)).toBe(false);
  if (result.ok) return;
  expect(result.error.class, result.error.message).toBe(errorClass);
  if (rule) expect(result.metadata?.rule, result.error.message).toBe(rule);
  expect(result.isolation?.layers ?? [], 'no layer was applied: nothing started').toEqual([]);
  expect(existsSync(join(workspace, MARKER)), 'the executor did not run').toBe(false);
  expectAuditLine(workspace, traceId, { exit: 'policy', error_class: errorClass });
  if (errorClass === 'PolicyViolation' || errorClass === 'IsolationUnavailable') {
    const line = auditLines(workspace, 'sandbox').find((entry) => entry.trace_id === traceId);
    expect(line, 'the sandbox audit line of the refusal').toMatchObject({
      error_class: errorClass,
      ...(rule ? { rule } : {}),
    });
  }
}

const failed = (observed: Observed, key: string) => {
  expect(observed[key], key).toBeDefined();
  expect(observed[key]!.ok, `${key} should fail: ${JSON.stringify(observed[key])}`).toBe(false);
};

beforeAll(async () => {
  lab = await createLab('metnos-host-attack-');
  home = join(lab.root, 'home');
  configDir = join(home, '.config', 'metnos');
  helperDir = join(home, '.cache', 'metnos', 'sandbox');
  tmpRoot = join(lab.root, 'tmp');
  outside = join(lab.root, 'outside');
  for (const dir of [configDir, tmpRoot, outside, join(lab.root, 'cases')])
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [key, value] of [
    ['METNOS_CONFIG_DIR', configDir],
    ['XDG_STATE_HOME', join(home, '.local', 'state')],
    ['XDG_DATA_HOME', join(home, '.local', 'share')],
  ] as const) {
    previousEnv[key] = process.env[key];
    process.env[key] = value;
  }
  canary(join(home, '.ssh', 'id_ed25519'), 'CANARY-SSH-PRIVATE-KEY');
  canary(join(configDir, 'trusted_keys.canary'), 'CANARY-TRUST-LIST');
  canary(join(lab.root, 'outside.txt'), 'CANARY-OUTSIDE');
  runner = createSandboxRunner({ home, configDir, helperCacheDir: helperDir, tmpRoot });
  expect(runner.tier).toBe('full');
  expect(dirname(runner.host.helperPath!)).toBe(helperDir);
});

afterEach(() => expectHostIntact());

afterAll(async () => {
  for (const [key, value] of Object.entries(previousEnv)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  await rm(lab.root, { recursive: true, force: true });
});

describe.concurrent('1. helper escape: no write grant reaches what runs outside the sandbox', () => {
  // [what, profile write entry, the host path it names (where a marker would appear), rule, why]
  const grants: Array<[string, () => string, () => string, string, RegExp]> = [
    ['$HOME', () => '$HOME', () => home, 'profile-too-broad', /the whole home folder/],
    ['$HOME/ (trailing slash)', () => '$HOME/', () => home, 'profile-too-broad', /the whole home folder/],
    [
      '$HOME by a climb ($HOME/../home)',
      () => '$HOME/../home',
      () => home,
      'profile-too-broad',
      /the whole home folder/,
    ],
    [
      'the home through a symlink',
      () => join(lab.root, 'home-link'),
      () => home,
      'profile-too-broad',
      /the whole home folder/,
    ],
    ['the runner temp root', () => tmpRoot, () => tmpRoot, 'profile-too-broad', /shared temp folder/],
    [
      '/tmp',
      () => '/tmp',
      () => '/tmp',
      'profile-too-broad',
      /contains .*(sandbox helper|private temp folder|forbidden)/,
    ],
    ['/', () => '/', () => '/', 'profile-too-broad', /whole filesystem/],
    [
      "the helper's cache folder",
      () => helperDir,
      () => helperDir,
      'profile-forbidden-path',
      /the sandbox helper/,
    ],
    [
      'the helper binary itself',
      () => runner.host.helperPath!,
      () => helperDir,
      'profile-forbidden-path',
      /the sandbox helper/,
    ],
    [
      '~/.cache/metnos (parent of the helper folder)',
      () => '$HOME/.cache/metnos',
      () => dirname(helperDir),
      'profile-too-broad',
      /the sandbox helper/,
    ],
    ['~/.cache', () => '$HOME/.cache', () => join(home, '.cache'), 'profile-too-broad', /the sandbox helper/],
    ['the lab folder above everything', () => lab.root, () => lab.root, 'profile-too-broad', /contains/],
    ['the config dir', () => configDir, () => configDir, 'profile-forbidden-path', /core forbidden path/],
    [
      'a folder inside the config dir',
      () => join(configDir, 'keys'),
      () => configDir,
      'profile-forbidden-path',
      /core forbidden path/,
    ],
    [
      '~/.config (parent of the config dir)',
      () => '$HOME/.config',
      () => join(home, '.config'),
      'profile-too-broad',
      /contains .*metnos/,
    ],
    [
      'the state home (ledgers)',
      () => '$HOME/.local/state',
      () => join(home, '.local', 'state'),
      'profile-too-broad',
      /ledgers/,
    ],
    [
      'the data home (memory stores)',
      () => '$HOME/.local/share/metnos',
      () => join(home, '.local', 'share', 'metnos'),
      'profile-forbidden-path',
      /memory stores/,
    ],
    [
      'the Node binary',
      () => runner.host.nodePath,
      () => '/nonexistent',
      'profile-forbidden-path',
      /Node runtime|own code|packages Metnos runs from|core forbidden path \/root/,
    ],
    [
      "Metnos's own packages",
      () => join(import.meta.dirname, '..', '..'),
      () => '/nonexistent',
      'profile-forbidden-path',
      /own code/,
    ],
    [
      '/usr/local/bin (searched for bwrap and gcc)',
      () => '/usr/local/bin',
      () => '/usr/local/bin',
      'profile-forbidden-path',
      /system software/,
    ],
    [
      "the folder of Node's libc",
      () => dirname(realpathSync(runner.host.nodeLibraries.find((file) => /libc\.so/.test(file))!)),
      () => '/nonexistent',
      'profile-forbidden-path',
      /system software|outside the sandbox/,
    ],
    [
      "the folder of every call's private $TMP",
      () => join(tmpRoot, `metnos-calls-${process.getuid?.() ?? 0}`),
      () => '/nonexistent',
      'profile-forbidden-path',
      /other calls' private temp folders/,
    ],
  ];

  beforeAll(() => symlinkSync(home, join(lab.root, 'home-link')));

  for (const [what, grant, host, rule, why] of grants) {
    it(`refuses write on ${what} before start (${rule})`, async () => {
      const marker = join(host(), MARKER);
      expect(existsSync(marker), `${marker} left by an earlier run`).toBe(false);
      const outcome = await call({ profile: { write: [grant()] } });
      // a marker on a system path is removed at once, so a red case leaves nothing behind
      const ran = existsSync(marker);
      if (ran) rmSync(marker);
      expect(ran, `the executor wrote ${marker}`).toBe(false);
      expectRefusedBeforeStart(outcome, 'PolicyViolation', rule);
      expect(!outcome.result.ok && outcome.result.error.message).toMatch(why);
    });
  }

  it('still lets a profile read ~/.config (the config dir inside is masked)', async () => {
    const { result, observed } = await call({
      body: `out.list = await attempt(() => fs.readdirSync(${JSON.stringify(configDir)}));
             out.canary = await attempt(() => fs.readFileSync(${JSON.stringify(join(configDir, 'trusted_keys.canary'))}, 'utf8'));`,
      profile: { read: ['$HOME/.config'] },
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(observed.list).toEqual({ ok: true, value: [] });
    failed(observed, 'canary');
  });

  describe('a helper changed on disk between two calls is never run', () => {
    /** A runner with its own copy of the sealed helper, so tampering with it touches nothing else. */
    function isolatedRunner(label: string) {
      const cache = join(lab.root, 'helpers', label, 'cache');
      mkdirSync(cache, { recursive: true, mode: 0o700 });
      const helper = join(cache, basename(runner.host.helperPath!));
      copyFileSync(runner.host.helperPath!, helper);
      copyFileSync(`${runner.host.helperPath!}.seal`, `${helper}.seal`);
      chmodSync(helper, 0o700);
      const own = createSandboxRunner({ home, configDir, helperCacheDir: cache, tmpRoot });
      expect(own.host.helperPath).toBe(helper);
      return { own, cache, helper, planted: join(lab.root, 'helpers', label, 'PLANTED-HELPER-RAN') };
    }
    const script = (marker: string) => `#!/bin/sh\necho pwned > ${marker}\n`;

    const tampers: Array<[string, (place: ReturnType<typeof isolatedRunner>) => void, RegExp]> = [
      [
        'a byte flipped in place',
        ({ helper }) => {
          const bytes = readFileSync(helper);
          bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
          writeFileSync(helper, bytes);
        },
        /content changed/,
      ],
      [
        'overwritten in place by a script',
        ({ helper, planted }) => writeFileSync(helper, script(planted)),
        /content changed/,
      ],
      [
        'replaced by a script (rename over it)',
        ({ helper, planted }) => {
          writeFileSync(`${helper}.new`, script(planted), { mode: 0o700 });
          renameSync(`${helper}.new`, helper);
        },
        /content changed/,
      ],
      [
        'its folder renamed aside and a script planted in a new one',
        ({ cache, helper, planted }) => {
          renameSync(cache, `${cache}-aside`);
          mkdirSync(cache, { mode: 0o700 });
          writeFileSync(helper, script(planted), { mode: 0o700 });
        },
        /content changed/,
      ],
      [
        'its folder renamed aside and an identical copy planted in a group-writable one',
        ({ cache, helper }) => {
          renameSync(cache, `${cache}-aside`);
          mkdirSync(cache);
          chmodSync(cache, 0o775);
          copyFileSync(join(`${cache}-aside`, basename(helper)), helper);
        },
        /writable by other users/,
      ],
      [
        'its folder replaced by a symlink to a copy',
        ({ cache }) => {
          renameSync(cache, `${cache}-aside`);
          symlinkSync(`${cache}-aside`, cache);
        },
        /is a symlink/,
      ],
      [
        'the binary replaced by a symlink to an identical copy',
        ({ helper }) => {
          renameSync(helper, `${helper}-aside`);
          symlinkSync(`${helper}-aside`, helper);
        },
        /cannot be checked/,
      ],
      ['chmod g+w on the binary', ({ helper }) => chmodSync(helper, 0o770), /writable by other users/],
      [
        'chmod o+w on a parent folder',
        ({ cache }) => chmodSync(dirname(cache), 0o757),
        /writable by other users/,
      ],
      [
        'a second hard link to the binary',
        ({ helper, cache }) => linkSync(helper, join(dirname(cache), 'second-name')),
        /has 2 links/,
      ],
      ...((ROOT
        ? [
            [
              'the binary given to another user',
              ({ helper }) => chownSync(helper, 4242, 4242),
              /belongs to uid 4242/,
            ],
          ]
        : []) as typeof tampers),
    ];

    tampers.forEach(([what, tamper, why], index) => {
      it(`refuses the next call with IsolationUnavailable after ${what}`, async () => {
        const place = isolatedRunner(`tamper-${index}`);
        const executor = await prepare({
          body: MARK_BODY,
          profile: { write: ['$WORKSPACE'] },
          use: place.own,
        });
        const before = fresh('tamper-before');
        expect((await executor.invoke({}, before)).result.ok, 'the untouched helper runs').toBe(true);
        expect(existsSync(join(before, MARKER))).toBe(true);
        tamper(place);
        const workspace = fresh('tamper-after');
        const outcome = { ...(await executor.invoke({}, workspace)), workspace };
        expectRefusedBeforeStart(outcome, 'IsolationUnavailable');
        expect(!outcome.result.ok && outcome.result.error.message).toMatch(why);
        expect(existsSync(place.planted), 'the planted helper did not run').toBe(false);
        // a runner made again in this process keeps the digest it trusted
        const again = createSandboxRunner({ home, configDir, helperCacheDir: place.cache, tmpRoot });
        const later = fresh('tamper-later');
        expectRefusedBeforeStart(
          { ...(await executor.invoke({}, later, again)), workspace: later },
          'IsolationUnavailable',
        );
        expect(existsSync(place.planted)).toBe(false);
      });
    });

    it('a fresh start does not trust a planted script: the seal fails and the helper is built again', async () => {
      const place = isolatedRunner('rebuild');
      writeFileSync(place.helper, script(place.planted));
      const rebuilt = ensureHelper(place.cache, { configDir });
      expect(rebuilt).toMatchObject({ ok: true, compiled: true });
      expect(rebuilt.ok && rebuilt.trust).toMatch(/did not match its seal/);
      expect(readFileSync(place.helper, 'utf8')).not.toContain('pwned');
      expect(existsSync(place.planted)).toBe(false);
    });

    it("keeps the helper's seal secret in the runner's own config dir", () => {
      const ownConfig = join(lab.root, 'helpers', 'own-config', 'metnos');
      const cache = join(lab.root, 'helpers', 'own-config', 'cache');
      const own = createSandboxRunner({ home, configDir: ownConfig, helperCacheDir: cache, tmpRoot });
      expect(own.host.helperPath).toBeDefined();
      expect(existsSync(join(ownConfig, 'sandbox-helper.secret'))).toBe(true);
    });
  });
});

describe.concurrent('2. audit: the log of a call is written, and written where it belongs', () => {
  const today = () => new Date().toISOString().slice(0, 10);

  it("creates a fresh workspace's .audit before the first call and masks it from that call", async () => {
    const workspace = join(fresh('audit-fresh'), 'not', 'there', 'yet');
    const { result, observed, traceId } = await call({
      body: `out.list = await attempt(() => fs.readdirSync(ctx.workspace + '/.audit'));
             out.write = await attempt(() => fs.writeFileSync(ctx.workspace + '/.audit/forged.jsonl', 'x'));
             out.reserve = await attempt(() => fs.readFileSync(ctx.workspace + '/.audit/.reserve'));`,
      profile: { read: ['$WORKSPACE'], write: ['$WORKSPACE'] },
      workspace,
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(observed.list).toEqual({ ok: true, value: [] });
    failed(observed, 'write');
    failed(observed, 'reserve');
    for (const path of ['executors', 'sandbox', '.reserve'])
      expect(existsSync(join(workspace, '.audit', path))).toBe(true);
    expect(existsSync(join(workspace, '.audit', 'forged.jsonl'))).toBe(false);
    expectAuditLine(workspace, traceId, { exit: 'ok' });
  });

  // An executor with write on the workspace tries to replace the day file the host is about to append to.
  const replacements: Array<[string, string, string[]]> = [
    ['a symlink to a host file', `fs.symlinkSync(OUTSIDE, day)`, []],
    ['a folder', `fs.rmSync(day, { force: true }); fs.mkdirSync(day)`, []],
    [
      'a fifo',
      `const r = cp.spawnSync('mkfifo', [day + '.fifo']); if (r.status !== 0) throw new Error(String(r.stderr)); fs.renameSync(day + '.fifo', day)`,
      ['mkfifo'],
    ],
    [
      'a hard link to a file of its own',
      `fs.writeFileSync(ctx.workspace + '/mine.txt', 'forged'); fs.rmSync(day, { force: true }); fs.linkSync(ctx.workspace + '/mine.txt', day)`,
      [],
    ],
    [
      'a renamed-aside .audit',
      `fs.renameSync(ctx.workspace + '/.audit', ctx.workspace + '/audit-aside'); fs.mkdirSync(ctx.workspace + '/.audit/executors', { recursive: true })`,
      [],
    ],
    [
      'a removed .audit',
      `fs.rmSync(ctx.workspace + '/.audit', { recursive: true, force: true }); if (fs.existsSync(ctx.workspace + '/.audit/executors')) throw new Error('still there')`,
      [],
    ],
    [
      'a symlinked executors folder',
      `fs.renameSync(ctx.workspace + '/.audit/executors', ctx.workspace + '/ex-aside'); fs.symlinkSync(ctx.workspace + '/ex-aside', ctx.workspace + '/.audit/executors')`,
      [],
    ],
  ];
  for (const [what, attack, exec] of replacements) {
    it(`an executor cannot replace the day file with ${what}; the host's line of that call is there`, async () => {
      const workspace = fresh('audit-inside');
      mkdirSync(workspace);
      const { result, observed, traceId } = await call({
        body: `const day = ctx.workspace + '/.audit/executors/' + new Date().toISOString().slice(0, 10) + '.jsonl';
               const OUTSIDE = ${JSON.stringify(join(lab.root, 'outside.txt'))};
               out.attack = await attempt(() => { ${attack}; });`,
        profile: { read: ['$WORKSPACE'], write: ['$WORKSPACE'], exec },
        workspace,
      });
      expect(result.ok, JSON.stringify(result)).toBe(true);
      failed(observed, 'attack');
      const day = join(workspace, '.audit', 'executors', `${today()}.jsonl`);
      expect(lstatSync(day).isFile()).toBe(true);
      expect(statSync(day).nlink).toBe(1);
      expectAuditLine(workspace, traceId, { exit: 'ok' });
      expect(readdirSync(workspace).filter((entry) => entry.includes('aside'))).toEqual([]);
    });
  }

  it('a write grant on the folder above the workspace is refused (it could move the audit history aside)', async () => {
    const parent = fresh('audit-parent');
    const workspace = join(parent, 'ws');
    mkdirSync(workspace, { recursive: true });
    const outcome = await call({
      body: `out.rename = await attempt(() => fs.renameSync(ctx.workspace, ctx.workspace + '-aside'));
             out.forge = await attempt(() => fs.mkdirSync(ctx.workspace + '/.audit/executors', { recursive: true }));`,
      profile: { write: [parent] },
      workspace,
    });
    expectRefusedBeforeStart(outcome, 'PolicyViolation', 'profile-too-broad');
    expect(!outcome.result.ok && outcome.result.error.message).toMatch(/\.audit/);
    expect(readdirSync(parent)).toEqual(['ws']);
  });

  it('a write grant on the workspace itself cannot move the workspace or its .audit', async () => {
    const workspace = fresh('audit-move');
    const { result, observed, traceId } = await call({
      body: `out.workspace = await attempt(() => fs.renameSync(ctx.workspace, ctx.workspace + '-aside'));
             out.audit = await attempt(() => fs.renameSync(ctx.workspace + '/.audit', ctx.workspace + '/aside'));`,
      profile: { write: ['$WORKSPACE'] },
      workspace,
    });
    expect(result.ok).toBe(true);
    failed(observed, 'workspace');
    failed(observed, 'audit');
    expect(existsSync(`${workspace}-aside`)).toBe(false);
    expectAuditLine(workspace, traceId, { exit: 'ok' });
  });

  // Planted on the host before the call: the call is refused, and nothing is written through them.
  // [what, plant, whether the sandbox runner alone (which checks the tree, not the invoker's day file) refuses too]
  const planted: Array<[string, (workspace: string, target: string) => void, boolean]> = [
    [
      '.audit is a symlink',
      (workspace, target) => symlinkSync(dirname(target), join(workspace, '.audit')),
      true,
    ],
    ['.audit is a plain file', (workspace) => writeFileSync(join(workspace, '.audit'), 'not a folder'), true],
    [
      '.audit/executors is a symlink',
      (workspace, target) => {
        mkdirSync(join(workspace, '.audit'));
        symlinkSync(dirname(target), join(workspace, '.audit', 'executors'));
      },
      true,
    ],
    [
      'the day file is a symlink to a host file',
      (workspace, target) => {
        mkdirSync(join(workspace, '.audit', 'executors'), { recursive: true });
        symlinkSync(target, join(workspace, '.audit', 'executors', `${today()}.jsonl`));
      },
      false,
    ],
    [
      'the day file is a second hard link of a host file',
      (workspace, target) => {
        mkdirSync(join(workspace, '.audit', 'executors'), { recursive: true });
        linkSync(target, join(workspace, '.audit', 'executors', `${today()}.jsonl`));
      },
      false,
    ],
    [
      'the day file is a folder',
      (workspace) =>
        mkdirSync(join(workspace, '.audit', 'executors', `${today()}.jsonl`), { recursive: true }),
      false,
    ],
    [
      'the day file is a fifo',
      (workspace) => {
        mkdirSync(join(workspace, '.audit', 'executors'), { recursive: true });
        expect(spawnSync('mkfifo', [join(workspace, '.audit', 'executors', `${today()}.jsonl`)]).status).toBe(
          0,
        );
      },
      false,
    ],
    [
      'the space reserve is a symlink to a host file',
      (workspace, target) => {
        mkdirSync(join(workspace, '.audit'), { recursive: true });
        symlinkSync(target, join(workspace, '.audit', '.reserve'));
      },
      true,
    ],
  ];
  for (const [what, plant, tree] of planted) {
    it(`fails closed with AuditUnavailable when ${what}`, async () => {
      const workspace = fresh('audit-planted');
      mkdirSync(workspace);
      const target = join(fresh('audit-target'), 'target.jsonl');
      mkdirSync(dirname(target));
      writeFileSync(target, 'UNTOUCHED\n');
      plant(workspace, target);
      const executor = await prepare({ body: MARK_BODY, profile: { write: ['$WORKSPACE'] } });
      const { result } = await executor.invoke({}, workspace);
      expect(result).toMatchObject({ ok: false, error: { class: 'AuditUnavailable' } });
      expect(existsSync(join(workspace, MARKER)), 'the executor did not run').toBe(false);
      expect(readFileSync(target, 'utf8')).toBe('UNTOUCHED\n');
      expect(readdirSync(dirname(target))).toEqual(['target.jsonl']);
      if (!tree) return;
      // and the sandbox runner alone refuses the same workspace the same way
      const direct = await runner.run({
        executor: executor.catalog.get(executor.name)!,
        args: {},
        context: { traceId: randomUUID(), workspace, caller: { kind: 'test' } },
      });
      expect(direct.result).toMatchObject({ ok: false, error: { class: 'AuditUnavailable' } });
      expect(readFileSync(target, 'utf8')).toBe('UNTOUCHED\n');
      expect(existsSync(join(workspace, MARKER))).toBe(false);
    });
  }

  it("a symlinked sandbox day file is not followed, and the invoker's line still records the refusal", async () => {
    const workspace = fresh('audit-sandbox-link');
    const target = join(fresh('audit-target'), 'target.jsonl');
    mkdirSync(dirname(target));
    writeFileSync(target, 'UNTOUCHED\n');
    mkdirSync(join(workspace, '.audit', 'sandbox'), { recursive: true });
    symlinkSync(target, join(workspace, '.audit', 'sandbox', `${today()}.jsonl`));
    const { result, traceId } = await call({ profile: { write: ['/'] }, workspace });
    expect(result).toMatchObject({ ok: false, error: { class: 'PolicyViolation' } });
    expect(readFileSync(target, 'utf8')).toBe('UNTOUCHED\n');
    expectAuditLine(workspace, traceId, { exit: 'policy', error_class: 'PolicyViolation' });
  });
});

describe.concurrent('3. trust: what decides trust is never writable by an executor', () => {
  /** A place laid out as the CLI reads it: metnos.toml, a key it trusts, executors, state, workspace. */
  async function place(label: string) {
    const dir = fresh(`place-${label}`);
    for (const sub of ['keys', 'executors', 'state', 'workspace'])
      mkdirSync(join(dir, sub), { recursive: true });
    canary(join(dir, 'keys', 'k.pub'), serializePublicKey(lab.key));
    canary(
      join(dir, 'metnos.toml'),
      '[workspace]\nroot = "workspace"\nexecutors = "executors"\ntrusted_keys = ["keys/k.pub"]\n',
    );
    const config = (await findWorkspaceConfig(join(dir, 'workspace')))!;
    // what apps/cli placeProtection passes to the invoker
    const protect: ProtectedPath[] = [
      ...trustPaths(config),
      { path: config.executors, why: 'the executors folder Metnos loads' },
      { path: configDir, why: "the user's Metnos keys and trust list" },
    ];
    return {
      dir,
      config,
      protect,
      root: join(dir, 'executors'),
      stateDir: join(dir, 'state'),
      workspace: join(dir, 'workspace'),
    };
  }

  const grants: Array<[string, (dir: string) => string, string, RegExp]> = [
    [
      'the metnos.toml',
      (dir) => join(dir, 'metnos.toml'),
      'profile-forbidden-path',
      /workspace configuration/,
    ],
    [
      'the trusted key file',
      (dir) => join(dir, 'keys', 'k.pub'),
      'profile-forbidden-path',
      /a key Metnos trusts/,
    ],
    ['the folder of the trusted key', (dir) => join(dir, 'keys'), 'profile-too-broad', /a key Metnos trusts/],
    ['the executors folder', (dir) => join(dir, 'executors'), 'profile-forbidden-path', /executors folder/],
    [
      'a folder inside the executors folder',
      (dir) => join(dir, 'executors', 'other'),
      'profile-forbidden-path',
      /executors folder/,
    ],
    ['the state folder', (dir) => join(dir, 'state'), 'profile-forbidden-path', /version ledger/],
    [
      'the ledger file',
      (dir) => join(dir, 'state', 'ledger.json'),
      'profile-forbidden-path',
      /version ledger/,
    ],
    ['the folder holding all of them', (dir) => dir, 'profile-too-broad', /contains/],
    ['the folder above that', (dir) => dirname(dir), 'profile-too-broad', /contains/],
  ];
  for (const [what, grant, rule, why] of grants) {
    it(`refuses write on ${what} (${rule})`, async () => {
      const here = await place('grant');
      const outcome = await call({
        profile: { write: [grant(here.dir)] },
        root: here.root,
        stateDir: here.stateDir,
        protect: here.protect,
        workspace: here.workspace,
      });
      expectRefusedBeforeStart(outcome, 'PolicyViolation', rule);
      expect(!outcome.result.ok && outcome.result.error.message).toMatch(why);
      expect(existsSync(join(grant(here.dir), MARKER))).toBe(false);
    });
  }

  it('an executor granted write on the workspace cannot write the toml, the key, the executors or the ledger', async () => {
    const here = await place('kernel');
    const targets = {
      toml: join(here.dir, 'metnos.toml'),
      key: join(here.dir, 'keys', 'k.pub'),
      newKey: join(here.dir, 'keys', 'evil.pub'),
      executor: join(here.root, 'planted', 'main.ts'),
      ledger: join(here.stateDir, 'ledger.json'),
    };
    const { result, observed, executor } = await call({
      body: `${Object.entries(targets)
        .map(
          ([key, path]) =>
            `out.${key} = await attempt(() => { fs.mkdirSync(${JSON.stringify(dirname(path))}, { recursive: true }); fs.writeFileSync(${JSON.stringify(path)}, 'forged'); });`,
        )
        .join('\n')}
        out.climb = await attempt(() => fs.writeFileSync(ctx.workspace + '/../metnos.toml', 'forged'));`,
      profile: { read: ['$WORKSPACE'], write: ['$WORKSPACE'] },
      root: here.root,
      stateDir: here.stateDir,
      protect: here.protect,
      workspace: here.workspace,
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    for (const key of [...Object.keys(targets), 'climb']) failed(observed, key);
    expect(existsSync(targets.newKey)).toBe(false);
    expect(existsSync(targets.executor)).toBe(false);
    expect(readFileSync(targets.ledger, 'utf8')).not.toContain('forged');
    expect(readdirSync(here.root)).toEqual([executor.name]);
    expect(
      (await loadTrustedKeys(here.workspace, { configDir: fresh('cfg') })).map((key) => key.keyId),
    ).toEqual([lab.key.keyId]);
  });

  it('a metnos.toml an executor planted in its workspace is refused by loadTrustedKeys', async () => {
    const evil = await generateSigningKey();
    const { result, workspace } = await call({
      body: `fs.writeFileSync(ctx.workspace + '/evil.pub', ${JSON.stringify(serializePublicKey(evil))});
             fs.writeFileSync(ctx.workspace + '/metnos.toml', '[workspace]\\nroot = "."\\ntrusted_keys = ["evil.pub"]\\n');
             out.planted = { ok: true };`,
      profile: { write: ['$WORKSPACE'] },
    });
    expect(result.ok).toBe(true);
    expect(existsSync(join(workspace, 'metnos.toml'))).toBe(true);
    await expect(loadTrustedKeys(workspace, { configDir: fresh('cfg') })).rejects.toThrow(
      /inside its workspace/,
    );
  });

  it('a key file an executor planted in its workspace is refused even when the toml lies outside', async () => {
    const here = await place('keyfile');
    const evil = await generateSigningKey();
    const { result } = await call({
      body: `fs.writeFileSync(ctx.workspace + '/evil.pub', ${JSON.stringify(serializePublicKey(evil))}); out.planted = { ok: true };`,
      profile: { write: ['$WORKSPACE'] },
      workspace: here.workspace,
      root: here.root,
      stateDir: here.stateDir,
      protect: here.protect,
    });
    expect(result.ok).toBe(true);
    const toml = join(dirname(here.workspace), 'metnos.toml');
    canaries.delete(toml);
    writeFileSync(
      toml,
      '[workspace]\nroot = "workspace"\ntrusted_keys = ["keys/k.pub", "workspace/evil.pub"]\n',
    );
    await expect(loadTrustedKeys(here.workspace, { configDir: fresh('cfg') })).rejects.toThrow(
      /inside its workspace/,
    );
  });

  it('a workspace root that is a symlink to the folder of the toml counts as that folder', async () => {
    const dir = fresh('place-symlink');
    mkdirSync(dir);
    writeFileSync(join(dir, 'k.pub'), serializePublicKey(lab.key));
    symlinkSync(dir, join(dir, 'ws-link'));
    writeFileSync(join(dir, 'metnos.toml'), '[workspace]\nroot = "ws-link"\ntrusted_keys = ["k.pub"]\n');
    await expect(loadTrustedKeys(dir, { configDir: fresh('cfg') })).rejects.toThrow(/inside its workspace/);
    // and the sandbox, told what the CLI protects, refuses write on that workspace
    const config = (await findWorkspaceConfig(dir))!;
    const outcome = await call({
      profile: { write: ['$WORKSPACE'] },
      workspace: join(dir, 'ws-link'),
      protect: trustPaths(config),
    });
    expectRefusedBeforeStart(outcome, 'PolicyViolation', 'profile-too-broad');
  });
});

describe.concurrent('4. TOCTOU: the process runs the bytes that were verified', () => {
  const SIGNED = `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
export default defineExecutor({ run() { return ok({ who: 'signed' }); } });
`;
  const ATTACKER = `import { defineExecutor, ok } from '@metnos/executor-sdk/define';
import { writeFileSync } from 'node:fs';
export default defineExecutor({ run(args, ctx) { writeFileSync(ctx.workspace + '/ATTACKER-RAN', 'x'); return ok({ who: 'attacker' }); } });
`;
  // Each rewrites the code (or its folder) after the invoker's re-verification, right before the sandbox starts.
  const rewrites: Array<[string, (dir: string) => void]> = [
    ['overwritten in place', (dir) => writeFileSync(join(dir, 'main.ts'), ATTACKER)],
    [
      'replaced by a rename',
      (dir) => {
        writeFileSync(join(dir, 'main.ts.new'), ATTACKER);
        renameSync(join(dir, 'main.ts.new'), join(dir, 'main.ts'));
      },
    ],
    [
      'swapped for a symlink',
      (dir) => {
        writeFileSync(join(dirname(dir), 'attacker.ts'), ATTACKER);
        rmSync(join(dir, 'main.ts'));
        symlinkSync(join(dirname(dir), 'attacker.ts'), join(dir, 'main.ts'));
      },
    ],
    [
      'truncated and refilled through the same inode',
      (dir) => {
        truncateSync(join(dir, 'main.ts'), 0);
        writeFileSync(join(dir, 'main.ts'), ATTACKER, { flag: 'r+' });
      },
    ],
    [
      'its whole folder swapped',
      (dir) => {
        renameSync(dir, `${dir}-aside`);
        mkdirSync(dir);
        for (const file of readdirSync(`${dir}-aside`))
          copyFileSync(join(`${dir}-aside`, file), join(dir, file));
        writeFileSync(join(dir, 'main.ts'), ATTACKER);
      },
    ],
  ];
  rewrites.forEach(([what, rewrite], round) => {
    it(`runs the signed code when main.ts is ${what} after verification (${round + 1} of 5)`, async () => {
      const executor = await prepare({ code: SIGNED, profile: { write: ['$WORKSPACE'] } });
      const racing: ExecutorRunner = {
        tier: runner.tier,
        async run(request) {
          rewrite(request.executor.dir);
          return runner.run(request);
        },
      };
      const workspace = fresh('toctou');
      const { result, traceId } = await executor.invoke({}, workspace, racing);
      expect(result).toMatchObject({ ok: true, content: { who: 'signed' } });
      expect(existsSync(join(workspace, 'ATTACKER-RAN'))).toBe(false);
      expectAuditLine(workspace, traceId, { exit: 'ok' });
      // the next call sees the change and the version is quarantined; nothing of the attacker runs
      const next = await executor.invoke({}, workspace);
      expect(next.result).toMatchObject({ ok: false, error: { class: 'NotInvocable' } });
      expect(existsSync(join(workspace, 'ATTACKER-RAN'))).toBe(false);
    });
  });

  it("the executor's code file is not visible inside the sandbox", async () => {
    const name = 'code_hidden';
    const codeFile = join(lab.root, 'catalogs', name, name, 'main.ts');
    const { result, observed, executor } = await call({
      body: `out.file = await attempt(() => fs.readFileSync(${JSON.stringify(codeFile)}, 'utf8'));
             out.url = await attempt(() => fs.readFileSync(new URL(import.meta.url), 'utf8'));
             out.dir = await attempt(() => fs.readdirSync(${JSON.stringify(dirname(codeFile))}));
             out.manifest = await attempt(() => fs.readFileSync(${JSON.stringify(join(dirname(codeFile), 'manifest.toml'))}, 'utf8'));`,
      profile: { read: ['$WORKSPACE'] },
      name,
    });
    expect(executor.dir).toBe(dirname(codeFile));
    expect(result.ok, JSON.stringify(result)).toBe(true);
    for (const key of ['file', 'url', 'dir', 'manifest']) failed(observed, key);
  });
});

describe.concurrent('5. rollback: a lower version is refused even when the ledger is gone', () => {
  async function twoVersions(options: { current?: boolean; dropLedger?: boolean; legacy?: string } = {}) {
    const root = fresh('rollback-executors');
    const stateDir = fresh('rollback-state');
    const versioned = options.current !== false;
    await writeSignedExecutor({
      root,
      name: 'tool',
      key: lab.key,
      version: '2.0.0',
      versioned,
      sandboxToml: profileToml({}),
    });
    if (versioned) writeFileSync(join(root, 'tool', 'CURRENT'), '2.0.0\n');
    expect((await createCatalog({ root, trustedKeys: [lab.key], stateDir }).load()).loaded).toHaveLength(1);
    if (options.dropLedger !== false) rmSync(join(stateDir, 'ledger.json'));
    rmSync(versioned ? join(root, 'tool', '2.0.0') : join(root, 'tool'), { recursive: true });
    await writeSignedExecutor({
      root,
      name: 'tool',
      key: lab.key,
      version: '1.0.0',
      versioned,
      sandboxToml: profileToml({}),
    });
    if (versioned) writeFileSync(join(root, 'tool', 'CURRENT'), '1.0.0\n');
    if (options.legacy) {
      mkdirSync(join(root, '.state'));
      writeFileSync(join(root, '.state', 'ledger.json'), options.legacy);
    }
    const catalog = createCatalog({ root, trustedKeys: [lab.key], stateDir });
    const report = await catalog.load();
    const workspace = fresh('rollback-ws');
    const traceId = randomUUID();
    const result = await createInvoker({ catalog, runner, audit: createAuditLog({ workspace }) }).invoke(
      'tool',
      {},
      { workspace, caller: { kind: 'test' }, traceId },
    );
    return { report, result, workspace, traceId };
  }

  const expectRolledBack = (outcome: Awaited<ReturnType<typeof twoVersions>>, message: RegExp) => {
    expect(outcome.report.loaded).toEqual([]);
    expect(outcome.report.quarantined[0]).toMatchObject({
      name: 'tool',
      version: '1.0.0',
      reason: 'rollback',
    });
    expect(outcome.report.quarantined[0]?.message).toMatch(message);
    expect(outcome.result).toMatchObject({ ok: false, error: { class: 'NotInvocable' } });
    expectAuditLine(outcome.workspace, outcome.traceId, { exit: 'policy', error_class: 'NotInvocable' });
  };

  it('ledger deleted, a lower version and CURRENT pointing at it: refused, the ledger is named missing', async () => {
    expectRolledBack(await twoVersions(), /ledger .* is missing/);
  });

  it('ledger deleted, a lower version in the single-version layout: refused', async () => {
    expectRolledBack(await twoVersions({ current: false }), /ledger .* is missing/);
  });

  it('ledger kept, a lower version and CURRENT pointing at it: refused', async () => {
    expectRolledBack(await twoVersions({ dropLedger: false }), /already accepted: rollback refused/);
  });

  it('a ledger planted in the old place inside the executors folder does not allow the downgrade', async () => {
    const legacy = JSON.stringify({
      version: 1,
      executors: { tool: { highest: '1.0.0', accepted: { '1.0.0': 'x' } } },
    });
    expectRolledBack(await twoVersions({ legacy }), /ledger .* is missing/);
  });

  it('the default state dir lies outside the executors folder, and no profile may write it', async () => {
    const root = fresh('default-state');
    await writeSignedExecutor({ root, name: 'tool', key: lab.key, sandboxToml: profileToml({}) });
    const state = defaultStateDir(root);
    expect(state.startsWith(join(home, '.local', 'state', 'metnos'))).toBe(true);
    expect(`${state}/`.startsWith(`${root}/`)).toBe(false);
    const catalog = createCatalog({ root, trustedKeys: [lab.key] });
    await catalog.load();
    expect(existsSync(join(root, '.state'))).toBe(false);
    expect(existsSync(join(state, 'ledger.json'))).toBe(true);
    expect(catalog.protectedPaths().map((entry) => entry.path)).toContain(state);
    const outcome = await call({ profile: { write: [state] } });
    expectRefusedBeforeStart(outcome, 'PolicyViolation', 'profile-forbidden-path');
    expect(!outcome.result.ok && outcome.result.error.message).toMatch(/ledgers/);
  });
});

describe.concurrent('6. hard links: a second name of a secret is not opened', () => {
  let secret: string;
  const links = new Map<number, string>();

  beforeAll(() => {
    // a throwaway forbidden folder (a home's .gnupg), padded so a walk looking for the inode would give up
    const forbidden = join(home, '.gnupg');
    mkdirSync(forbidden);
    for (let index = 0; index < 5000; index++)
      writeFileSync(join(forbidden, `pad-${String(index).padStart(4, '0')}`), '');
    secret = canary(join(forbidden, 'zz-secret-key'), 'CANARY-GNUPG-SECRET');
  });

  /** A workspace with a hard link to the secret `depth` components down. */
  function linked(depth: number): { workspace: string; relative: string } {
    const workspace = fresh(`hardlink-${depth}`);
    const relative = [...Array.from({ length: depth - 1 }, (_, index) => `d${index}`), 'innocent.txt'].join(
      '/',
    );
    mkdirSync(dirname(join(workspace, relative)), { recursive: true });
    linkSync(secret, join(workspace, relative));
    links.set(depth, relative);
    return { workspace, relative };
  }

  for (const depth of [1, 4, 8]) {
    for (const form of ['relative', 'absolute', 'file://'] as const) {
      it(`refuses a ${form} path to a hard link at depth ${depth} (rule hardlink)`, async () => {
        const { workspace, relative } = linked(depth);
        const path =
          form === 'relative'
            ? relative
            : form === 'absolute'
              ? join(workspace, relative)
              : `file://${join(workspace, relative)}`;
        const outcome = await call({
          body: READ_BODY,
          profile: { read: ['$WORKSPACE'] },
          args: { path },
          workspace,
        });
        expectRefusedBeforeStart(outcome, 'PolicyViolation', 'hardlink');
        expect(JSON.stringify(outcome.result)).not.toContain('CANARY');
      });
    }

    it(`allows the hard link at depth ${depth} when the profile sets fs.hardlinks = true`, async () => {
      const { workspace, relative } = linked(depth);
      const { result, observed } = await call({
        body: READ_BODY,
        profile: { read: ['$WORKSPACE'] },
        hardlinks: true,
        args: { path: relative },
        workspace,
      });
      expect(result.ok, JSON.stringify(result).slice(0, 300)).toBe(true);
      // the documented trade-off of the opt-in: the second name reads like any file of the workspace
      expect(observed.read).toEqual({ ok: true, value: 'CANARY-GNUPG-SECRET' });
    });
  }

  it('checks a path nested 40 levels deep in the arguments like one at the top', async () => {
    const { workspace, relative } = linked(1);
    let args: unknown = { path: relative };
    for (let level = 0; level < 40; level++) args = { nested: args };
    const outcome = await call({
      body: `let inner = args; while (inner.nested) inner = inner.nested; out.read = await attempt(() => fs.readFileSync(ctx.workspace + '/' + inner.path, 'utf8'));`,
      profile: { read: ['$WORKSPACE'] },
      args,
      workspace,
    });
    expectRefusedBeforeStart(outcome, 'PolicyViolation', 'hardlink');
    expect(JSON.stringify(outcome.result)).not.toContain('CANARY');
  });

  it('the runner alone refuses arguments too deep to check (rule argument-too-deep)', async () => {
    const { workspace, relative } = linked(1);
    let args: unknown = { path: relative };
    for (let level = 0; level < 70; level++) args = [args];
    const executor = await prepare({
      body: READ_BODY,
      profile: { read: ['$WORKSPACE'], write: ['$WORKSPACE'] },
    });
    const report = await runner.run({
      executor: executor.catalog.get(executor.name)!,
      args,
      context: { traceId: randomUUID(), workspace, caller: { kind: 'test' } },
    });
    expect(report.result).toMatchObject({
      ok: false,
      error: { class: 'PolicyViolation' },
      metadata: { rule: 'argument-too-deep' },
    });
    expect(report.exit).toBe('policy');
    expect(existsSync(join(workspace, MARKER))).toBe(false);
  });
});

describe.concurrent('7. write quota: max_write_bytes stops a writer with ResourceLimit', () => {
  const MiB = 1024 * 1024;
  const writers: Array<[string, string, ProfileSpec]> = [
    [
      'one big file',
      `fs.writeFileSync(ctx.workspace + '/big', Buffer.alloc(8 * ${MiB}, 1)); out.done = { ok: true };`,
      { write: ['$WORKSPACE'] },
    ],
    [
      'many small files',
      `for (let i = 0; ; i++) fs.writeFileSync(ctx.workspace + '/small-' + (i % 2000), Buffer.alloc(16 * 1024, 1));`,
      { write: ['$WORKSPACE'] },
    ],
    [
      'appends to one file',
      `for (;;) fs.appendFileSync(ctx.workspace + '/log', Buffer.alloc(64 * 1024, 1));`,
      { write: ['$WORKSPACE'] },
    ],
    [
      'appends spread over files, each kept under the file-size limit',
      `for (let i = 0; ; i++) { try { fs.appendFileSync(ctx.workspace + '/part-' + Math.floor(i / 8), Buffer.alloc(64 * 1024, 1)); } catch {} }`,
      { write: ['$WORKSPACE'] },
    ],
    [
      'files in its private $TMP',
      `for (let i = 0; ; i++) fs.writeFileSync(ctx.tmpDir + '/t-' + (i % 500), Buffer.alloc(64 * 1024, 1));`,
      { write: ['$TMP'] },
    ],
    [
      'EFBIG caught and ignored',
      `for (let i = 0; ; i++) { try { fs.writeFileSync(ctx.workspace + '/big-' + i, Buffer.alloc(2 * ${MiB}, 1)); } catch {} }`,
      { write: ['$WORKSPACE'] },
    ],
  ];
  for (const [what, body, profile] of writers) {
    it(`stops ${what} past max_write_bytes = 1 MiB`, async () => {
      const { result, traceId, workspace } = await call({
        body,
        profile: { ...profile, durationMs: 15_000 },
        maxWriteBytes: MiB,
      });
      expect(result.ok ? 'ok' : `${result.error.class}: ${result.error.message}`).toMatch(/^ResourceLimit/);
      expectAuditLine(workspace, traceId, { error_class: 'ResourceLimit' });
      const sizes = readdirSync(workspace)
        .filter((entry) => !entry.startsWith('.'))
        .map((entry) => statSync(join(workspace, entry)).size);
      for (const size of sizes) expect(size).toBeLessThanOrEqual(MiB);
    });
  }

  it("reports a write past the runner's file-size limit as ResourceLimit, not Crashed", async () => {
    const capped = createSandboxRunner({
      home,
      configDir,
      helperCacheDir: helperDir,
      tmpRoot,
      limits: { fileBytes: MiB },
    });
    const { result, workspace } = await call({
      body: `fs.writeFileSync(ctx.workspace + '/big', Buffer.alloc(8 * ${MiB}, 1)); out.done = { ok: true };`,
      profile: { write: ['$WORKSPACE'] },
      maxWriteBytes: 64 * MiB,
      use: capped,
    });
    expect(result.ok ? 'ok' : `${result.error.class}: ${result.error.message}`).toMatch(
      /^ResourceLimit: .*file-size limit/,
    );
    expect(statSync(join(workspace, 'big')).size).toBe(MiB);
  });

  it('applies the 32 MiB default when the profile sets no max_write_bytes', async () => {
    const { result } = await call({
      body: `for (let i = 0; ; i++) fs.writeFileSync(ctx.workspace + '/chunk-' + (i % 48), Buffer.alloc(${MiB}, 1));`,
      profile: { write: ['$WORKSPACE'], durationMs: 15_000 },
    });
    expect(result.ok ? 'ok' : `${result.error.class}: ${result.error.message}`).toMatch(
      /^ResourceLimit: .*33554432 bytes/,
    );
  });

  it('lets a call write below the default', async () => {
    const { result } = await call({
      body: `for (let i = 0; i < 8; i++) fs.writeFileSync(ctx.workspace + '/chunk-' + i, Buffer.alloc(${MiB}, 1)); out.done = { ok: true };`,
      profile: { write: ['$WORKSPACE'], durationMs: 15_000 },
    });
    expect(result.ok, JSON.stringify(result).slice(0, 300)).toBe(true);
  });
});

describe('7b. the write meter does not depend on the host being free', () => {
  // Found by this suite: a meter on the host's event loop missed a burst while the host was busy.
  // The outer helper now stays as the sandbox's parent, reads the tree every 5 ms itself, and
  // checks the exact total of the reaped tree when it ends.
  it('stops a 96 MiB burst under the 32 MiB default even when the host is busy', async () => {
    const workspace = fresh('busy-host');
    const executor = await prepare({
      body: `fs.writeFileSync(ctx.workspace + '/go', '');
             await new Promise((resolve) => setTimeout(resolve, 300));
             for (let i = 0; i < 96; i++) fs.writeFileSync(ctx.workspace + '/chunk-' + i, Buffer.alloc(1024 * 1024, 1));
             out.done = { ok: true };`,
      profile: { write: ['$WORKSPACE'], durationMs: 15_000 },
    });
    const running = executor.invoke({}, workspace);
    while (!existsSync(join(workspace, 'go'))) await new Promise((resolve) => setTimeout(resolve, 5));
    // the host's event loop is busy for 2 s (synchronous work), as a long planner step would keep it
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      // busy
    }
    const { result } = await running;
    const written = readdirSync(workspace).filter((entry) => entry.startsWith('chunk-')).length;
    // the outer helper reads the tree every 5 ms whatever the host is doing: the overshoot is what
    // one reading interval lets through at memory speed (about 10 MiB here), never the whole burst
    expect(written, 'MiB written').toBeLessThan(64);
    expect(result.ok ? 'ok' : result.error.class).toBe('ResourceLimit');
  });
});

describe('7c. a full disk: the audit reserve records the call that filled it, then calls stop', () => {
  let workspace: string;
  let mounted = false;
  let filler: Awaited<ReturnType<typeof prepare>>;
  let small: Awaited<ReturnType<typeof prepare>>;

  beforeAll(async () => {
    if (!ROOT) return;
    workspace = fresh('tmpfs');
    mkdirSync(workspace);
    mounted =
      spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0700', 'tmpfs', workspace]).status === 0;
    filler = await prepare({
      body: `const chunk = Buffer.alloc(1024 * 1024, 1);
             let written = 0;
             try { for (let i = 0; ; i++) { fs.writeFileSync(ctx.workspace + '/fill-' + i, chunk); written++; } } catch (error) { out.stopped = { ok: true, value: error.code }; }
             out.written = { ok: true, value: written };`,
      profile: { write: ['$WORKSPACE'], durationMs: 20_000 },
      maxWriteBytes: 256 * 1024 * 1024,
    });
    small = await prepare({ body: MARK_BODY, profile: { write: ['$WORKSPACE'] } });
  });

  afterAll(() => {
    if (mounted) spawnSync('umount', ['-l', workspace]);
  });

  it.skipIf(!ROOT)('the call that fills a 64 MiB workspace still gets its audit line', async () => {
    expect(mounted, 'tmpfs mounted').toBe(true);
    const { result, observed, traceId } = await filler.invoke({}, workspace);
    expect(result.ok, JSON.stringify(result).slice(0, 300)).toBe(true);
    expect(observed.stopped).toEqual({ ok: true, value: 'ENOSPC' });
    expectAuditLine(workspace, traceId, { exit: 'ok' });
    expect(statSync(join(workspace, '.audit', '.reserve')).size).toBeLessThan(1024 * 1024);
  });

  it.skipIf(!ROOT)('the next call is refused with AuditUnavailable and does not run', async () => {
    const { result } = await small.invoke({}, workspace);
    expect(result).toMatchObject({ ok: false, error: { class: 'AuditUnavailable' } });
    expect(!result.ok && result.error.message).toMatch(/is full/);
    expect(existsSync(join(workspace, MARKER))).toBe(false);
    expect((await small.invoke({}, workspace)).result).toMatchObject({
      ok: false,
      error: { class: 'AuditUnavailable' },
    });
  });

  it.skipIf(!ROOT)(
    'once space is freed, calls run and are recorded again, with the reserve rebuilt',
    async () => {
      for (const entry of readdirSync(workspace))
        if (entry.startsWith('fill-')) rmSync(join(workspace, entry));
      const { result, traceId } = await small.invoke({}, workspace);
      expect(result.ok, JSON.stringify(result).slice(0, 300)).toBe(true);
      expect(existsSync(join(workspace, MARKER))).toBe(true);
      expectAuditLine(workspace, traceId, { exit: 'ok' });
      expect(statSync(join(workspace, '.audit', '.reserve')).size).toBe(1024 * 1024);
    },
  );
});

describe.concurrent('8. smaller holes', () => {
  describe('private $TMP: a profile reading the shared temp folder does not see other calls', () => {
    /** Starts a call that keeps a secret in its $TMP until the test releases it. */
    async function holdSecret(use: SandboxRunner = runner) {
      const workspace = fresh('tmp-holder');
      mkdirSync(workspace);
      const holder = await prepare({
        body: `fs.writeFileSync(ctx.tmpDir + '/secret.txt', 'CALL-SECRET');
               fs.writeFileSync(ctx.workspace + '/where.new', ctx.tmpDir);
               fs.renameSync(ctx.workspace + '/where.new', ctx.workspace + '/where');
               while (!fs.existsSync(ctx.workspace + '/release')) await new Promise((resolve) => setTimeout(resolve, 50));
               out.own = await attempt(() => fs.readFileSync(ctx.tmpDir + '/secret.txt', 'utf8'));`,
        profile: { read: ['$WORKSPACE'], write: ['$WORKSPACE', '$TMP'], durationMs: 20_000 },
        use,
      });
      const running = holder.invoke({}, workspace);
      for (let waited = 0; !existsSync(join(workspace, 'where')) && waited < 15_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const tmpDir = readFileSync(join(workspace, 'where'), 'utf8');
      return {
        tmpDir,
        async release() {
          writeFileSync(join(workspace, 'release'), '');
          const { result, observed } = await running;
          expect(result.ok, JSON.stringify(result).slice(0, 300)).toBe(true);
          expect(observed.own, 'the holder reads its own $TMP').toEqual({ ok: true, value: 'CALL-SECRET' });
        },
      };
    }

    it("lists the folder of all calls as empty and cannot open another call's file", async () => {
      const held = await holdSecret();
      const callsRoot = dirname(held.tmpDir);
      const { result, observed } = await call({
        body: `out.root = await attempt(() => fs.readdirSync(${JSON.stringify(tmpRoot)}));
               out.calls = await attempt(() => fs.readdirSync(${JSON.stringify(callsRoot)}));
               out.secret = await attempt(() => fs.readFileSync(${JSON.stringify(join(held.tmpDir, 'secret.txt'))}, 'utf8'));`,
        profile: { read: [tmpRoot] },
      });
      await held.release();
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(observed.calls).toEqual({ ok: true, value: [] });
      failed(observed, 'secret');
    });

    it("refuses an argument naming another call's file (forbidden-path)", async () => {
      const held = await holdSecret();
      const outcome = await call({
        body: READ_BODY,
        profile: { read: [tmpRoot] },
        args: { path: join(held.tmpDir, 'secret.txt') },
      });
      await held.release();
      expectRefusedBeforeStart(outcome, 'PolicyViolation', 'forbidden-path');
    });

    it('refuses a profile that reads the folder of all calls', async () => {
      const callsRoot = join(tmpRoot, `metnos-calls-${process.getuid?.() ?? 0}`);
      const outcome = await call({ profile: { read: [callsRoot] } });
      expectRefusedBeforeStart(outcome, 'PolicyViolation', 'profile-forbidden-path');
    });

    it('keeps the folder of all calls masked when the temp root is given through a symlink', async () => {
      const real = fresh('tmp-real');
      mkdirSync(real, { mode: 0o700 });
      const link = `${real}-link`;
      symlinkSync(real, link);
      const linked = createSandboxRunner({ home, configDir, helperCacheDir: helperDir, tmpRoot: link });
      const held = await holdSecret(linked);
      const { result, observed } = await call({
        body: `out.calls = await attempt(() => fs.readdirSync(${JSON.stringify(join(real, `metnos-calls-${process.getuid?.() ?? 0}`))}));`,
        profile: { read: [real] },
        use: linked,
      });
      await held.release();
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(observed.calls).toEqual({ ok: true, value: [] });
    });

    const unsafeRoots: Array<[string, (callsRoot: string) => void]> = [
      ['a symlink planted in its place', (callsRoot) => symlinkSync(fresh('elsewhere'), callsRoot)],
      ['a folder other users can read', (callsRoot) => mkdirSync(callsRoot, { mode: 0o755 })],
    ];
    for (const [what, plant] of unsafeRoots) {
      it(`refuses with IsolationUnavailable when the folder of all calls is ${what}`, async () => {
        const root = fresh('tmp-planted');
        mkdirSync(root, { mode: 0o700 });
        plant(join(root, `metnos-calls-${process.getuid?.() ?? 0}`));
        const planted = createSandboxRunner({ home, configDir, helperCacheDir: helperDir, tmpRoot: root });
        const workspace = fresh('tmp-planted-ws');
        const executor = await prepare({
          body: MARK_BODY,
          profile: { write: ['$WORKSPACE', '$TMP'] },
          use: planted,
        });
        const outcome = { ...(await executor.invoke({}, workspace)), workspace };
        expectRefusedBeforeStart(outcome, 'IsolationUnavailable');
        expect(!outcome.result.ok && outcome.result.error.message).toMatch(/private temp folders/);
      });
    }
  });

  describe('host-only error classes claimed by an executor become InvalidOutput', () => {
    for (const errorClass of [
      'PolicyViolation',
      'IsolationUnavailable',
      'NotInvocable',
      'ResourceLimit',
      'OutputTooLarge',
      'NonJsonOutput',
      'AuditUnavailable',
    ]) {
      it(`an executor returning ${errorClass} gets InvalidOutput`, async () => {
        const { result, traceId, workspace } = await call({
          code: `import { writeSync } from 'node:fs';
import { defineExecutor } from '@metnos/executor-sdk/define';
export default defineExecutor({ run() {
  writeSync(1, JSON.stringify({ ok: false, error: { class: ${JSON.stringify(errorClass)}, message: 'refused by the host (not really)' } }) + '\\n');
  process.exit(0);
} });
`,
        });
        expect(result).toMatchObject({ ok: false, error: { class: 'InvalidOutput' } });
        expect(!result.ok && result.error.message).toMatch(/only the host may emit/);
        expect(result.isolation?.tier).toBe('full');
        expectAuditLine(workspace, traceId, { error_class: 'InvalidOutput' });
      });
    }
  });

  describe('workspaces', () => {
    it('a symlinked workspace is resolved once: reads and writes land in the real folder', async () => {
      const real = fresh('ws-real');
      mkdirSync(real);
      writeFileSync(join(real, 'in.txt'), 'hello');
      const link = `${real}-link`;
      symlinkSync(real, link);
      const { result, observed, traceId } = await call({
        body: `out.workspace = { ok: true, value: ctx.workspace };
               out.read = await attempt(() => fs.readFileSync(ctx.workspace + '/' + args.path, 'utf8'));
               out.write = await attempt(() => fs.writeFileSync(ctx.workspace + '/out.txt', 'written'));`,
        profile: { read: ['$WORKSPACE'], write: ['$WORKSPACE'] },
        args: { path: 'in.txt' },
        workspace: link,
      });
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(observed.workspace).toEqual({ ok: true, value: real });
      expect(observed.read).toEqual({ ok: true, value: 'hello' });
      expect(readFileSync(join(real, 'out.txt'), 'utf8')).toBe('written');
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expectAuditLine(real, traceId, { exit: 'ok' });
    });

    it('a symlinked workspace still refuses a path argument that climbs out of it', async () => {
      const real = fresh('ws-real');
      mkdirSync(real);
      const link = `${real}-link`;
      symlinkSync(real, link);
      const outcome = await call({
        body: READ_BODY,
        profile: { read: ['$WORKSPACE'] },
        args: { path: '../outside.txt' },
        workspace: link,
      });
      expectRefusedBeforeStart({ ...outcome, workspace: real }, 'PolicyViolation', 'outside-allow-list');
    });

    it('a missing workspace is created (private) before the call', async () => {
      const workspace = join(fresh('ws-missing'), 'a', 'b');
      const { result, traceId } = await call({
        body: MARK_BODY,
        profile: { write: ['$WORKSPACE'] },
        workspace,
      });
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(statSync(workspace).mode & 0o077).toBe(0);
      expect(existsSync(join(workspace, MARKER))).toBe(true);
      expectAuditLine(workspace, traceId, { exit: 'ok' });
    });
  });

  describe('deeply nested arguments', () => {
    const nest = (levels: number, wrap: (inner: unknown) => unknown) => {
      let value: unknown = 'leaf';
      for (let level = 0; level < levels; level++) value = wrap(value);
      return value;
    };
    const shapes: Array<[string, unknown]> = [
      ['10,000 levels of objects', nest(10_000, (inner) => ({ inner }))],
      ['10,000 levels of arrays', { list: nest(9_999, (inner) => [inner]) }],
      ['65 levels, one past the limit', nest(65, (inner) => ({ inner }))],
    ];
    for (const [what, args] of shapes) {
      it(`gives InvalidInput with an audit line for ${what}`, async () => {
        const { result, traceId, workspace } = await call({
          body: MARK_BODY,
          profile: { write: ['$WORKSPACE'] },
          args,
        });
        expect(result).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
        expect(!result.ok && result.error.message).toMatch(/deeper than 64 levels/);
        expect(existsSync(join(workspace, MARKER))).toBe(false);
        expectAuditLine(workspace, traceId, { exit: 'policy', error_class: 'InvalidInput' });
      });
    }

    it('runs a call at exactly 64 levels', async () => {
      const { result } = await call({
        body: MARK_BODY,
        profile: { write: ['$WORKSPACE'] },
        args: nest(64, (inner) => ({ inner })),
      });
      expect(result.ok, JSON.stringify(result).slice(0, 300)).toBe(true);
    });
  });
});
