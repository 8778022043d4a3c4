// A hand-written check of a parsed `manifest.toml`, the way shape.ts checks the
// ledger and the signature files: it accepts only what `manifestSchema` accepts,
// and returns what the schema would return (defaults filled in, keys in the
// schema's order); anything else returns undefined and goes through the schema,
// which decides and gives the precise message. A fresh process otherwise pays
// zod's warm-up on every manifest of a large catalog.
import type { Manifest } from './manifest.ts';
import { ISOLATION_TIERS } from './profile.ts';
import { HOST_ONLY_ERROR_CLASSES } from './result.ts';
import { hasOnlyKeys, isPlainObject, NO_KEYS } from './shape.ts';

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-.]+)?(?:\+[0-9A-Za-z-.]+)?$/;
const NAME = /^[a-z][a-z0-9_]{1,63}$/;
const CREATED_BY = /^(seed|user|synt:[A-Za-z0-9_-]+)$/;
const CAPABILITY = /^[a-z]+:[a-z_]+$/;
const ENTRY = /^[A-Za-z0-9_-]+\.(ts|mjs|js)$/;
const SCHEMA_REF = /^schema\.json#\/(definitions|\$defs)\/[A-Za-z0-9_]+$/;
const ERROR_CLASS = /^[A-Z][A-Za-z0-9]*$/;
const PROFILE_HASH = /^blake3:[0-9a-f]{64}$/;
const PATH_ENTRY = /^\$(WORKSPACE|HOME|TMP)(\/|$)/;
const DOMAIN_ENTRY =
  /^((\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+(:\d{1,5})?|\$CREDENTIAL:[a-z][a-z_]{0,31})$/;
const BINARY = /^[A-Za-z0-9._+-]+$/;
/** What `Date#toISOString` prints for an instant in years 0–9999: always a valid calendar date. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOST_ONLY = new Set<string>(HOST_ONLY_ERROR_CLASSES);

type Checked<T> = T | undefined;

function stringsMatching(value: unknown, pattern: RegExp, fallback?: string[]): Checked<string[]> {
  if (value === undefined) return fallback;
  if (!Array.isArray(value)) return undefined;
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (typeof item !== 'string' || !pattern.test(item)) return undefined;
  }
  return value as string[];
}

// The keys each table may hold, made once: the check runs for every manifest of a catalog.
const EXECUTOR_KEYS = ['name', 'version', 'created_at', 'created_by', 'summary'];
const EXECUTOR_OPTIONAL = ['affinity', 'capabilities', 'entry'];
const CONTRACT_KEYS = ['input_schema', 'output_schema', 'error_classes', 'idempotent', 'side_effects'];
const SANDBOX_KEYS = ['profile', 'max_duration_ms', 'max_memory_mb', 'max_output_bytes'];
const SANDBOX_OPTIONAL = ['min_tier', 'max_write_bytes', 'fs', 'exec', 'network', 'hash'];
const FS_KEYS = ['read', 'write', 'hardlinks'];
const EXEC_KEYS = ['mode', 'binaries'];
const NETWORK_KEYS = ['mode', 'domains'];
const TOP_KEYS = ['executor', 'contract', 'sandbox', 'audit'];
const AUDIT_KEYS = ['trace_topic'];
const ANY_TEXT = /^[\s\S]+$/;

function isInteger(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= max;
}

function executorTable(value: unknown): Checked<Manifest['executor']> {
  if (!isPlainObject(value)) return undefined;
  if (!hasOnlyKeys(value, EXECUTOR_KEYS, EXECUTOR_OPTIONAL)) return undefined;
  const { name, version, created_at: createdAt, created_by: createdBy, summary } = value;
  if (typeof name !== 'string' || !NAME.test(name)) return undefined;
  if (typeof version !== 'string' || !SEMVER.test(version)) return undefined;
  // a TOML offset date-time; anything else (a string, a local date) is left to the schema
  if (!(createdAt instanceof Date) || Number.isNaN(createdAt.getTime())) return undefined;
  const created = createdAt.toISOString();
  if (!ISO_INSTANT.test(created)) return undefined;
  if (typeof createdBy !== 'string' || !CREATED_BY.test(createdBy)) return undefined;
  if (typeof summary !== 'string' || summary.length < 1 || summary.length > 500) return undefined;
  const affinity = stringsMatching(value.affinity, ANY_TEXT, []);
  const capabilities = stringsMatching(value.capabilities, CAPABILITY, []);
  const entry = value.entry === undefined ? 'main.ts' : value.entry;
  if (!affinity || !capabilities || typeof entry !== 'string' || !ENTRY.test(entry)) return undefined;
  return {
    name,
    version,
    created_at: created,
    created_by: createdBy,
    summary,
    affinity,
    capabilities,
    entry,
  };
}

function contractTable(value: unknown): Checked<Manifest['contract']> {
  if (!isPlainObject(value)) return undefined;
  if (!hasOnlyKeys(value, CONTRACT_KEYS)) return undefined;
  const { input_schema: input, output_schema: output, idempotent, side_effects: sideEffects } = value;
  if (typeof input !== 'string' || !SCHEMA_REF.test(input)) return undefined;
  if (typeof output !== 'string' || !SCHEMA_REF.test(output)) return undefined;
  const errorClasses = stringsMatching(value.error_classes, ERROR_CLASS);
  if (!errorClasses || errorClasses.some((name) => HOST_ONLY.has(name))) return undefined;
  if (typeof idempotent !== 'boolean' || typeof sideEffects !== 'boolean') return undefined;
  return {
    input_schema: input,
    output_schema: output,
    error_classes: errorClasses,
    idempotent,
    side_effects: sideEffects,
  };
}

function pathEntries(value: unknown): Checked<string[]> {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return undefined;
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (typeof item !== 'string' || item.length < 1) return undefined;
    if (!item.startsWith('/') && !PATH_ENTRY.test(item)) return undefined;
  }
  return value as string[];
}

function modeOf(value: unknown): Checked<'none' | 'allowlist'> {
  if (value === undefined) return 'none';
  return value === 'none' || value === 'allowlist' ? value : undefined;
}

function sandboxTable(value: unknown): Checked<Manifest['sandbox']> {
  if (!isPlainObject(value)) return undefined;
  if (!hasOnlyKeys(value, SANDBOX_KEYS, SANDBOX_OPTIONAL)) return undefined;
  const { profile, max_duration_ms: duration, max_memory_mb: memory, max_output_bytes: output } = value;
  if (typeof profile !== 'string' || profile.length < 1) return undefined;
  const minTier = value.min_tier === undefined ? 'full' : value.min_tier;
  if (!(ISOLATION_TIERS as readonly unknown[]).includes(minTier)) return undefined;
  if (!isInteger(duration, 600_000) || !isInteger(memory, 65_536) || !isInteger(output, 256 * 1024 * 1024))
    return undefined;
  const writeBytes = value.max_write_bytes;
  if (writeBytes !== undefined && !isInteger(writeBytes, 64 * 1024 * 1024 * 1024)) return undefined;
  const fs = value.fs === undefined ? { read: [], write: [] } : value.fs;
  const exec = value.exec === undefined ? { mode: 'none', binaries: [] } : value.exec;
  const network = value.network === undefined ? { mode: 'none', domains: [] } : value.network;
  if (!isPlainObject(fs) || !hasOnlyKeys(fs, NO_KEYS, FS_KEYS)) return undefined;
  if (!isPlainObject(exec) || !hasOnlyKeys(exec, NO_KEYS, EXEC_KEYS)) return undefined;
  if (!isPlainObject(network) || !hasOnlyKeys(network, NO_KEYS, NETWORK_KEYS)) return undefined;
  const read = pathEntries(fs.read);
  const write = pathEntries(fs.write);
  if (!read || !write || (fs.hardlinks !== undefined && typeof fs.hardlinks !== 'boolean')) return undefined;
  const execMode = modeOf(exec.mode);
  const binaries = stringsMatching(exec.binaries, BINARY, []);
  const networkMode = modeOf(network.mode);
  const domains = stringsMatching(network.domains, DOMAIN_ENTRY, []);
  if (!execMode || !binaries || !networkMode || !domains) return undefined;
  const hash = value.hash;
  if (hash !== undefined && (typeof hash !== 'string' || !PROFILE_HASH.test(hash))) return undefined;
  return {
    profile,
    min_tier: minTier as Manifest['sandbox']['min_tier'],
    max_duration_ms: duration,
    max_memory_mb: memory,
    max_output_bytes: output,
    ...(writeBytes !== undefined ? { max_write_bytes: writeBytes } : {}),
    fs: { read, write, ...(fs.hardlinks !== undefined ? { hardlinks: fs.hardlinks as boolean } : {}) },
    exec: { mode: execMode, binaries },
    network: { mode: networkMode, domains },
    ...(hash !== undefined ? { hash } : {}),
  };
}

/**
 * The manifest `data` (parsed TOML) describes, exactly as `manifestSchema`
 * would return it, when the hand check can tell it is valid; undefined means
 * "ask the schema", never "invalid".
 *
 * @example
 * const manifest = manifestShape(parseToml(text)) ?? manifestSchema.parse(parseToml(text));
 */
export function manifestShape(data: unknown): Manifest | undefined {
  if (!isPlainObject(data) || !hasOnlyKeys(data, TOP_KEYS)) return undefined;
  const executor = executorTable(data.executor);
  const contract = contractTable(data.contract);
  const sandbox = sandboxTable(data.sandbox);
  const audit = data.audit;
  if (!executor || !contract || !sandbox || !isPlainObject(audit) || !hasOnlyKeys(audit, AUDIT_KEYS))
    return undefined;
  const topic = audit.trace_topic;
  if (typeof topic !== 'string' || topic.length < 1) return undefined;
  return { executor, contract, sandbox, audit: { trace_topic: topic } };
}
