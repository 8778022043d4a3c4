import { MetnosError } from '@metnos/executor-sdk';

const sandboxMarker = Symbol.for('metnos.error.SandboxError');

/**
 * A sandbox set up wrongly by its operator (a malformed host override, an
 * unknown tier). Refused calls are not errors: they come back as results
 * with `PolicyViolation` or `IsolationUnavailable`.
 *
 * @example
 * try { createSandboxRunner({ hostOverrides: { 'api.example.com': 'nope' } }); }
 * catch (error) { if (SandboxError.isInstance(error)) console.error(error.setting); }
 */
export class SandboxError extends MetnosError {
  private readonly [sandboxMarker] = true;
  /** The setting at fault. */
  readonly setting: string;

  constructor(settings: { setting: string; message: string; cause?: unknown }) {
    super({ code: 'sandbox_settings', message: settings.message, cause: settings.cause });
    this.name = 'SandboxError';
    this.setting = settings.setting;
  }

  static override isInstance(error: unknown): error is SandboxError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[sandboxMarker] === true
    );
  }
}
