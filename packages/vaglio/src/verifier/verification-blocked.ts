import { MetnosError } from '@metnos/executor-sdk';
import type { TraceEntry, VerifierVerdict } from './types.ts';

const blockedMarker = Symbol.for('metnos.error.VerificationBlocked');

/**
 * The verifier blocked a candidate: it must not be emitted. Thrown by
 * `verifier.release` (`verifier.verify` returns the same verdict as data).
 * Carries the whole verdict: pack id and version, hash and the per-rule
 * trace, for the handoff and the turn log.
 *
 * @example
 * try { verifier.release({ rulePack: 'rules.answer.v1', candidate, evidence }); }
 * catch (error) { if (VerificationBlocked.isInstance(error)) handOff(error.blocking); }
 */
export class VerificationBlocked extends MetnosError {
  private readonly [blockedMarker] = true;
  readonly verdict: VerifierVerdict;
  /** The pack asked for, and its version (`null` when no such pack is registered). */
  readonly rulePack: string;
  readonly packVersion: string | null;
  /** The verdict's hash: the same candidate under the same pack version blocks with the same hash. */
  readonly hash: string;
  /** Every rule that ran, in order. */
  readonly trace: readonly TraceEntry[];
  /** The entries that blocked. */
  readonly blocking: readonly TraceEntry[];

  constructor(settings: { verdict: VerifierVerdict; cause?: unknown }) {
    const { verdict } = settings;
    const blocking = verdict.trace.filter((entry) => entry.outcome === 'block');
    const pack = `${verdict.pack.id}@${verdict.pack.version ?? 'unknown'}`;
    super({
      code: 'verifier_blocked',
      message: `the verifier blocked the candidate (${pack}): ${blocking
        .map((entry) => `${entry.rule}: ${entry.reason ?? ''}`)
        .join('; ')}`,
      cause: settings.cause,
    });
    this.name = 'VerificationBlocked';
    this.verdict = verdict;
    this.rulePack = verdict.pack.id;
    this.packVersion = verdict.pack.version;
    this.hash = verdict.hash;
    this.trace = verdict.trace;
    this.blocking = blocking;
  }

  static override isInstance(error: unknown): error is VerificationBlocked {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[blockedMarker] === true
    );
  }
}
