import { MetnosError } from '@metnos/executor-sdk';

function marker(name: string): symbol {
  return Symbol.for(`metnos.error.${name}`);
}

const settingsMarker = marker('VaglioSettingsError');

/**
 * A vaglio setting that cannot be used: an explicit option or an environment
 * variable out of range. The message says which one and how to fix it.
 *
 * @example
 * try { createVaglio({ threshold: 2 }); }
 * catch (error) { if (VaglioSettingsError.isInstance(error)) console.error(error.setting); }
 */
export class VaglioSettingsError extends MetnosError {
  private readonly [settingsMarker] = true;
  /** The option or environment variable at fault, e.g. `METNOS_JUDGE_THRESHOLD`. */
  readonly setting: string;

  constructor(settings: { setting: string; message: string; cause?: unknown }) {
    super({ code: 'vaglio_settings', message: settings.message, cause: settings.cause });
    this.name = 'VaglioSettingsError';
    this.setting = settings.setting;
  }

  static override isInstance(error: unknown): error is VaglioSettingsError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[settingsMarker] === true
    );
  }
}

const approvalStoreMarker = marker('ApprovalStoreError');

/**
 * The approval store's file cannot be read or written. Refused approvals are
 * not errors (they come back as `{ ok: false, reason }`); this is for a store
 * that cannot work at all, e.g. a corrupt file.
 *
 * @example
 * try { await store.request(call); }
 * catch (error) { if (ApprovalStoreError.isInstance(error)) console.error(error.path); }
 */
export class ApprovalStoreError extends MetnosError {
  private readonly [approvalStoreMarker] = true;
  readonly path: string | undefined;

  constructor(settings: { message: string; path?: string; cause?: unknown }) {
    super({ code: 'approval_store', message: settings.message, cause: settings.cause });
    this.name = 'ApprovalStoreError';
    this.path = settings.path;
  }

  static override isInstance(error: unknown): error is ApprovalStoreError {
    return (
      MetnosError.isInstance(error) &&
      (error as unknown as Record<symbol, unknown>)[approvalStoreMarker] === true
    );
  }
}

const verdictLogMarker = marker('VerdictLogError');

/**
 * A verdict could not be appended to the monthly JSONL log. The vaglio does
 * not approve calls it cannot record.
 *
 * @example
 * try { await vaglio.evaluate(call, context); }
 * catch (error) { if (VerdictLogError.isInstance(error)) console.error(error.file); }
 */
export class VerdictLogError extends MetnosError {
  private readonly [verdictLogMarker] = true;
  readonly file: string;

  constructor(settings: { file: string; cause?: unknown }) {
    super({
      code: 'vaglio_log',
      message: `cannot append to the vaglio log ${settings.file}`,
      cause: settings.cause,
    });
    this.name = 'VerdictLogError';
    this.file = settings.file;
  }

  static override isInstance(error: unknown): error is VerdictLogError {
    return (
      MetnosError.isInstance(error) &&
      (error as unknown as Record<symbol, unknown>)[verdictLogMarker] === true
    );
  }
}
