const marker = Symbol.for('metnos.error');

/** Settings shared by every Metnos error. */
export interface MetnosErrorSettings {
  /** A short machine-readable code, e.g. `manifest_invalid`. */
  code: string;
  message: string;
  cause?: unknown;
}

/**
 * Base class of every error Metnos throws. Recognise errors with
 * {@link MetnosError.isInstance} (or the subclass's own `isInstance`), which
 * works across duplicate copies of the package, unlike `instanceof`.
 *
 * @example
 * try { parseManifest(text, 'manifest.toml'); }
 * catch (error) { if (ManifestError.isInstance(error)) console.error(error.field); }
 */
export class MetnosError extends Error {
  private readonly [marker] = true;
  readonly code: string;

  constructor({ code, message, cause }: MetnosErrorSettings) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'MetnosError';
    this.code = code;
  }

  static isInstance(error: unknown): error is MetnosError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

function defineMarker(name: string): symbol {
  return Symbol.for(`metnos.error.${name}`);
}

const manifestMarker = defineMarker('ManifestError');

/**
 * A `manifest.toml` (or another artefact) that does not match what Metnos expects.
 * Names the file, the field and what was expected.
 */
export class ManifestError extends MetnosError {
  private readonly [manifestMarker] = true;
  readonly file: string;
  readonly field: string;
  readonly expected: string;

  constructor(settings: { file: string; field: string; expected: string; cause?: unknown }) {
    super({
      code: 'manifest_invalid',
      message: `${settings.file}: field "${settings.field}": expected ${settings.expected}`,
      cause: settings.cause,
    });
    this.name = 'ManifestError';
    this.file = settings.file;
    this.field = settings.field;
    this.expected = settings.expected;
  }

  static override isInstance(error: unknown): error is ManifestError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[manifestMarker] === true
    );
  }
}

/** Why an executor failed verification. Each value names one cause a user can act on. */
export type VerificationFailureReason =
  | 'missing_artefact'
  | 'manifest_invalid'
  | 'schema_invalid'
  | 'signature_malformed'
  | 'signature_invalid'
  | 'untrusted_key'
  | 'digest_mismatch'
  | 'profile_lock_mismatch'
  | 'rollback'
  | 'name_mismatch'
  | 'current_invalid';

const verificationMarker = defineMarker('VerificationError');

/**
 * An executor that failed one of the loader's checks. `artefact` names the
 * file at fault when there is one (`manifest.toml`, `main.ts`, `schema.json`,
 * `profile.lock`, `manifest.sig`).
 */
export class VerificationError extends MetnosError {
  private readonly [verificationMarker] = true;
  readonly reason: VerificationFailureReason;
  readonly artefact: string | undefined;

  constructor(settings: {
    reason: VerificationFailureReason;
    message: string;
    artefact?: string;
    cause?: unknown;
  }) {
    super({ code: `verification_${settings.reason}`, message: settings.message, cause: settings.cause });
    this.name = 'VerificationError';
    this.reason = settings.reason;
    this.artefact = settings.artefact;
  }

  static override isInstance(error: unknown): error is VerificationError {
    return (
      MetnosError.isInstance(error) &&
      (error as unknown as Record<symbol, unknown>)[verificationMarker] === true
    );
  }
}

const keyMarker = defineMarker('KeyError');

/** A key that cannot be read, parsed or stored safely. */
export class KeyError extends MetnosError {
  private readonly [keyMarker] = true;

  constructor(message: string, cause?: unknown) {
    super({ code: 'key_error', message, cause });
    this.name = 'KeyError';
  }

  static override isInstance(error: unknown): error is KeyError {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[keyMarker] === true;
  }
}

const lifecycleMarker = defineMarker('LifecycleError');

/** A lifecycle transition the state machine does not allow, or an unknown executor. */
export class LifecycleError extends MetnosError {
  private readonly [lifecycleMarker] = true;

  constructor(message: string, cause?: unknown) {
    super({ code: 'lifecycle_error', message, cause });
    this.name = 'LifecycleError';
  }

  static override isInstance(error: unknown): error is LifecycleError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[lifecycleMarker] === true
    );
  }
}

const auditMarker = defineMarker('AuditError');

/**
 * The audit log cannot be written safely: its folder is a symlink or belongs to
 * someone else, a day's file is not a plain file, or the disk is full. Calls are
 * refused while it lasts (`AuditUnavailable`): Metnos does not act unrecorded.
 */
export class AuditError extends MetnosError {
  private readonly [auditMarker] = true;
  /** The file or folder at fault. */
  readonly path: string;
  /** The disk is full: the reserve is spent, and a line can still be written from what it gave back. */
  readonly diskFull: boolean;

  constructor(path: string, message: string, cause?: unknown, options: { diskFull?: boolean } = {}) {
    super({ code: 'audit_unavailable', message, cause });
    this.name = 'AuditError';
    this.path = path;
    this.diskFull = options.diskFull === true;
  }

  static override isInstance(error: unknown): error is AuditError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[auditMarker] === true
    );
  }
}

/** Why the receipt chain refused to take a receipt. */
export type ReceiptFailureReason =
  | 'torn_tail'
  | 'truncated'
  | 'unreadable'
  | 'lock_timeout'
  | 'unsafe_path'
  | 'bad_receipt'
  | 'write_failed';

const receiptMarker = defineMarker('ReceiptError');

/**
 * The receipt chain cannot take a receipt: its last line is torn (a crash cut
 * a write short), receipts its signed head counted are gone, its folder is
 * unsafe, or another process holds its lock too long. While it lasts the
 * calls it would record are refused (`AuditUnavailable`): Metnos does not act
 * unreceipted. `metnos receipts repair` settles a torn tail or a truncation
 * with a signed `repair` receipt.
 */
export class ReceiptError extends MetnosError {
  private readonly [receiptMarker] = true;
  readonly reason: ReceiptFailureReason;
  /** The file at fault, when there is one. */
  readonly path: string | undefined;

  constructor(settings: { reason: ReceiptFailureReason; message: string; path?: string; cause?: unknown }) {
    super({ code: `receipt_${settings.reason}`, message: settings.message, cause: settings.cause });
    this.name = 'ReceiptError';
    this.reason = settings.reason;
    this.path = settings.path;
  }

  static override isInstance(error: unknown): error is ReceiptError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[receiptMarker] === true
    );
  }
}
