import { MetnosError } from '@metnos/executor-sdk';

const marker = Symbol.for('metnos.error.SyntError');

/** Why the synt refused a decision: no such card, or the card is not in a state that takes it. */
export type SyntErrorCode = 'not_found' | 'conflict' | 'invalid';

/**
 * A decision the synt cannot take as asked: an unknown id (`not_found`), a
 * card or run in another state than the decision needs (`conflict`), or a
 * decision that misses what it must carry (`invalid`). Expected outcomes of
 * the stages (a refused draft, failing birth tests) are data on the run,
 * never this error.
 *
 * @example
 * try { await synt.approve('p-unknown', { by: 'me' }); } catch (error) { if (SyntError.isInstance(error)) console.log(error.code); }
 */
export class SyntError extends MetnosError {
  private readonly [marker] = true;
  override readonly code: SyntErrorCode;

  constructor(code: SyntErrorCode, message: string) {
    super({ code, message });
    this.name = 'SyntError';
    this.code = code;
  }

  static override isInstance(error: unknown): error is SyntError {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
