import { MetnosError } from '@metnos/executor-sdk';

const marker = Symbol.for('metnos.error.RemoteError');

/**
 * Why a remote call, a pairing or a frame was refused. `code` is one a
 * person (or a test) can act on: `bad_token`, `replayed`, `expired`,
 * `wrong_device`, `revoked`, `bad_frame`, `pairing_refused`, `outside_grant`,
 * `forbidden_path`, `changed_since`, `not_paired`, `unreachable`.
 */
export class RemoteError extends MetnosError {
  private readonly [marker] = true;

  constructor(settings: { code: string; message: string; cause?: unknown }) {
    super(settings);
    this.name = 'RemoteError';
  }

  static override isInstance(error: unknown): error is RemoteError {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[marker] === true;
  }
}
