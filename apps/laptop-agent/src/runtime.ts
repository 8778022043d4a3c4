import type { KeyObject } from 'node:crypto';
import { mkdir, stat, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ExecutorResult, ExecutorRunner, VerifiedExecutor } from '@metnos/executor-sdk';
import { z } from 'zod';
import type { LaptopAuditLog } from './audit.ts';
import type { ExecutorCache } from './cache.ts';
import { exists, hashFile, identityOf, moveNoReplace } from './file-ops.ts';
import type { Guard } from './guard.ts';
import type { Ledger, LedgerCall, LedgerOperation } from './ledger/ledger.ts';
import { argsDigest } from './protocol/canonical.ts';
import { RemoteError } from './protocol/errors.ts';
import {
  type FileEntry,
  type FileManifest,
  MAX_OPERATIONS,
  type Operation,
  operationSchema,
} from './protocol/files.ts';
import type { LaptopAudit, LaptopFrame, RemoteResult, ServerFrame } from './protocol/frames.ts';
import { PROPOSE_CAPABILITY, UNDO_EXECUTOR } from './protocol/index.ts';
import { type TokenClaims, verifyCallToken } from './protocol/token.ts';

type CallFrame = Extract<ServerFrame, { type: 'call' }>;
type UndoFrame = Extract<ServerFrame, { type: 'undo' }>;
type ResultFrame = Extract<LaptopFrame, { type: 'result' }>;

/** How the runtime talks back while a call is under way. */
export interface CallLink {
  /**
   * Sends the before manifest and resolves once the server has recorded it;
   * rejects when the link drops first (the call then stops, planned, and
   * resumes when the server delivers its key again).
   */
  confirmBefore(key: string, trace: string, entries: FileEntry[]): Promise<void>;
}

/** Settings of {@link createLaptopRuntime}. */
export interface LaptopRuntimeSettings {
  device: string;
  ledger: Ledger;
  cache: ExecutorCache;
  runner: ExecutorRunner;
  audit: LaptopAuditLog;
  /** The granted folder's guard, or undefined while the person has granted none. */
  guard: () => Promise<Guard | undefined>;
  /** Where replaced and deleted files go: `<state>/trash`. */
  trashDir: string;
  now?: () => number;
  /** A progress line (the agent prints them to stderr). */
  log?: (line: string) => void;
}

const operationsSchema = z.array(operationSchema).max(MAX_OPERATIONS);

/** An operation's outcome cannot be reached: the file changed or went away after it was planned. */
class ChangedSince extends Error {}

/**
 * The laptop's side of a remote call: the token and its binding checked, the
 * key looked up in the ledger (a key already done answers its recorded
 * outcome and runs nothing), the cached executor verified against the digest
 * the token names (on drift the call is refused and an update asked for), the
 * executor run under the laptop's confinement, and the operations it proposes
 * checked one by one, journaled, reported as a before manifest, applied, and
 * reported as an after manifest. Undo applies the inverse of a done call when
 * every file it left is still as it left it.
 *
 * @example
 * const runtime = createLaptopRuntime({ device, ledger, cache, runner, audit, guard, trashDir });
 * const reply = await runtime.call(frame, serverPublicKey, link);
 */
export function createLaptopRuntime(settings: LaptopRuntimeSettings) {
  const { ledger, cache, audit } = settings;
  const now = settings.now ?? Date.now;
  const log = settings.log ?? (() => {});

  /** Checks a token and that it names exactly this frame; records its nonce. */
  function admit(
    token: string,
    serverKey: KeyObject,
    expected: Omit<TokenClaims, 'nonce' | 'issuedAt' | 'expiresAt' | 'device' | 'digest'>,
  ): TokenClaims {
    const claims = verifyCallToken(token, serverKey, now());
    if (claims.device !== settings.device)
      throw new RemoteError({
        code: 'wrong_device',
        message: `the token is for ${claims.device}, not this laptop`,
      });
    for (const field of ['executor', 'trace', 'key', 'args'] as const)
      if (claims[field] !== expected[field])
        throw new RemoteError({ code: 'bad_token', message: `the token's ${field} does not match the call` });
    if (!ledger.useNonce(claims.nonce, claims.expiresAt))
      throw new RemoteError({ code: 'replayed', message: 'this token was used before: a replay is refused' });
    return claims;
  }

  async function refused(
    frame: { key: string; trace: string },
    executor: string,
    error: unknown,
  ): Promise<LaptopFrame> {
    const remote = RemoteError.isInstance(error)
      ? error
      : new RemoteError({ code: 'refused', message: (error as Error)?.message ?? String(error) });
    log(`call ${frame.key}: refused (${remote.code}): ${remote.message}`);
    await audit.append({
      ts: new Date(now()).toISOString(),
      trace_id: frame.trace,
      key: frame.key,
      device: settings.device,
      executor,
      exit: 'refused',
      error_class: remote.code,
      duration_ms: 0,
      touched: [],
    });
    return { type: 'refused', key: frame.key, code: remote.code, reason: remote.message };
  }

  /** The reply a done call gives every time its key comes again. */
  async function replay(call: LedgerCall): Promise<ResultFrame> {
    const recorded = JSON.parse(call.outcome!) as Omit<ResultFrame, 'type' | 'replayed'>;
    log(`call ${call.key}: already done, answering its recorded outcome`);
    await audit.append({
      ...recorded.audit,
      ts: new Date(now()).toISOString(),
      exit: 'replayed',
      duration_ms: 0,
      touched: [],
    });
    return { type: 'result', ...recorded, replayed: true };
  }

  async function finish(
    call: LedgerCall,
    result: RemoteResult,
    started: number,
    operations: LedgerOperation[] = [],
    version?: string,
  ): Promise<ResultFrame> {
    const manifest = operations.length > 0 ? manifestOf(operations) : undefined;
    const line: LaptopAudit = {
      ts: new Date(now()).toISOString(),
      trace_id: call.trace,
      key: call.key,
      device: settings.device,
      executor: call.executor,
      ...((version ?? call.version) ? { version: version ?? call.version! } : {}),
      exit: result.ok ? 'ok' : 'error',
      ...(result.ok ? {} : { error_class: result.error?.class }),
      duration_ms: Math.max(0, now() - started),
      ...(result.isolation ? { tier: result.isolation.tier } : {}),
      touched: operations
        .filter((operation) => operation.state === 'done')
        .map((operation) =>
          operation.op === 'delete'
            ? { op: 'delete', path: operation.source }
            : {
                op: operation.op,
                from: operation.op === 'restore' ? 'trash' : operation.source,
                path: operation.target!,
                ...(operation.afterHash ? { hash: operation.afterHash } : {}),
              },
        ),
    };
    const outcome = {
      key: call.key,
      trace: call.trace,
      result,
      ...(manifest ? { manifest } : {}),
      audit: line,
    };
    ledger.finish(call.key, JSON.stringify(outcome));
    await audit.append(line);
    log(`call ${call.key}: done (${result.ok ? 'ok' : result.error?.class})`);
    return { type: 'result', ...outcome, replayed: false };
  }

  /** Checks every proposed operation and gathers what the before manifest and the journal need. */
  async function planOperations(
    key: string,
    proposed: Operation[],
    guard: Guard,
  ): Promise<Array<Omit<LedgerOperation, 'key' | 'seq' | 'state' | 'afterHash'>>> {
    const planned: Array<Omit<LedgerOperation, 'key' | 'seq' | 'state' | 'afterHash'>> = [];
    const sources = new Set<string>();
    const targets = new Set<string>();
    for (const [seq, operation] of proposed.entries()) {
      const from = operation.op === 'move' ? operation.from : operation.path;
      if (sources.has(from) || targets.has(from))
        throw new RemoteError({ code: 'bad_plan', message: `${from} is named by two operations` });
      sources.add(from);
      const source = await guard.source(from);
      const identity = (await identityOf(source))!;
      const entry = { source: from, size: (await stat(source)).size, hash: await hashFile(source), identity };
      const trashFor = () => join(settings.trashDir, key, `${seq}-${basename(from)}`);
      if (operation.op === 'delete') {
        planned.push({
          op: 'delete',
          ...entry,
          target: null,
          trash: trashFor(),
          replacedSize: null,
          replacedHash: null,
        });
        continue;
      }
      if (targets.has(operation.to) || sources.has(operation.to))
        throw new RemoteError({ code: 'bad_plan', message: `${operation.to} is named by two operations` });
      targets.add(operation.to);
      const target = await guard.target(operation.to, { replace: operation.replace });
      const replaced = target.taken
        ? { size: (await stat(target.path)).size, hash: await hashFile(target.path) }
        : undefined;
      planned.push({
        op: 'move',
        ...entry,
        target: operation.to,
        trash: replaced ? trashFor() : null,
        replacedSize: replaced?.size ?? null,
        replacedHash: replaced?.hash ?? null,
      });
    }
    return planned;
  }

  /** Applies one journaled operation, or finds that it already happened. */
  async function applyOne(operation: LedgerOperation, guard: Guard): Promise<string | null> {
    const at = (path: string) => join(guard.grant, path);
    if (operation.op === 'delete') {
      const source = at(operation.source);
      if ((await identityOf(source)) === operation.identity) {
        await guard.source(operation.source);
        await moveNoReplace(source, operation.trash!);
      } else if ((await identityOf(operation.trash!)) !== operation.identity)
        throw new ChangedSince(`${operation.source} changed or went away before it could be deleted`);
      return null;
    }
    const source = operation.op === 'restore' ? operation.source : at(operation.source);
    const target = at(operation.target!);
    const sourceId = await identityOf(source);
    if ((await identityOf(target)) === operation.identity) {
      // moved before a crash; a link and no unlink yet leaves both names
      if (sourceId === operation.identity) await unlink(source);
      return hashFile(target);
    }
    if (sourceId !== operation.identity)
      throw new ChangedSince(
        `${operation.op === 'restore' ? 'the trash copy of ' : ''}${operation.op === 'restore' ? operation.target : operation.source} changed or went away after it was planned`,
      );
    if (operation.op === 'move') await guard.source(operation.source);
    const place = await guard.target(operation.target!, {
      replace: operation.trash !== null && operation.op === 'move',
    });
    if (place.taken) {
      if (
        operation.op !== 'move' ||
        operation.trash === null ||
        (await hashFile(target)) !== operation.replacedHash
      )
        throw new ChangedSince(`${operation.target} changed after it was planned`);
      await moveNoReplace(target, operation.trash);
    }
    await moveNoReplace(source, target);
    return hashFile(target);
  }

  /** Applies the planned operations of `key` in order; stops at the first that cannot be reached. */
  async function applyAll(
    key: string,
    guard: Guard,
  ): Promise<{ operations: LedgerOperation[]; failure?: string }> {
    let applied = 0;
    for (const operation of ledger.operations(key)) {
      if (operation.state === 'done') continue;
      try {
        const afterHash = await applyOne(operation, guard);
        ledger.operationDone(key, operation.seq, afterHash);
      } catch (error) {
        if (error instanceof ChangedSince || RemoteError.isInstance(error))
          return { operations: ledger.operations(key), failure: (error as Error).message };
        throw error;
      }
      if (++applied % 250 === 0) log(`call ${key}: applied ${applied} operations`);
    }
    return { operations: ledger.operations(key) };
  }

  /** Before the call: sources and what it will replace; after: what it left. */
  function manifestOf(operations: LedgerOperation[]): FileManifest {
    const before: FileEntry[] = [];
    const after: FileEntry[] = [];
    for (const operation of operations) {
      // a restore brings a file back from the trash area: nothing of the granted folder was there before
      if (operation.op !== 'restore')
        before.push({ path: operation.source, size: operation.size, hash: operation.hash });
      if (operation.replacedHash !== null)
        before.push({ path: operation.target!, size: operation.replacedSize!, hash: operation.replacedHash });
      if (operation.state === 'done' && operation.op !== 'delete')
        after.push({
          path: operation.target!,
          size: operation.size,
          hash: operation.afterHash ?? operation.hash,
        });
    }
    return { before, after };
  }

  /** The before manifest is recorded by the server, then the operations are applied, then the call finishes. */
  async function applyAndFinish(
    call: LedgerCall,
    link: CallLink,
    guard: Guard,
    started: number,
  ): Promise<ResultFrame> {
    if (call.state === 'planned') {
      await link.confirmBefore(call.key, call.trace, manifestOf(ledger.operations(call.key)).before);
      ledger.applying(call.key);
    }
    log(`call ${call.key}: applying`);
    const { operations, failure } = await applyAll(call.key, guard);
    const planned = JSON.parse(call.plan!) as ExecutorResult;
    const applied = operations.filter((operation) => operation.state === 'done').length;
    const result: RemoteResult = failure
      ? {
          ok: false,
          error: {
            class: 'ChangedSince',
            message: `${failure}; ${applied} of ${operations.length} operations were applied`,
          },
          metadata: { applied },
          ...(planned.isolation ? { isolation: planned.isolation } : {}),
        }
      : { ...(planned as RemoteResult), metadata: { ...(planned.metadata ?? {}), applied } };
    return finish(call, result, started, operations);
  }

  return {
    /** One remote call: a result, a drift (asking for an update), or a refusal. */
    async call(frame: CallFrame, serverKey: KeyObject, link: CallLink): Promise<LaptopFrame> {
      const started = now();
      let claims: TokenClaims;
      try {
        claims = admit(frame.token, serverKey, {
          executor: frame.executor,
          trace: frame.trace,
          key: frame.key,
          args: argsDigest(frame.args),
        });
      } catch (error) {
        return refused(frame, frame.executor, error);
      }
      const known = ledger.get(frame.key);
      if (
        known &&
        (known.argsDigest !== claims.args || known.executor !== frame.executor || known.kind !== 'call')
      )
        return refused(
          frame,
          frame.executor,
          new RemoteError({ code: 'key_reused', message: 'this key names another call' }),
        );
      if (known?.state === 'done') return replay(known);
      const guard = await settings.guard();
      if (!guard)
        return refused(
          frame,
          frame.executor,
          new RemoteError({
            code: 'no_grant',
            message:
              'this laptop grants no folder to remote executors: run `metnos-laptop grant <folder>` on it',
          }),
        );
      let executor: VerifiedExecutor | undefined;
      if (!known || known.state === 'received') {
        try {
          executor = await cache.verify(frame.executor);
        } catch (error) {
          const reason = `the cached ${frame.executor} does not verify against its signed manifest: ${(error as Error).message}`;
          await refused(frame, frame.executor, new RemoteError({ code: 'drift', message: reason }));
          return { type: 'drift', key: frame.key, executor: frame.executor, reason };
        }
        if (executor.digests.code !== claims.digest) {
          const reason = `the cached ${frame.executor}@${executor.version} is not the version the server signed (${claims.digest.slice(0, 19)}…)`;
          await refused(frame, frame.executor, new RemoteError({ code: 'drift', message: reason }));
          return {
            type: 'drift',
            key: frame.key,
            executor: frame.executor,
            have: executor.digests.code,
            reason,
          };
        }
      }
      const { call } = ledger.receive({
        key: frame.key,
        trace: frame.trace,
        kind: 'call',
        executor: frame.executor,
        version: frame.version,
        digest: claims.digest,
        argsDigest: claims.args,
      });
      if (call.state === 'received') {
        ledger.countRun(call.key);
        log(`call ${call.key}: running ${frame.executor}`);
        const report = await settings.runner.run({
          executor: executor!,
          args: frame.args,
          context: {
            traceId: frame.trace,
            workspace: guard.grant,
            caller: { kind: 'user', channel: 'remote' },
          },
        });
        const result = report.result as RemoteResult;
        const proposes = executor!.manifest.executor.capabilities.includes(PROPOSE_CAPABILITY);
        if (!result.ok || !proposes) return finish(call, result, started, [], executor!.version);
        const proposed = operationsSchema.safeParse(
          (result.content as { operations?: unknown })?.operations ?? [],
        );
        if (!proposed.success)
          return finish(
            call,
            {
              ok: false,
              error: {
                class: 'InvalidOutput',
                message: 'the operations it proposes are not moves or deletes inside the granted folder',
              },
              ...(result.isolation ? { isolation: result.isolation } : {}),
            },
            started,
            [],
            executor!.version,
          );
        try {
          ledger.plan(call.key, JSON.stringify(result), await planOperations(call.key, proposed.data, guard));
        } catch (error) {
          if (!RemoteError.isInstance(error)) throw error;
          return finish(
            call,
            {
              ok: false,
              error: { class: 'PolicyViolation', message: `nothing was changed: ${error.message}` },
              ...(result.isolation ? { isolation: result.isolation } : {}),
            },
            started,
            [],
            executor!.version,
          );
        }
      }
      return applyAndFinish(ledger.get(call.key)!, link, guard, started);
    },

    /** Undoes a done call: its inverse, when every file it left is still as it left it. */
    async undo(frame: UndoFrame, serverKey: KeyObject, link: CallLink): Promise<LaptopFrame> {
      const started = now();
      try {
        admit(frame.token, serverKey, {
          executor: UNDO_EXECUTOR,
          trace: frame.trace,
          key: frame.key,
          args: argsDigest({ target: frame.target }),
        });
      } catch (error) {
        return refused(frame, UNDO_EXECUTOR, error);
      }
      const known = ledger.get(frame.key);
      if (known?.state === 'done') return replay(known);
      const guard = await settings.guard();
      if (!guard)
        return refused(
          frame,
          UNDO_EXECUTOR,
          new RemoteError({ code: 'no_grant', message: 'this laptop grants no folder' }),
        );
      const { call } = ledger.receive({
        key: frame.key,
        trace: frame.trace,
        kind: 'undo',
        executor: UNDO_EXECUTOR,
        digest: frame.target,
        argsDigest: argsDigest({ target: frame.target }),
        target: frame.target,
      });
      if (call.state === 'received') {
        const refusal = await planUndo(call, frame.target, guard);
        if (refusal)
          return finish(call, { ok: false, error: { class: 'ChangedSince', message: refusal } }, started);
      }
      return applyAndFinish(ledger.get(call.key)!, link, guard, started);
    },

    /** Installs an executor the server pushed; the reply says whether it verified. */
    async install(frame: Extract<ServerFrame, { type: 'update' }>): Promise<LaptopFrame> {
      try {
        const executor = await cache.install(frame.executor, frame.version, frame.files);
        log(`cache: installed ${executor.name}@${executor.version}`);
        return {
          type: 'updated',
          executor: executor.name,
          version: executor.version,
          code: executor.digests.code,
        };
      } catch (error) {
        log(`cache: refused the update of ${frame.executor}: ${(error as Error).message}`);
        return {
          type: 'update-refused',
          executor: frame.executor,
          reason: (error as Error).message.slice(0, 1000),
        };
      }
    },
  };

  /** Journals the inverse of `target`'s operations, or says why it cannot be undone (nothing is changed then). */
  async function planUndo(call: LedgerCall, target: string, guard: Guard): Promise<string | undefined> {
    const original = ledger.get(target);
    if (original?.kind !== 'call' || original.state !== 'done')
      return `there is no finished call ${target} on this laptop to undo`;
    const other = ledger.undoneBy(target);
    if (other && other.key !== call.key) return `call ${target} was already undone (${other.key})`;
    const done = ledger.operations(target).filter((operation) => operation.state === 'done');
    if (done.length === 0) return `call ${target} changed no file`;
    const inverse: Array<Omit<LedgerOperation, 'key' | 'seq' | 'state' | 'afterHash'>> = [];
    const problems: string[] = [];
    for (const operation of [...done].reverse()) {
      const now = async (path: string) =>
        (await exists(path))
          ? { identity: (await identityOf(path))!, hash: await hashFile(path) }
          : undefined;
      if (operation.op === 'move') {
        const left = await now(join(guard.grant, operation.target!));
        if (!left || left.hash !== operation.afterHash) {
          problems.push(`${operation.target} ${left ? 'changed' : 'is gone'} since the call`);
          continue;
        }
        if (await exists(join(guard.grant, operation.source))) {
          problems.push(`${operation.source} is taken again since the call`);
          continue;
        }
        inverse.push({
          op: 'move',
          source: operation.target!,
          target: operation.source,
          trash: null,
          size: operation.size,
          hash: left.hash,
          identity: left.identity,
          replacedSize: null,
          replacedHash: null,
        });
      }
      const trashed = operation.trash && (await now(operation.trash));
      if (operation.trash && !trashed)
        problems.push(
          `the trash copy of ${operation.op === 'delete' ? operation.source : operation.target} is gone`,
        );
      else if (trashed) {
        const back = operation.op === 'delete' ? operation.source : operation.target!;
        if (operation.op === 'delete' && (await exists(join(guard.grant, back))))
          problems.push(`${back} is taken again since the call`);
        else
          inverse.push({
            op: 'restore',
            source: operation.trash!,
            target: back,
            trash: null,
            size: operation.op === 'delete' ? operation.size : operation.replacedSize!,
            hash: trashed.hash,
            identity: trashed.identity,
            replacedSize: null,
            replacedHash: null,
          });
      }
    }
    if (problems.length > 0)
      return `nothing was undone: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}`;
    await mkdir(settings.trashDir, { recursive: true, mode: 0o700 });
    ledger.plan(
      call.key,
      JSON.stringify({ ok: true, content: { undone: target, operations: inverse.length } }),
      inverse,
    );
    return undefined;
  }
}

export type LaptopRuntime = ReturnType<typeof createLaptopRuntime>;
