import { createHash } from 'node:crypto';
import {
  type Dirent,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { ARTEFACTS, RESERVED_DIRS } from './artefacts.ts';
import type { ProtectedPath } from './context.ts';
import { LifecycleError, VerificationError } from './errors.ts';
import type { PublicKey } from './keys.ts';
import {
  type LifecycleRecord,
  type LifecycleState,
  type LifecycleStore,
  openLifecycleStore,
} from './lifecycle.ts';
import { compareVersions } from './manifest.ts';
import { hasOnlyKeys, isOptionalString, isPlainObject, isVersionOneMap } from './shape.ts';
import { writeFileAtomic, writeFileAtomicSync } from './sign.ts';
import type { SignatureBackend } from './signature.ts';
import type { VerificationCache } from './verification-cache.ts';
import {
  artefactStamps,
  type VerifiedExecutor,
  type VerifyOutcome,
  verifyExecutor,
  verifyExecutors,
} from './verify.ts';

/** A version that failed a check: kept on disk, never invoked, listed with its reason. */
export interface QuarantineEntry {
  name: string;
  version: string | undefined;
  dir: string;
  reason: VerificationError['reason'];
  artefact: string | undefined;
  message: string;
}

/** One row of {@link Catalog.list}. */
export interface CatalogListing {
  name: string;
  version: string;
  state: LifecycleState;
  current: boolean;
  reason: string | undefined;
  summary: string | undefined;
  dir: string;
}

/** Settings of {@link createCatalog}. */
export interface CatalogSettings {
  /** The executors directory. */
  root: string;
  /** Keys whose signatures are accepted; configured explicitly, nothing is trusted by default. */
  trustedKeys: readonly PublicKey[];
  /**
   * Where the version ledger and lifecycle file live. Default: a folder of the
   * user's state dir for this executors folder ({@link defaultStateDir}), where
   * no executor can write; never inside the executors folder.
   */
  stateDir?: string;
  /** `update` (default) records accepted versions; `check` reads the ledger without writing. */
  ledger?: 'update' | 'check';
  /** How signatures are checked (default `node`, OpenSSL on libuv's thread pool). */
  backend?: SignatureBackend;
  /**
   * Versions that passed every check on this machine, so a restart re-reads and
   * re-hashes every artefact but skips the Ed25519 step and the manifest checks
   * of bytes it has already checked ({@link openVerificationCache}). Saved with
   * the ledger. Off when absent.
   */
  verificationCache?: VerificationCache;
  clock?: () => Date;
}

export const ledgerSchema = z.object({
  version: z.literal(1),
  executors: z.record(
    z.string(),
    z.object({
      highest: z.string(),
      current: z.string().optional(),
      accepted: z.record(z.string(), z.string()),
    }),
  ),
});
type Ledger = z.infer<typeof ledgerSchema>;

/** Marks a version a ledger-less load knows from the lifecycle file as once active. */
const SEEN_ACTIVE = '(seen active)';

/**
 * The default state folder of an executors folder: `<state home>/metnos/catalogs/<hash of its real path>`,
 * where the state home is `$XDG_STATE_HOME`, else `~/.local/state`, else (no usable home) a private
 * folder under the temp dir. Outside the executors folder, so no executor that writes there reaches it.
 *
 * @example
 * defaultStateDir('/home/me/metnos/executors'); // '/home/me/.local/state/metnos/catalogs/3f…'
 */
export function defaultStateDir(root: string): string {
  let real = resolve(root);
  try {
    real = realpathSync(real);
  } catch {
    // not there yet: its written form names it
  }
  const digest = createHash('sha256').update(real).digest('hex').slice(0, 16);
  return join(stateHome(), 'metnos', 'catalogs', digest);
}

function stateHome(): string {
  if (process.env.XDG_STATE_HOME) return process.env.XDG_STATE_HOME;
  const home = homedir();
  const uid = process.getuid?.() ?? 0;
  try {
    const info = statSync(home);
    if (info.isDirectory() && info.uid === uid) return join(home, '.local', 'state');
  } catch {
    // no usable home
  }
  return join(tmpdir(), `metnos-state-${uid}`);
}

/** What `ledgerSchema` accepts unchanged, checked by hand (see shape.ts). */
export function isLedger(data: unknown): data is Ledger {
  return isVersionOneMap(
    data,
    (entry) =>
      isPlainObject(entry) &&
      hasOnlyKeys(entry, ['highest', 'accepted'], ['current']) &&
      typeof entry.highest === 'string' &&
      isOptionalString(entry.current) &&
      isPlainObject(entry.accepted) &&
      Object.values(entry.accepted).every((signature) => typeof signature === 'string'),
  );
}

interface Candidate {
  name: string;
  dir: string;
  /** The version named by the folder, for versioned layouts. */
  folderVersion: string | undefined;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

const SIGNED_FILES = new Set<string>([ARTEFACTS.signature, ARTEFACTS.profileLock]);

/** Folders in the order of their paths, as the catalog has always verified them. */
function byDir(a: Candidate, b: Candidate): number {
  return a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0;
}

/** A directory listing, or undefined when the directory cannot be listed. */
function listing(dir: string): Dirent[] | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
}

/** Whether `entry` of `parent` is a directory, or a symbolic link to one. */
function isDir(parent: string, entry: Dirent): boolean {
  return (
    entry.isDirectory() ||
    (entry.isSymbolicLink() &&
      statSync(join(parent, entry.name), { throwIfNoEntry: false })?.isDirectory() === true)
  );
}

/**
 * The executor folders under `root`, each taken first for the common flat layout
 * (`<name>/manifest.toml`). Whether a folder really is flat is known once its manifest has been
 * read: a folder verified is; one that failed and has no manifest is looked into by
 * {@link versionFolders}. One listing in all, so a catalog of thousands does not pay an
 * existence check per folder before its files are read anyway.
 */
function executorFolders(root: string): Candidate[] {
  const candidates: Candidate[] = [];
  // join(root, name) for every name, with the root normalised once (names hold no `/`)
  const prefix = join(root, '_').slice(0, -1);
  for (const entry of listing(root) ?? []) {
    const name = entry.name;
    if (RESERVED_DIRS.has(name) || name.startsWith('.') || !isDir(root, entry)) continue;
    candidates.push({ name, dir: prefix + name, folderVersion: undefined });
  }
  return candidates;
}

/**
 * What a folder without `manifest.toml` holds: its version folders (`<name>/<version>/`) and the
 * version `CURRENT` names (null when it names none), or the folder itself when it has no
 * versions but signed files (a single-version executor that lost its manifest is verified, and
 * quarantined, not skipped), or nothing.
 */
function versionFolders(folder: Candidate): { candidates: Candidate[]; current?: string | null } {
  const { name, dir } = folder;
  const entries = listing(dir);
  if (!entries) return { candidates: [] };
  const versions = entries
    .filter((item) => /^\d+\.\d+\.\d+/.test(item.name) && isDir(dir, item))
    .map((item) => item.name);
  if (versions.length === 0) {
    return { candidates: entries.some((item) => SIGNED_FILES.has(item.name)) ? [folder] : [] };
  }
  let current: string | null;
  try {
    current = readFileSync(join(dir, ARTEFACTS.current), 'utf8').trim();
  } catch {
    current = null;
  }
  return {
    candidates: versions.map((version) => ({ name, dir: join(dir, version), folderVersion: version })),
    current,
  };
}

/** A verified version that sits in the wrong folder: the folder names the executor and version. */
function placementError(candidate: Candidate, executor: VerifiedExecutor): VerificationError | undefined {
  if (executor.name !== candidate.name) {
    return new VerificationError({
      reason: 'name_mismatch',
      artefact: ARTEFACTS.manifest,
      message: `${candidate.dir}: manifest names "${executor.name}" but the folder is "${candidate.name}"`,
    });
  }
  if (candidate.folderVersion !== undefined && candidate.folderVersion !== executor.version) {
    return new VerificationError({
      reason: 'name_mismatch',
      artefact: ARTEFACTS.manifest,
      message: `${candidate.dir}: manifest version ${executor.version} does not match the folder ${candidate.folderVersion}`,
    });
  }
  return undefined;
}

/**
 * The executor catalog: scans a directory, verifies every version, keeps the
 * valid ones in memory, and quarantines the rest with a reason. Several
 * versions of one executor live side by side; `CURRENT` names the default.
 * A version lower than one already accepted for the same name is refused as a
 * rollback. Re-verification at every call costs a few `stat`s while the files
 * are unchanged, and a full check when they change.
 *
 * @example
 * const catalog = createCatalog({ root: 'executors', trustedKeys: [await readPublicKey('keys/metnos-release.pub')] });
 * const report = await catalog.load();
 * const fsRead = catalog.get('fs_read');
 */
export function createCatalog(settings: CatalogSettings) {
  const root = settings.root;
  const stateDir = settings.stateDir ?? defaultStateDir(root);
  /** Where ledgers lived before they moved out of the executors folder: read, never trusted to allow. */
  const legacyLedgerPath = join(root, '.state', 'ledger.json');
  const ledgerPath = join(stateDir, 'ledger.json');
  const archiveDir = join(root, '.archive');
  const verifySettings = {
    trustedKeys: settings.trustedKeys,
    backend: settings.backend,
    verificationCache: settings.verificationCache,
  };

  let executors = new Map<string, Map<string, VerifiedExecutor>>();
  let defaults = new Map<string, string>();
  let quarantined: QuarantineEntry[] = [];
  let lifecycle: LifecycleStore | undefined;
  let ledger: Ledger = { version: 1, executors: {} };
  /** Whether `ledger` holds the file's content yet: a write before that would replace it with nothing. */
  let ledgerRead = false;

  /** Reads the ledger once, for the calls that may write it before any load. */
  async function ensureLedger(): Promise<void> {
    if (ledgerRead) return;
    ledger = await readLedger();
    ledgerRead = true;
  }

  const id = (name: string, version: string) => `${name}@${version}`;

  async function readLedgerFile(path: string): Promise<Ledger | undefined> {
    try {
      // Stryker disable next-line StringLiteral: without an encoding readFile gives a Buffer, which JSON.parse reads as UTF-8 all the same
      const data: unknown = JSON.parse(await readFile(path, 'utf8'));
      // Stryker disable next-line ConditionalExpression: the fast path; the schema below accepts the same file unchanged
      if (isLedger(data)) return data;
      const parsed = ledgerSchema.safeParse(data);
      if (parsed.success) return parsed.data;
      throw new LifecycleError(
        `${path} is not a Metnos version ledger; refusing to load without rollback protection`,
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw LifecycleError.isInstance(error) ? error : new LifecycleError(`cannot read ${path}`, error);
    }
  }

  /** Versions seen before without a ledger to say so: nothing below them is accepted unasked. */
  let seenWithoutLedger = new Map<string, string>();

  async function readLedger(): Promise<Ledger> {
    seenWithoutLedger = new Map();
    const found = await readLedgerFile(ledgerPath);
    if (found) return found;
    // No ledger: rebuild what the lifecycle file and a ledger from the old place remember, for
    // refusals only. A version lower than the highest seen, and not itself seen active, is refused.
    const rebuilt: Ledger = { version: 1, executors: {} };
    const note = (name: string, version: string, accepted: boolean) => {
      const entry = rebuilt.executors[name] ?? { highest: version, accepted: {} };
      if (compareVersions(version, entry.highest) > 0) entry.highest = version;
      if (accepted) entry.accepted[version] = SEEN_ACTIVE;
      rebuilt.executors[name] = entry;
    };
    const legacy = await readLedgerFile(legacyLedgerPath).catch(() => undefined);
    for (const [name, entry] of Object.entries(legacy?.executors ?? {})) note(name, entry.highest, false);
    for (const [key, record] of Object.entries((await store()).all())) {
      const at = key.lastIndexOf('@');
      if (at <= 0) continue;
      note(
        key.slice(0, at),
        key.slice(at + 1),
        record.state !== 'quarantined' && record.state !== 'archived',
      );
    }
    for (const [name, entry] of Object.entries(rebuilt.executors)) seenWithoutLedger.set(name, entry.highest);
    return rebuilt;
  }

  async function store(): Promise<LifecycleStore> {
    lifecycle ??= await openLifecycleStore(join(stateDir, 'lifecycle.json'), settings.clock);
    return lifecycle;
  }

  function quarantine(entry: QuarantineEntry, signature?: string, updateRecord = true) {
    quarantined.push(entry);
    if (!updateRecord || !entry.version || !lifecycle) return;
    const key = id(entry.name, entry.version);
    lifecycle.introduce(key, 'quarantined', entry.message);
    const record = lifecycle.get(key)!;
    if (record.state !== 'archived') {
      lifecycle.transition(key, 'quarantined', entry.message, signature ? { signature } : {});
    }
  }

  function toQuarantine(candidate: Candidate, error: unknown, version?: string): QuarantineEntry {
    if (VerificationError.isInstance(error)) {
      return {
        name: candidate.name,
        version: version ?? candidate.folderVersion,
        dir: candidate.dir,
        reason: error.reason,
        artefact: error.artefact,
        message: error.message,
      };
    }
    return {
      name: candidate.name,
      version: version ?? candidate.folderVersion,
      dir: candidate.dir,
      reason: 'manifest_invalid',
      artefact: undefined,
      message: `unexpected failure while verifying: ${(error as Error)?.message ?? String(error)}`,
    };
  }

  /** The signature of a version as stored, used to tell a re-signed copy from the same one. */
  async function signatureDigest(dir: string): Promise<string> {
    // Stryker disable next-line StringLiteral,ArrowFunction: exec() reads a Buffer as its text, and no fallback for a missing file has a match
    const text = await readFile(join(dir, ARTEFACTS.signature), 'utf8').catch(() => '');
    return /"signature":\s*"([^"]+)"/.exec(text)?.[1] ?? '';
  }

  /**
   * Admits a verified version through the rollback ledger and lifecycle. Returns a refusal
   * (and whether the lifecycle should record it) or undefined. `previous` is the ledger as it
   * was before this load, so versions that appear together are not rollbacks of each other.
   */
  function admit(
    executor: VerifiedExecutor,
    signature: string,
    life: LifecycleStore,
    previous: Ledger,
  ): { refusal: QuarantineEntry; record: boolean } | undefined {
    const entry = previous.executors[executor.name];
    const candidateInfo = { name: executor.name, dir: executor.dir, version: executor.version };
    if (
      entry &&
      compareVersions(executor.version, entry.highest) < 0 &&
      entry.accepted[executor.version] !== signature &&
      entry.accepted[executor.version] !== SEEN_ACTIVE
    ) {
      const seen = seenWithoutLedger.get(executor.name);
      return {
        record: true,
        refusal: {
          ...candidateInfo,
          reason: 'rollback',
          artefact: ARTEFACTS.manifest,
          message: seen
            ? `${id(executor.name, executor.version)} is lower than ${seen}, which Metnos has seen before, and the version ledger ${ledgerPath} is missing: refused as a possible rollback (restore the ledger, or accept this version with \`metnos executor rehabilitate ${executor.name} ${executor.version}\`)`
            : `${id(executor.name, executor.version)} is lower than ${entry.highest}, already accepted: rollback refused`,
        },
      };
    }
    const key = id(executor.name, executor.version);
    const record = life.get(key);
    if (record?.state === 'quarantined' && record.signature === signature) {
      // The record keeps its original reason, so this message does not grow at every load.
      return {
        record: false,
        refusal: {
          ...candidateInfo,
          reason: 'signature_invalid',
          artefact: undefined,
          message: `${key} stays quarantined (${record.reason}); re-sign it or run \`metnos executor rehabilitate\``,
        },
      };
    }
    if (record?.state === 'archived') return undefined;
    // Stryker disable next-line ConditionalExpression: introduce() leaves an existing record as it is
    if (!record) {
      life.introduce(key, executor.manifest.executor.created_by === 'seed' ? 'seed' : 'active');
    }
    const state = life.get(key)!.state;
    if (state === 'seed' || state === 'quarantined') life.transition(key, 'active', 'signature verified');
    const next = ledger.executors[executor.name] ?? { highest: executor.version, accepted: {} };
    next.accepted[executor.version] = signature;
    if (compareVersions(executor.version, next.highest) > 0) next.highest = executor.version;
    ledger.executors[executor.name] = next;
    return undefined;
  }

  /**
   * Every executor version under the root with its outcome, in folder order. The folders are
   * verified as flat executors first; one that failed without a `manifest.toml` is a versioned
   * executor (or no executor), whose version folders are verified after.
   */
  async function verifyFolders(): Promise<{
    candidates: Candidate[];
    outcomes: VerifyOutcome[];
    currents: Map<string, string | null>;
  }> {
    const folders = executorFolders(root);
    const first = await verifyExecutors(
      folders.map((folder) => folder.dir),
      verifySettings,
    );
    const found: { candidate: Candidate; outcome: VerifyOutcome | undefined }[] = [];
    const currents = new Map<string, string | null>();
    for (const [index, folder] of folders.entries()) {
      const outcome = first[index]!;
      // verified, so its manifest was there; or failed with its manifest there
      if (outcome.executor || existsSync(join(folder.dir, ARTEFACTS.manifest))) {
        found.push({ candidate: folder, outcome });
        continue;
      }
      const { candidates, current } = versionFolders(folder);
      // Stryker disable next-line ConditionalExpression: a name without versions reads as undefined from currents either way
      if (current !== undefined) currents.set(folder.name, current);
      // the folder itself (no versions, but signed files) keeps the outcome it has
      for (const candidate of candidates) {
        // Stryker disable next-line ConditionalExpression: verifying that folder again gives the same outcome, at a cost
        found.push({ candidate, outcome: candidate === folder ? outcome : undefined });
      }
    }
    const versions = found.filter(({ outcome }) => outcome === undefined);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: verifying no folder gives no outcome
    if (versions.length > 0) {
      const more = await verifyExecutors(
        versions.map(({ candidate }) => candidate.dir),
        verifySettings,
      );
      for (const [index, entry] of versions.entries()) entry.outcome = more[index];
    }
    // Stryker disable next-line all: libuv lists a directory in order where tests run; not every system does
    found.sort((a, b) => byDir(a.candidate, b.candidate));
    return {
      candidates: found.map(({ candidate }) => candidate),
      outcomes: found.map(({ outcome }) => outcome!),
      currents,
    };
  }

  async function saveState(): Promise<void> {
    if (settings.ledger === 'check') return;
    // Each file is replaced whole (written, flushed, renamed): a crash leaves each one either as
    // it was or as it is now. Written here, without a trip through libuv's pool per step.
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    // one line: a catalog of thousands writes these at every load (`metnos executor list` shows them)
    writeFileAtomicSync(ledgerPath, `${JSON.stringify(ledger)}\n`);
    // Stryker disable next-line OptionalChaining: every caller opens the lifecycle store before it saves
    lifecycle?.saveNow();
    // A cache that cannot be written costs the next start time, never correctness.
    await settings.verificationCache?.save();
  }

  const catalog = {
    root,

    /** The folders that decide what this catalog loads: no executor may write them. */
    protectedPaths(): ProtectedPath[] {
      return [
        { path: root, why: 'the executors folder Metnos loads' },
        { path: stateDir, why: "the executors' version ledger and lifecycle state" },
      ];
    },

    /**
     * Scans and verifies everything. Safe to call again: the previous view is
     * replaced. Never throws for a bad executor; throws only when the state
     * files themselves are unreadable.
     */
    async load(): Promise<{ loaded: VerifiedExecutor[]; quarantined: QuarantineEntry[] }> {
      ledger = await readLedger();
      ledgerRead = true;
      const previous = structuredClone(ledger);
      const life = await store();
      const nextExecutors = new Map<string, Map<string, VerifiedExecutor>>();
      const nextDefaults = new Map<string, string>();
      quarantined = [];
      const { candidates, outcomes, currents } = await verifyFolders();
      const results: {
        candidate: Candidate;
        executor?: VerifiedExecutor;
        error?: unknown;
        signature: string;
      }[] = [];
      // only a refused version needs its signature read again, from its file
      const refusedSignatures: Promise<void>[] = [];
      for (const [index, candidate] of candidates.entries()) {
        const outcome = outcomes[index]!;
        const error = outcome.error ?? placementError(candidate, outcome.executor!);
        if (error === undefined) {
          results.push({ candidate, executor: outcome.executor, signature: outcome.executor!.signature });
          continue;
        }
        const result = { candidate, error, signature: '' };
        results.push(result);
        refusedSignatures.push(
          signatureDigest(candidate.dir).then((signature) => {
            result.signature = signature;
          }),
        );
      }
      await Promise.all(refusedSignatures);
      const ordered = results.sort((a, b) =>
        a.executor && b.executor ? compareVersions(b.executor.version, a.executor.version) : 0,
      );
      for (const result of ordered) {
        if (!result.executor) {
          const entry = toQuarantine(result.candidate, result.error);
          if (!entry.version) {
            const versionMatch = /version\s*=\s*"([^"]+)"/.exec(
              // Stryker disable next-line StringLiteral,ArrowFunction: exec() reads a Buffer as its text, and no fallback for a missing file has a match
              await readFile(join(result.candidate.dir, ARTEFACTS.manifest), 'utf8').catch(() => ''),
            );
            entry.version = versionMatch?.[1];
          }
          // Only a verdict on the files is remembered: a failure of Metnos itself (a bug, a
          // missing module) must not keep a good executor quarantined once it is fixed.
          quarantine(entry, result.signature, VerificationError.isInstance(result.error));
          continue;
        }
        const admission = admit(result.executor, result.signature, life, previous);
        if (admission) {
          quarantine(admission.refusal, result.signature, admission.record);
          continue;
        }
        // Stryker disable next-line OptionalChaining: admit() has introduced the record of every version it lets through
        if (life.get(id(result.executor.name, result.executor.version))?.state === 'archived') continue;
        const versions = nextExecutors.get(result.executor.name) ?? new Map();
        versions.set(result.executor.version, result.executor);
        nextExecutors.set(result.executor.name, versions);
      }
      for (const [name, versions] of nextExecutors) {
        const current = currents.get(name);
        if (current === undefined) {
          nextDefaults.set(name, [...versions.keys()][0]!);
          continue;
        }
        // Stryker disable next-line OptionalChaining: admit() has written the ledger entry of every name with a loaded version
        const ledgerCurrent = ledger.executors[name]?.current;
        if (current === null) {
          quarantined.push({
            name,
            version: undefined,
            dir: join(root, name),
            reason: 'current_invalid',
            artefact: ARTEFACTS.current,
            message: `${name} has several versions but no ${ARTEFACTS.current} file naming the default`,
          });
        } else if (!versions.has(current)) {
          quarantined.push({
            name,
            version: current,
            dir: join(root, name),
            reason: 'current_invalid',
            artefact: ARTEFACTS.current,
            message: `${name}/${ARTEFACTS.current} names ${current}, which is not a valid loaded version`,
          });
        } else if (ledgerCurrent && compareVersions(current, ledgerCurrent) < 0) {
          quarantined.push({
            name,
            version: current,
            dir: join(root, name),
            reason: 'rollback',
            artefact: ARTEFACTS.current,
            message: `${name}/${ARTEFACTS.current} moved back from ${ledgerCurrent} to ${current}: use \`metnos executor promote\` to do that deliberately`,
          });
        } else {
          nextDefaults.set(name, current);
          ledger.executors[name]!.current = current;
        }
      }
      executors = nextExecutors;
      defaults = nextDefaults;
      await saveState();
      return { loaded: [...executors.values()].flatMap((versions) => [...versions.values()]), quarantined };
    },

    /** The default (or the named) version of an executor, if loaded and invocable. */
    get(name: string, version?: string): VerifiedExecutor | undefined {
      const versions = executors.get(name);
      const chosen = version ?? defaults.get(name);
      return chosen === undefined ? undefined : versions?.get(chosen);
    },

    /** Every invocable default version, sorted by name. */
    executors(): VerifiedExecutor[] {
      return [...defaults.entries()]
        .map(([name, version]) => executors.get(name)?.get(version))
        .filter((executor): executor is VerifiedExecutor => executor !== undefined)
        .sort((a, b) => a.name.localeCompare(b.name));
    },

    /** Quarantined versions from the last load, with reasons. */
    quarantined(): readonly QuarantineEntry[] {
      return quarantined;
    },

    /** Every known version with its lifecycle state and reason. */
    list(): CatalogListing[] {
      const rows: CatalogListing[] = [];
      const records = lifecycle?.all() ?? {};
      const seen = new Set<string>();
      for (const [name, versions] of executors) {
        for (const [version, executor] of versions) {
          const record = records[id(name, version)];
          seen.add(id(name, version));
          rows.push({
            name,
            version,
            state: record?.state ?? 'active',
            current: defaults.get(name) === version,
            reason: record?.reason,
            summary: executor.manifest.executor.summary,
            dir: executor.dir,
          });
        }
      }
      for (const entry of quarantined) {
        const key = entry.version ? id(entry.name, entry.version) : entry.name;
        if (seen.has(key)) {
          const row = rows.find((candidate) => id(candidate.name, candidate.version) === key);
          if (row) row.reason = entry.message;
          continue;
        }
        seen.add(key);
        rows.push({
          name: entry.name,
          version: entry.version ?? '?',
          state: 'quarantined',
          current: false,
          reason: entry.message,
          summary: undefined,
          dir: entry.dir,
        });
      }
      for (const [key, record] of Object.entries(records)) {
        if (seen.has(key) || record.state !== 'archived') continue;
        const [name = key, version = '?'] = key.split('@');
        rows.push({
          name,
          version,
          state: 'archived',
          current: false,
          reason: record.reason,
          summary: undefined,
          dir: record.path ?? '',
        });
      }
      return rows.sort((a, b) => a.name.localeCompare(b.name) || compareVersions(b.version, a.version));
    },

    /**
     * Re-checks an executor before a call. Unchanged files (same device, inode,
     * size, mtime and ctime) cost only `stat`s; any change triggers a full
     * verification, and a failure quarantines the version and throws.
     */
    async reverify(executor: VerifiedExecutor): Promise<VerifiedExecutor> {
      await ensureLedger();
      const stamps = await artefactStamps(executor.dir, executor.manifest.executor.entry);
      if (stamps === executor.stamps) return executor;
      try {
        const fresh = await verifyExecutor(executor.dir, verifySettings);
        if (fresh.name !== executor.name || fresh.version !== executor.version) {
          throw new VerificationError({
            reason: 'name_mismatch',
            artefact: ARTEFACTS.manifest,
            message: `${executor.dir} changed identity from ${id(executor.name, executor.version)} to ${id(fresh.name, fresh.version)}`,
          });
        }
        executors.get(executor.name)?.set(executor.version, fresh);
        return fresh;
      } catch (error) {
        executors.get(executor.name)?.delete(executor.version);
        if (defaults.get(executor.name) === executor.version) defaults.delete(executor.name);
        await store();
        quarantine(
          toQuarantine(
            { name: executor.name, dir: executor.dir, folderVersion: executor.version },
            error,
            executor.version,
          ),
          await signatureDigest(executor.dir),
        );
        await saveState();
        throw error;
      }
    },

    /** Moves a version (default: every version) to `.archive/`; it is no longer loaded. */
    async archive(name: string, version?: string, reason = 'archived by hand'): Promise<string[]> {
      await ensureLedger();
      const life = await store();
      const versions = version ? [version] : [...(executors.get(name)?.keys() ?? [])];
      const fromQuarantine = quarantined.filter(
        (entry) => entry.name === name && entry.version && (!version || entry.version === version),
      );
      const targets = new Map<string, string>();
      for (const v of versions) {
        const executor = executors.get(name)?.get(v);
        if (executor) targets.set(v, executor.dir);
      }
      for (const entry of fromQuarantine) targets.set(entry.version!, entry.dir);
      if (targets.size === 0)
        throw new LifecycleError(
          `no loaded or quarantined version of ${name}${version ? `@${version}` : ''} to archive`,
        );
      const moved: string[] = [];
      for (const [v, dir] of targets) {
        const key = id(name, v);
        const record = life.get(key);
        if (
          record &&
          record.state !== 'archived' &&
          !['active', 'quarantined', 'below_threshold', 'fused'].includes(record.state)
        ) {
          throw new LifecycleError(`${key} cannot be archived from ${record.state}`);
        }
        const destination = join(archiveDir, name, v);
        await mkdir(join(archiveDir, name), { recursive: true });
        if (await exists(destination)) throw new LifecycleError(`${destination} already exists`);
        await rename(dir, destination);
        life.introduce(key, 'active');
        life.transition(key, 'archived', reason, { path: relative(root, dir) });
        executors.get(name)?.delete(v);
        if (defaults.get(name) === v) defaults.delete(name);
        quarantined = quarantined.filter((entry) => !(entry.name === name && entry.version === v));
        moved.push(key);
      }
      await saveState();
      return moved;
    },

    /** Moves an archived version back and verifies it; a failure leaves it quarantined. */
    async rehabilitate(name: string, version: string): Promise<VerifiedExecutor> {
      await ensureLedger();
      const life = await store();
      const key = id(name, version);
      const record: LifecycleRecord | undefined = life.get(key);
      const archived = join(archiveDir, name, version);
      if (record?.state === 'archived' && (await exists(archived))) {
        const destination = join(root, record.path ?? join(name, version));
        if (await exists(destination))
          throw new LifecycleError(`${destination} already exists; remove it first`);
        // Stryker disable next-line StringLiteral: rename() then replaces the empty folder mkdir() made (POSIX)
        await mkdir(join(destination, '..'), { recursive: true });
        await rename(archived, destination);
        const executor = await verifyExecutor(destination, verifySettings).catch(async (error) => {
          life.transition(key, 'quarantined', (error as Error).message);
          await saveState();
          throw error;
        });
        life.transition(key, 'active', 'rehabilitated');
        await saveState();
        await catalog.load();
        return executor;
      }
      if (record?.state === 'quarantined') {
        const entry = quarantined.find(
          (candidate) => candidate.name === name && candidate.version === version,
        );
        const dir = entry?.dir ?? join(root, name);
        const executor = await verifyExecutor(dir, verifySettings);
        life.transition(key, 'active', 'rehabilitated after a new verification');
        // The person's explicit word: this version, with this signature, is accepted even below the highest.
        const accepted = ledger.executors[name] ?? { highest: version, accepted: {} };
        accepted.accepted[version] = executor.signature;
        ledger.executors[name] = accepted;
        await saveState();
        await catalog.load();
        return executor;
      }
      if (record?.state === 'archived') {
        throw new LifecycleError(
          `${key} is archived but its copy ${archived} is gone; restore that folder, or install the version again`,
        );
      }
      throw new LifecycleError(
        `${key} is not archived or quarantined (state: ${record?.state ?? 'unknown'})`,
      );
    },

    /** Makes `version` the default, writing `CURRENT`; the deliberate way to move back. */
    async promote(name: string, version: string): Promise<void> {
      await ensureLedger();
      const executor = executors.get(name)?.get(version);
      if (!executor) throw new LifecycleError(`${id(name, version)} is not a loaded version`);
      const parent = join(executor.dir, '..');
      if (!(await exists(join(parent, version)))) {
        throw new LifecycleError(`${name} uses the single-version layout; there is nothing to promote`);
      }
      await writeFileAtomic(join(parent, ARTEFACTS.current), `${version}\n`);
      const entry = ledger.executors[name];
      if (entry) entry.current = version;
      defaults.set(name, version);
      quarantined = quarantined.filter(
        (candidate) => !(candidate.name === name && candidate.artefact === ARTEFACTS.current),
      );
      await saveState();
    },

    /** The lifecycle store, for transitions other components drive (ager, synt). */
    async lifecycle(): Promise<LifecycleStore> {
      return store();
    },
  };
  return catalog;
}

export type Catalog = ReturnType<typeof createCatalog>;
