import { createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign, verify } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from './canonical.ts';
import { RemoteError } from './errors.ts';

/** Domain separation of the signed bytes; bumping it versions the format. */
export const TOKEN_TAG = 'metnos.call-token.v1';

/** What a call token binds: who may run what, for which trace, until when. */
export const tokenClaimsSchema = z
  .object({
    /** The device the call is for. */
    device: z.string().regex(/^dev_[a-z0-9]{8,32}$/),
    /** The executor's name, or `metnos.undo` for an undo. */
    executor: z.string().regex(/^[a-z][a-z0-9_.]{1,63}$/),
    /** The digest of the executor's code in its signed manifest (`blake3:…`), or the undone call's key. */
    digest: z.string().min(1).max(200),
    /** The trace the call belongs to. */
    trace: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/),
    /** The idempotency key: the same key is the same call, run at most once. */
    key: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/),
    /** SHA-256 of the arguments' canonical JSON. */
    args: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    /** A fresh value per token: a token is accepted once. */
    nonce: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
    /** Issued and expiry, milliseconds since the epoch. */
    issuedAt: z.number().int().nonnegative(),
    expiresAt: z.number().int().nonnegative(),
  })
  .strict();

export type TokenClaims = z.infer<typeof tokenClaimsSchema>;

/** How long a call token is valid: long enough for a retry after a reconnect, short enough to be useless later. */
export const TOKEN_LIFETIME_MS = 5 * 60_000;
/** Clock difference tolerated between server and laptop. */
export const CLOCK_SKEW_MS = 60_000;

function asPrivateKey(key: KeyObject | string): KeyObject {
  return typeof key === 'string' ? createPrivateKey(key) : key;
}

function asPublicKey(key: KeyObject | string): KeyObject {
  return typeof key === 'string' ? createPublicKey(key) : key;
}

function signedBytes(payload: string): Buffer {
  return Buffer.from(`${TOKEN_TAG}\n${payload}`, 'utf8');
}

/**
 * Signs a call token with the server's key (ECDSA P-256, SHA-256): the
 * canonical JSON of the claims and the signature, each base64url, joined by
 * a dot. The nonce and times are filled in when not given.
 *
 * @example
 * const token = signCallToken({ device, executor: 'photo_organize', digest, trace, key, args: argsDigest(args) }, serverKey);
 */
export function signCallToken(
  claims: Omit<TokenClaims, 'nonce' | 'issuedAt' | 'expiresAt'> &
    Partial<Pick<TokenClaims, 'nonce' | 'issuedAt' | 'expiresAt'>>,
  key: KeyObject | string,
  now: number = Date.now(),
): string {
  const full = tokenClaimsSchema.parse({
    ...claims,
    nonce: claims.nonce ?? randomBytes(18).toString('base64url'),
    issuedAt: claims.issuedAt ?? now,
    expiresAt: claims.expiresAt ?? now + TOKEN_LIFETIME_MS,
  });
  const payload = Buffer.from(canonicalJson(full), 'utf8').toString('base64url');
  const signature = sign('sha256', signedBytes(payload), asPrivateKey(key)).toString('base64url');
  return `${payload}.${signature}`;
}

/**
 * Checks a call token: the signature with the server's public key, the claims'
 * shape, and the clock (not expired, not issued in the future). Replay and
 * the binding to a device, an executor and arguments are the caller's checks,
 * against its own state. Throws {@link RemoteError} (`bad_token`, `expired`).
 *
 * @example
 * const claims = verifyCallToken(token, serverCertificate.publicKey);
 */
export function verifyCallToken(
  token: string,
  key: KeyObject | string,
  now: number = Date.now(),
): TokenClaims {
  const parts = /^([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{1,256})$/.exec(token);
  if (!parts) throw new RemoteError({ code: 'bad_token', message: 'the call token is not well formed' });
  const [, payload, signature] = parts as unknown as [string, string, string];
  let valid = false;
  try {
    valid = verify('sha256', signedBytes(payload), asPublicKey(key), Buffer.from(signature, 'base64url'));
  } catch {
    valid = false;
  }
  if (!valid)
    throw new RemoteError({ code: 'bad_token', message: 'the call token is not signed by this server' });
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new RemoteError({ code: 'bad_token', message: 'the call token does not hold JSON' });
  }
  const parsed = tokenClaimsSchema.safeParse(decoded);
  if (!parsed.success)
    throw new RemoteError({ code: 'bad_token', message: 'the call token does not hold the expected claims' });
  const claims = parsed.data;
  if (claims.expiresAt + CLOCK_SKEW_MS < now)
    throw new RemoteError({ code: 'expired', message: 'the call token has expired' });
  if (claims.issuedAt - CLOCK_SKEW_MS > now || claims.expiresAt - claims.issuedAt > TOKEN_LIFETIME_MS)
    throw new RemoteError({ code: 'bad_token', message: 'the call token claims times it cannot have' });
  return claims;
}
