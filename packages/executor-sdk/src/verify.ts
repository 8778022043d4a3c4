import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { unsupportedKeywords } from '../runtime/json-schema.mjs';
import { artefactPath, fileStamp, readArtefactFile, readArtefactView } from '../runtime/read-artefact.mjs';
import { ARTEFACTS } from './artefacts.ts';
import { jsonTextDepth, MAX_JSON_DEPTH } from './depth.ts';
import { ManifestError, VerificationError } from './errors.ts';
import { blake3DigestSync, prepareBlake3 } from './hash.ts';
import type { PublicKey } from './keys.ts';
import { type Manifest, parseManifest } from './manifest.ts';
import { profileHashSync } from './profile.ts';
import { hasOnlyKeys, isPlainObject } from './shape.ts';
import {
  claimedStatement,
  DEFAULT_SIGNATURE_BACKEND,
  type SignatureBackend,
  type SignatureFile,
  type SignatureStatement,
  signatureFileSchema,
  statementBytes,
  verifySignedBytes,
  verifySignedBytesAsync,
} from './signature.ts';
import {
  createSignatureThread,
  type SignatureThread,
  type SignatureThreadStats,
} from './signature-thread.ts';
import type { VerificationCache } from './verification-cache.ts';
import {
  createVerifyWorker,
  type HelperCheck,
  type HelperDelivery,
  type ReadArtefact,
  VERIFY_WORKER_MIN,
  type VerifyWorkerStats,
} from './verify-worker.ts';

/** An executor version that passed every check, ready to invoke. */
export interface VerifiedExecutor {
  name: string;
  version: string;
  /** The version directory. */
  dir: string;
  /** Absolute path of the code file (for messages; the process never reads it). */
  codeFile: string;
  /**
   * The exact bytes of the code file that were hashed and matched the signature.
   * Runners hand these to the executor process; the path is never read again,
   * so rewriting the file after verification changes nothing that runs.
   */
  code: Buffer;
  manifest: Manifest;
  /** The parsed `schema.json`. */
  schema: Record<string, unknown>;
  digests: { manifest: string; code: string; schema: string; profileLock: string };
  keyId: string;
  /** The Ed25519 signature (base64) from `manifest.sig`. */
  signature: string;
  /** File identities at verification, for the cheap re-check at every call. */
  stamps: string;
}

/** Settings of {@link verifyExecutor}. */
export interface VerifySettings {
  /** Public keys whose signatures are accepted. Nothing else is trusted. */
  trustedKeys: readonly PublicKey[];
  backend?: SignatureBackend;
  /**
   * Versions that passed every check on this machine ({@link openVerificationCache}).
   * Every artefact is still read, hashed and compared with the signed statement,
   * and the key with the trust list; a confirmed entry stands in for the rest.
   */
  verificationCache?: VerificationCache;
}

interface Artefact {
  bytes: Buffer;
  /** device:inode:size:mtime:ctime of the file as it was read. */
  stamp: string;
}

/** The artefacts every version folder has under fixed names, which a helper thread reads. */
const HELPER_LAYOUT = {
  files: [ARTEFACTS.manifest, ARTEFACTS.schema, ARTEFACTS.profileLock, ARTEFACTS.signature],
  manifestFile: ARTEFACTS.manifest,
  signatureFile: ARTEFACTS.signature,
};

/**
 * One artefact (see readArtefactFile: its identity from the same open file), or the one a
 * helper thread already read. Small files read this way cost far less than the promise
 * API's thread hops.
 */
function readArtefact(
  dir: string,
  file: string,
  preread?: Map<string, ReadArtefact>,
  read: (path: string) => Artefact = readArtefactFile,
): Artefact {
  const ahead = preread?.get(file);
  if (ahead) return ahead;
  try {
    return read(artefactPath(dir, file));
  } catch (error) {
    throw new VerificationError({
      reason: 'missing_artefact',
      artefact: file,
      message: `${file} is missing or unreadable in ${dir}`,
      cause: error,
    });
  }
}

/**
 * A code file a helper thread read, copied into memory of its own before it is hashed: the
 * executor keeps these bytes to run, so they must be exactly the ones hashed, owned by no
 * shared or transferred buffer (see readArtefactFile).
 */
function ownCode(ahead: ReadArtefact | undefined): Artefact | undefined {
  if (!ahead) return undefined;
  const bytes = Buffer.allocUnsafeSlow(ahead.bytes.length);
  ahead.bytes.copy(bytes);
  return { bytes, stamp: ahead.stamp };
}

/** A text artefact as read: decoded, hashed if asked, and its identity. */
interface TextArtefact {
  text: string;
  /** The BLAKE3 digest of the bytes read ('' when not asked for). */
  digest: string;
  stamp: string;
}

/**
 * A text artefact, decoded (and hashed) as soon as it is read, through a buffer the next
 * read reuses: its bytes are never kept.
 */
function readText(
  dir: string,
  file: string,
  preread: Map<string, ReadArtefact> | undefined,
  hash = true,
): TextArtefact {
  const { bytes, stamp } = readArtefact(dir, file, preread, readArtefactView);
  return { text: bytes.toString('utf8'), digest: hash ? blake3DigestSync(bytes) : '', stamp };
}

/** The identity of the artefact files: device, inode, size, mtime and ctime of each. */
export async function artefactStamps(dir: string, codeFileName: string): Promise<string> {
  const files = [
    ARTEFACTS.manifest,
    codeFileName,
    ARTEFACTS.schema,
    ARTEFACTS.profileLock,
    ARTEFACTS.signature,
  ];
  return files
    .map((file) => {
      const info = statSync(join(dir, file), { bigint: true, throwIfNoEntry: false });
      return info ? fileStamp(info) : 'missing';
    })
    .join('|');
}

/** The node a local reference such as `schema.json#/definitions/Input` points at, or undefined. */
function schemaRefTarget(schema: Record<string, unknown>, ref: string): unknown {
  let node: unknown = schema;
  const parts = ref.slice(ref.indexOf('#/') + 2).split('/');
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index]!;
    node =
      node !== null && typeof node === 'object' && Object.hasOwn(node, part)
        ? (node as Record<string, unknown>)[part]
        : undefined;
  }
  return node;
}

/**
 * The input or output JSON Schema of a verified executor (what its manifest's
 * `[contract]` reference points at in `schema.json`).
 *
 * @example
 * const parameters = contractSchema(executor, 'input'); // { type: 'object', properties: { path: … } }
 */
export function contractSchema(
  executor: VerifiedExecutor,
  which: 'input' | 'output',
): Record<string, unknown> | undefined {
  const ref =
    which === 'input' ? executor.manifest.contract.input_schema : executor.manifest.contract.output_schema;
  const node = schemaRefTarget(executor.schema, ref);
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>) : undefined;
}

/**
 * Parses `schema.json` and checks its nesting, the manifest's references and
 * the keyword subset. Every later walk of the schema (Ajv, the harness's
 * validator) relies on the nesting check made here, before `JSON.parse`.
 */
export function checkSchema(
  text: string,
  manifest: Manifest,
  file: string = ARTEFACTS.schema,
): Record<string, unknown> {
  if (jsonTextDepth(text) > MAX_JSON_DEPTH) {
    throw new VerificationError({
      reason: 'schema_invalid',
      artefact: file,
      message: `${file} nests deeper than ${MAX_JSON_DEPTH} levels; flatten it (use "definitions" and "$ref" for shared parts)`,
    });
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    throw new VerificationError({
      reason: 'schema_invalid',
      artefact: file,
      message: `${file} is not valid JSON`,
      cause: error,
    });
  }
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new VerificationError({
      reason: 'schema_invalid',
      artefact: file,
      message: `${file} must be a JSON object`,
    });
  }
  const unsupported = unsupportedKeywords(schema);
  if (unsupported.length > 0) {
    throw new VerificationError({
      reason: 'schema_invalid',
      artefact: file,
      message: `${file} uses keywords Metnos does not support: ${unsupported.slice(0, 5).join(', ')}`,
    });
  }
  for (const ref of [manifest.contract.input_schema, manifest.contract.output_schema]) {
    const target = schemaRefTarget(schema as Record<string, unknown>, ref);
    if (target === null || typeof target !== 'object') {
      throw new VerificationError({
        reason: 'schema_invalid',
        artefact: file,
        message: `${file} has no definition for ${ref} (named in manifest.toml [contract])`,
      });
    }
  }
  return schema as Record<string, unknown>;
}

const DIGEST = /^blake3:[0-9a-f]{64}$/;

/**
 * What `signatureFileSchema` accepts, including canonical base64, checked by
 * hand (see shape.ts). Anything else goes through the schema for a precise message.
 */
export function isSignatureFile(data: unknown): data is SignatureFile {
  if (!isPlainObject(data)) return false;
  const digests = data.digests;
  return (
    hasOnlyKeys(data, ['alg', 'digests', 'key_id', 'name', 'signature', 'v', 'version']) &&
    data.v === 1 &&
    data.alg === 'ed25519' &&
    typeof data.key_id === 'string' &&
    /^ed25519:[0-9a-f]{16}$/.test(data.key_id) &&
    typeof data.name === 'string' &&
    typeof data.version === 'string' &&
    typeof data.signature === 'string' &&
    /^[A-Za-z0-9+/]{86}==$/.test(data.signature) &&
    Buffer.from(data.signature, 'base64').toString('base64') === data.signature &&
    isPlainObject(digests) &&
    hasOnlyKeys(digests, ['code', 'manifest', 'profile_lock', 'schema']) &&
    [digests.manifest, digests.code, digests.schema, digests.profile_lock].every(
      (digest) => typeof digest === 'string' && DIGEST.test(digest),
    )
  );
}

/** Parses `manifest.sig`. */
export function parseSignatureFile(text: string): SignatureFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new VerificationError({
      reason: 'signature_malformed',
      artefact: ARTEFACTS.signature,
      message: `${ARTEFACTS.signature} is not valid JSON`,
      cause: error,
    });
  }
  if (isSignatureFile(data)) return data;
  const parsed = signatureFileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new VerificationError({
      reason: 'signature_malformed',
      artefact: ARTEFACTS.signature,
      // Stryker disable next-line OptionalChaining: a failed safeParse always has a first issue
      message: `${ARTEFACTS.signature}: field "${issue?.path.join('.')}" ${issue?.message}`,
    });
  }
  // Base64 has spare bits in its last character: only the canonical spelling is accepted,
  // so no two different files carry the same signature.
  if (Buffer.from(parsed.data.signature, 'base64').toString('base64') !== parsed.data.signature) {
    throw new VerificationError({
      reason: 'signature_malformed',
      artefact: ARTEFACTS.signature,
      message: `${ARTEFACTS.signature}: field "signature" is not canonical base64`,
    });
  }
  return parsed.data;
}

/** Everything about one version that is checked before its signature. */
interface Prepared {
  dir: string;
  manifest: Manifest;
  schema: Record<string, unknown>;
  codeFileName: string;
  /** The code bytes whose digest is in `digests.code`. */
  code: Buffer;
  digests: VerifiedExecutor['digests'];
  stamps: string;
  signatureFile: SignatureFile;
  key: PublicKey;
  statement: SignatureStatement;
  /** The exact bytes the signature covers. */
  statementBytes: Uint8Array;
  signature: Uint8Array;
}

function manifestFromToml(text: string, dir: string): Manifest {
  try {
    return parseManifest(text, artefactPath(dir, ARTEFACTS.manifest));
  } catch (error) {
    if (!ManifestError.isInstance(error)) throw error;
    throw new VerificationError({
      reason: 'manifest_invalid',
      artefact: ARTEFACTS.manifest,
      message: error.message,
      cause: error,
    });
  }
}

/**
 * The fast path of a restart: the files on disk are byte for byte the signed
 * set, its key is trusted today, and the cache confirms this very set (with
 * this parsed manifest) passed every check before. Anything else returns
 * undefined and the version is checked in full.
 */
function confirmRemembered(
  dir: string,
  cache: VerificationCache,
  /** Parsed from the entry's text, which `confirm` authenticates. */
  manifest: Manifest,
  files: {
    digests: VerifiedExecutor['digests'];
    schemaText: string;
    stamps: string;
    codeFileName: string;
    code: Buffer;
  },
  signatureFile: SignatureFile,
  trustedKeys: readonly PublicKey[],
): VerifiedExecutor | undefined {
  const key = trustedKeys.find((candidate) => candidate.keyId === signatureFile.key_id);
  const statement = claimedStatement(signatureFile);
  const { digests } = files;
  if (
    !key ||
    statement.manifest !== digests.manifest ||
    statement.code !== digests.code ||
    statement.schema !== digests.schema ||
    statement.profileLock !== digests.profileLock
  ) {
    return undefined;
  }
  const signature = new Uint8Array(Buffer.from(signatureFile.signature, 'base64'));
  const set = { statement: statementBytes(statement), signature, publicKey: key.publicKey };
  if (!cache.confirm(digests.manifest, set)) return undefined;
  try {
    if (manifest.executor.name !== statement.name || manifest.executor.version !== statement.version) {
      return undefined;
    }
    return {
      name: manifest.executor.name,
      version: manifest.executor.version,
      dir,
      codeFile: artefactPath(dir, files.codeFileName),
      code: files.code,
      manifest,
      schema: JSON.parse(files.schemaText) as Record<string, unknown>,
      digests,
      keyId: key.keyId,
      signature: signatureFile.signature,
      stamps: files.stamps,
    };
    // Stryker disable next-line BlockStatement: an empty catch returns undefined all the same
  } catch {
    return undefined;
  }
}

/**
 * Reads and checks one version directory up to its signature: the manifest
 * parses, the schema is usable, the profile matches its lock, the key is
 * trusted. Synchronous (BLAKE3 must be ready), so a catalog can prepare the
 * next version while signatures are checked off the main thread. A version
 * the cache confirms comes back verified.
 */
function prepare(
  dir: string,
  settings: VerifySettings,
  /** Artefacts a helper thread already read (see {@link createVerifyWorker}). */
  preread?: Map<string, ReadArtefact>,
): { prepared: Prepared } | { verified: VerifiedExecutor } {
  const cache = settings.verificationCache;
  const manifestArtefact = readText(dir, ARTEFACTS.manifest, preread);
  const manifestDigest = manifestArtefact.digest;
  // Unauthenticated until confirmed: it only names the code file to read, and a wrong
  // name fails the confirmation (the code digest would not match what was signed).
  const rememberedJson = cache?.manifestFor(manifestDigest);
  let remembered: Manifest | undefined;
  try {
    remembered = rememberedJson === undefined ? undefined : (JSON.parse(rememberedJson) as Manifest);
    // Stryker disable next-line BlockStatement: when JSON.parse throws, remembered is still undefined
  } catch {
    remembered = undefined;
  }
  const entry = remembered?.executor?.entry;
  const manifest =
    typeof entry === 'string' && /^[A-Za-z0-9_-]+\.(ts|mjs|js)$/.test(entry)
      ? remembered!
      : manifestFromToml(manifestArtefact.text, dir);
  const codeFileName = manifest.executor.entry;
  let code: Artefact;
  try {
    code = ownCode(preread?.get(codeFileName)) ?? readArtefact(dir, codeFileName);
  } catch (error) {
    // a remembered manifest is unconfirmed: the file it names may not be the signed one
    if (manifest === remembered) return prepare(dir, { ...settings, verificationCache: undefined }, preread);
    throw error;
  }
  const schemaFile = readText(dir, ARTEFACTS.schema, preread);
  const lockFile = readText(dir, ARTEFACTS.profileLock, preread);
  const signatureArtefact = readText(dir, ARTEFACTS.signature, preread, false);
  const stamps = [manifestArtefact, code, schemaFile, lockFile, signatureArtefact]
    .map((artefact) => artefact.stamp)
    .join('|');
  const digests = {
    manifest: manifestDigest,
    code: blake3DigestSync(code.bytes),
    schema: schemaFile.digest,
    profileLock: lockFile.digest,
  };
  // Parsed now, refused below in its turn: until then the digests it claims only
  // help to name the file that changed when two files disagree.
  let signatureFile: SignatureFile | undefined;
  let signatureError: unknown;
  try {
    signatureFile = parseSignatureFile(signatureArtefact.text);
  } catch (error) {
    signatureError = error;
  }
  if (manifest === remembered) {
    const verified =
      signatureFile &&
      confirmRemembered(
        dir,
        cache!,
        remembered,
        { digests, schemaText: schemaFile.text, stamps, codeFileName, code: code.bytes },
        signatureFile,
        settings.trustedKeys,
      );
    // Not confirmed: check everything from the files, as for a version never seen.
    return verified ? { verified } : prepare(dir, { ...settings, verificationCache: undefined }, preread);
  }
  const changed = (key: keyof typeof digests) => {
    if (!signatureFile) return false;
    const claimed = key === 'profileLock' ? signatureFile.digests.profile_lock : signatureFile.digests[key];
    return claimed !== digests[key];
  };

  let schema: Record<string, unknown>;
  try {
    schema = checkSchema(schemaFile.text, manifest);
  } catch (error) {
    if (VerificationError.isInstance(error) && changed('manifest') && !changed('schema')) {
      throw new VerificationError({
        reason: 'manifest_invalid',
        artefact: ARTEFACTS.manifest,
        message: error.message,
        cause: error,
      });
    }
    throw error;
  }

  const expectedLock = profileHashSync(manifest.sandbox);
  const lock = lockFile.text.trim();
  if (lock !== expectedLock || manifest.sandbox.hash !== expectedLock) {
    // Three values must agree: the profile's hash, [sandbox].hash and profile.lock. Blame
    // the file the signature says changed, else the odd one out.
    const lockAtFault =
      changed('profileLock') !== changed('manifest')
        ? changed('profileLock')
        : lock !== expectedLock && manifest.sandbox.hash === expectedLock;
    throw new VerificationError({
      reason: 'profile_lock_mismatch',
      artefact: lockAtFault ? ARTEFACTS.profileLock : ARTEFACTS.manifest,
      message:
        `the declared [sandbox] profile of ${manifest.executor.name}@${manifest.executor.version} does not match ` +
        `${lock !== expectedLock ? 'profile.lock' : '[sandbox].hash'}: the profile changed without re-signing`,
    });
  }

  if (!signatureFile) throw signatureError;
  const key = settings.trustedKeys.find((candidate) => candidate.keyId === signatureFile.key_id);
  if (!key) {
    throw new VerificationError({
      reason: 'untrusted_key',
      artefact: ARTEFACTS.signature,
      message: `${manifest.executor.name}@${manifest.executor.version} is signed by ${signatureFile.key_id}, which is not a trusted key`,
    });
  }
  // The signature is checked over what manifest.sig claims, so a change to any of its fields
  // (name, version, a digest) is a bad signature; only then are its digests trusted to name
  // the artefact that changed.
  const statement = claimedStatement(signatureFile);
  return {
    prepared: {
      dir,
      manifest,
      schema,
      codeFileName,
      code: code.bytes,
      digests,
      stamps,
      signatureFile,
      key,
      statement,
      statementBytes: statementBytes(statement),
      signature: new Uint8Array(Buffer.from(signatureFile.signature, 'base64')),
    },
  };
}

/** The artefacts whose digests the statement carries, in its order. */
const DIGEST_NAMES = ['manifest', 'code', 'schema', 'profileLock'] as const;

/** The checks that follow the signature's: digests against what was signed, then the identity. */
function finish(prepared: Prepared, valid: boolean): VerifiedExecutor {
  const { manifest, statement, digests, codeFileName } = prepared;
  const label = `${manifest.executor.name}@${manifest.executor.version}`;
  if (!valid) {
    throw new VerificationError({
      reason: 'signature_invalid',
      artefact: ARTEFACTS.signature,
      message: `the signature of ${label} does not verify with ${prepared.key.keyId} (forged or corrupted)`,
    });
  }
  const artefactNames = {
    manifest: ARTEFACTS.manifest,
    code: codeFileName,
    schema: ARTEFACTS.schema,
    profileLock: ARTEFACTS.profileLock,
  };
  for (let index = 0; index < DIGEST_NAMES.length; index++) {
    const name = DIGEST_NAMES[index]!;
    if (digests[name] !== statement[name]) {
      throw new VerificationError({
        reason: 'digest_mismatch',
        artefact: artefactNames[name],
        message: `${artefactNames[name]} of ${label} was modified after signing (digest mismatch)`,
      });
    }
  }
  if (statement.name !== manifest.executor.name || statement.version !== manifest.executor.version) {
    throw new VerificationError({
      reason: 'name_mismatch',
      artefact: ARTEFACTS.signature,
      message: `${ARTEFACTS.signature} signs ${statement.name}@${statement.version} but manifest.toml is ${label}`,
    });
  }
  return {
    name: manifest.executor.name,
    version: manifest.executor.version,
    dir: prepared.dir,
    codeFile: artefactPath(prepared.dir, codeFileName),
    code: prepared.code,
    manifest,
    schema: prepared.schema,
    digests,
    keyId: prepared.key.keyId,
    signature: prepared.signatureFile.signature,
    stamps: prepared.stamps,
  };
}

/** Checks the signature of a prepared version, then everything after it. */
async function complete(prepared: Prepared, settings: VerifySettings): Promise<VerifiedExecutor> {
  const { statementBytes: statement, signature, key } = prepared;
  return remember(
    prepared,
    finish(prepared, await verifySignedBytesAsync(statement, signature, key, settings.backend)),
    settings,
  );
}

/** Notes a version that passed every check in the verification cache, if there is one. */
function remember(
  prepared: Prepared,
  executor: VerifiedExecutor,
  settings: VerifySettings,
): VerifiedExecutor {
  settings.verificationCache?.remember(executor.digests.manifest, JSON.stringify(executor.manifest), {
    statement: prepared.statementBytes,
    signature: prepared.signature,
    publicKey: prepared.key.publicKey,
  });
  return executor;
}

/**
 * Whether the helper's check covers exactly what this thread derived from the same bytes:
 * the statement, the signature and the very key object (the first trusted key of its id).
 */
function sameCheck(check: HelperCheck, prepared: Prepared, trustedKeys: readonly PublicKey[]): boolean {
  return (
    trustedKeys[check.keyIndex] === prepared.key &&
    check.statement.equals(prepared.statementBytes) &&
    check.signature.equals(prepared.signature)
  );
}

/**
 * Verifies one folder on this thread, synchronously, from what the helper delivered where it
 * did: its bytes (each with its file's identity) and its signature check when that check is
 * of this very statement; anything else is read or checked here. Never throws.
 */
function verifyHere(dir: string, settings: VerifySettings, delivery?: HelperDelivery): VerifyOutcome {
  try {
    const step = prepare(dir, settings, delivery?.artefacts);
    if ('verified' in step) return { dir, executor: step.verified };
    const { prepared } = step;
    const check = delivery?.check;
    const valid =
      check && sameCheck(check, prepared, settings.trustedKeys)
        ? check.valid
        : verifySignedBytes(prepared.statementBytes, prepared.signature, prepared.key);
    return { dir, executor: remember(prepared, finish(prepared, valid), settings) };
  } catch (error) {
    return { dir, error };
  }
}

/**
 * Verifies one executor version directory: the manifest parses, the schema is
 * usable, the profile matches its lock, every digest matches what was signed,
 * the key is trusted and the signature is valid. Throws a
 * {@link VerificationError} naming the cause and, where there is one, the artefact.
 *
 * @example
 * const executor = await verifyExecutor('executors/fs_read', { trustedKeys: [releaseKey] });
 */
export async function verifyExecutor(dir: string, settings: VerifySettings): Promise<VerifiedExecutor> {
  await prepareBlake3();
  const step = prepare(dir, settings);
  return 'verified' in step ? step.verified : complete(step.prepared, settings);
}

/** The outcome of verifying one directory in {@link verifyExecutors}. */
export type VerifyOutcome =
  | { dir: string; executor: VerifiedExecutor; error?: undefined }
  | { dir: string; executor?: undefined; error: unknown };

/** How long the calling thread works between two turns of the event loop, in milliseconds. */
const SLICE_MS = 8;

/**
 * From this many cores on, a whole catalog is shared with helper threads that read folders too
 * (see verify-worker.ts); on two, with a thread that only checks signatures
 * ({@link verifyWithSignatureThread}).
 */
export const VERIFY_HELPERS_FROM_CORES = 3;

/**
 * Verifies `dirs` on this thread, handing each Ed25519 check to the signature thread as soon as
 * the folder is read and checked up to it; at the end the checks the thread has not come to are
 * done here, from the last. Never throws for a bad folder.
 *
 * On two cores this beats a helper that reads folders as well: that helper's second V8 isolate
 * compiles its own copy of the reading, and the messages between the threads cost both sides;
 * this thread only runs OpenSSL, one check at a time, so it keeps to one core and leaves the
 * other to this one.
 */
async function verifyWithSignatureThread(
  dirs: readonly string[],
  settings: VerifySettings,
  thread: SignatureThread,
): Promise<VerifyOutcome[]> {
  // Stryker disable next-line ArrayDeclaration: the array is filled index by index either way
  const outcomes: VerifyOutcome[] = new Array(dirs.length);
  /** Folders checked up to their signature, in order; the first `done` of them are complete. */
  const waiting: { index: number; prepared: Prepared; ticket: number | undefined; keyIndex: number }[] = [];
  let done = 0;
  const complete = (position: number, valid: boolean) => {
    const { index, prepared } = waiting[position]!;
    try {
      outcomes[index] = {
        dir: prepared.dir,
        executor: remember(prepared, finish(prepared, valid), settings),
      };
    } catch (error) {
      outcomes[index] = { dir: prepared.dir, error };
    }
  };
  const answerOf = (position: number): boolean | undefined => {
    const { prepared, ticket, keyIndex } = waiting[position]!;
    // a folder the thread could not take has no ticket, and no answer
    return thread.answer(ticket ?? -1, prepared.statementBytes, prepared.signature, keyIndex);
  };
  const checkHere = (position: number): boolean => {
    const { prepared } = waiting[position]!;
    return verifySignedBytes(prepared.statementBytes, prepared.signature, prepared.key);
  };
  let slice = performance.now();
  for (let index = 0; index < dirs.length; index++) {
    const dir = dirs[index]!;
    try {
      const step = prepare(dir, settings, thread.reached(index));
      // Stryker disable next-line all: the thread is only started with an empty cache, so no remembered version is confirmed here
      if ('verified' in step) outcomes[index] = { dir, executor: step.verified };
      else {
        const { prepared } = step;
        const keyIndex = settings.trustedKeys.indexOf(prepared.key);
        const ticket = thread.submit(prepared.statementBytes, prepared.signature, keyIndex);
        waiting.push({ index, prepared, ticket, keyIndex });
      }
    } catch (error) {
      outcomes[index] = { dir, error };
    }
    // what the thread has answered is finished here as it comes, in order; a folder it could
    // not take is checked here in its turn
    // Stryker disable ConditionalExpression,EqualityOperator,BlockStatement: finishing a folder now or after the last changes no outcome (the loop after the last does the rest)
    while (done < waiting.length) {
      const answer = answerOf(done);
      if (answer !== undefined) complete(done, answer);
      else if (waiting[done]!.ticket === undefined) complete(done, checkHere(done));
      else break;
      done++;
    }
    // Stryker restore ConditionalExpression,EqualityOperator,BlockStatement
    // the event loop gets a turn now and then, so a server stays responsive during a reload
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator,BlockStatement: when the event loop gets a turn changes no outcome
    if (performance.now() - slice > SLICE_MS) {
      await new Promise(setImmediate);
      slice = performance.now();
    }
  }
  // The checks the thread has not come to are done here, from the last, while it goes on from
  // the front; once it has one, it has every one before it.
  const here: (boolean | undefined)[] = [];
  for (let position = waiting.length - 1; position >= done; position--) {
    const { ticket } = waiting[position]!;
    if (ticket === undefined) continue;
    if (!thread.takeBack(ticket)) break;
    here[position] = checkHere(position);
  }
  await thread.finish();
  for (; done < waiting.length; done++) {
    complete(done, here[done] ?? answerOf(done) ?? checkHere(done));
  }
  return outcomes;
}

/**
 * Verifies many version directories at once, never throwing for a bad one; the outcomes are
 * in the order of `dirs`. With the `node` backend and enough folders a second core works too:
 * on two cores with nothing cached, a thread that reads the fixed-name artefacts ahead and checks
 * the signatures ({@link verifyWithSignatureThread}); otherwise helper threads (one per other core) do the
 * folders from the first (reads and signature checks) while this thread does the rest from
 * the last, and parses and checks what the helpers delivered, so every core works to the end.
 *
 * @example
 * const outcomes = await verifyExecutors(['executors/fs_read', 'executors/fs_list'], { trustedKeys });
 */
export async function verifyExecutors(
  dirs: readonly string[],
  settings: VerifySettings,
  /**
   * @internal tests replace the helpers' or the signature thread's program to make one that
   * misbehaves, set how many helpers start, say how many cores there are, set how long the
   * signature thread may go without progress, or read what the threads did
   */
  helper: {
    program?: string;
    helpers?: number;
    cores?: number;
    signatureProgram?: string;
    signaturePatience?: number;
    waitForSignatureThread?: boolean;
    onSignatures?: (stats: SignatureThreadStats) => void;
    onHelpers?: (stats: VerifyWorkerStats) => void;
  } = {},
): Promise<VerifyOutcome[]> {
  const cores = helper.cores ?? availableParallelism();
  const whole =
    dirs.length >= VERIFY_WORKER_MIN && (settings.backend ?? DEFAULT_SIGNATURE_BACKEND) === 'node';
  const cached = (settings.verificationCache?.stored ?? 0) > 0;
  const readingHelpers =
    helper.program !== undefined ||
    (helper.helpers ?? 0) > 0 ||
    (helper.helpers === undefined && (cores >= VERIFY_HELPERS_FROM_CORES || cached));
  // Started first, so it boots while this thread gets BLAKE3 ready and begins.
  const worker =
    whole && readingHelpers
      ? createVerifyWorker(
          dirs,
          // with a filled signature cache, most folders need no Ed25519 at all: the helper only reads
          { ...HELPER_LAYOUT, checkSignatures: !cached },
          settings.trustedKeys,
          { program: helper.program, helpers: helper.helpers, cores },
        )
      : undefined;
  // On two cores with nothing cached: one thread that only checks signatures (see
  // verifyWithSignatureThread).
  const signatures =
    whole && !readingHelpers && !cached && cores >= 2
      ? createSignatureThread(dirs.length, settings.trustedKeys, {
          program: helper.signatureProgram,
          patience: helper.signaturePatience,
          lane: { dirs, files: HELPER_LAYOUT.files, manifestFile: HELPER_LAYOUT.manifestFile },
        })
      : undefined;
  try {
    await prepareBlake3();
    if (signatures) {
      if (helper.waitForSignatureThread) await signatures.ready();
      const outcomes = await verifyWithSignatureThread(dirs, settings, signatures);
      helper.onSignatures?.(signatures.stats());
      return outcomes;
    }
    if (!worker) {
      const pending: Promise<VerifyOutcome>[] = [];
      for (const dir of dirs) {
        // each folder is read and checked here while the signatures before it are checked on libuv's pool
        pending.push(
          (async (): Promise<VerifyOutcome> => {
            try {
              const step = prepare(dir, settings);
              return {
                dir,
                executor: 'verified' in step ? step.verified : await complete(step.prepared, settings),
              };
            } catch (error) {
              return { dir, error };
            }
          })(),
        );
      }
      return await Promise.all(pending);
    }
    const outcomes: (VerifyOutcome | undefined)[] = new Array(dirs.length);
    let left = dirs.length;
    /** The helper is gone: what it left on the port, then what it left undone, and no more waiting. */
    let gone = false;
    let slice = performance.now();
    while (left > 0) {
      const step = worker.next();
      if (step) {
        outcomes[step.index] = verifyHere(dirs[step.index]!, settings, step.delivery);
        // Stryker disable next-line UpdateOperator: without the count the loop still ends, once the helper is gone and nothing is left
        left--;
        // the event loop gets a turn now and then, so a server stays responsive during a reload
        // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator,BlockStatement: when the event loop gets a turn changes no outcome
        if (performance.now() - slice > SLICE_MS) {
          await new Promise(setImmediate);
          slice = performance.now();
        }
        continue;
      }
      // Stryker disable next-line ConditionalExpression: once the helper is gone, next() hands back every folder it left, so the loop ends all the same; the break only stops asking sooner (a run sees a timeout or a survivor)
      if (gone) break;
      gone = !(await worker.wait());
    }
    helper.onHelpers?.(worker.stats());
    // anything the helper left neither delivered nor to be taken back is done here all the same
    return outcomes.map((outcome, index) => outcome ?? verifyHere(dirs[index]!, settings));
  } finally {
    void worker?.close();
    void signatures?.close();
  }
}
