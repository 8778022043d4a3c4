import { inspect } from 'node:util';

/**
 * How the host reaches a credential's server: TLS from the first byte
 * (`tls`, IMAPS 993, SMTPS 465), upgraded with STARTTLS (`starttls`), or
 * plain text (`none`, loopback and tests).
 */
export type CredentialTls = 'tls' | 'starttls' | 'none';

/** One server a credential logs in at. */
export interface CredentialEndpoint {
  host: string;
  port: number;
  tls: CredentialTls;
  /**
   * PEM certificates the server's certificate must chain to instead of the
   * system's roots (`ca_file`: a home server with its own authority).
   */
  ca?: string;
}

const SECRET_SHOWN = '<secret>';

/**
 * A secret the host holds (a password, a token). Every way a value turns into
 * text by accident — `JSON.stringify`, template strings, `util.inspect`,
 * `console.log` — shows `<secret>`; only {@link Secret.reveal} gives the
 * value, and only the egress proxy's login code calls it.
 *
 * @example
 * const password = new Secret('hunter2');
 * JSON.stringify({ password }); // '{"password":"<secret>"}'
 * password.reveal(); // 'hunter2'
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The value itself, for the one place that sends it to its own server. */
  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return SECRET_SHOWN;
  }

  toString(): string {
    return SECRET_SHOWN;
  }

  [inspect.custom](): string {
    return `Secret(${SECRET_SHOWN})`;
  }
}

/** A mail account: IMAP and/or SMTP servers, the user name and the password. */
export interface MailCredential {
  kind: 'mail';
  handle: string;
  imap?: CredentialEndpoint;
  smtp?: CredentialEndpoint;
  /** The account's mail address, the sender of what it sends: `address`, else a username that is one. */
  address?: string;
  username: string;
  password: Secret;
}

/**
 * An HTTP service (CalDAV, an API): the proxy adds `Authorization: Basic …`
 * (username and password) or `Authorization: Bearer …` (token) to requests
 * for the URL's origin, and speaks TLS upstream when the URL is https.
 */
export interface HttpCredential {
  kind: 'http';
  handle: string;
  /** The service's base URL, without user info. */
  url: string;
  endpoint: CredentialEndpoint;
  username?: string;
  password?: Secret;
  token?: Secret;
}

/** A credential the host holds for a handle. */
export type HostCredential = MailCredential | HttpCredential;

/** The credentials configured on this host, by handle. */
export type CredentialSet = Readonly<Record<string, HostCredential>>;

/**
 * What an executor may know of a handle offered to its call: where its
 * servers are (to name them in `CONNECT`) and, for mail, the address it sends
 * from; never the user name it logs in with or the secret.
 */
export type CredentialView =
  | { kind: 'mail'; imap?: string; smtp?: string; address?: string }
  | { kind: 'http'; url: string; origin: string };

/** Handle names: what follows `secret:` in a capability and `$CREDENTIAL:` in a profile. */
export const CREDENTIAL_HANDLE = /^[a-z][a-z_]{0,31}$/;

/** The capability prefix that asks for a credential handle: `secret:mail`. */
export const SECRET_CAPABILITY_PREFIX = 'secret:';

/** The profile network entry a credential's servers replace: `$CREDENTIAL:mail`. */
export const CREDENTIAL_DOMAIN = /^\$CREDENTIAL:([a-z][a-z_]{0,31})$/;

/**
 * The handles a manifest asks for with `secret:<handle>` capabilities.
 *
 * @example
 * declaredCredentialHandles(['net:imap', 'secret:mail']); // ['mail']
 */
export function declaredCredentialHandles(capabilities: readonly string[]): string[] {
  return capabilities
    .filter((capability) => capability.startsWith(SECRET_CAPABILITY_PREFIX))
    .map((capability) => capability.slice(SECRET_CAPABILITY_PREFIX.length))
    .filter((handle) => CREDENTIAL_HANDLE.test(handle));
}

/**
 * The credentials one call is offered: those its manifest declares
 * (`secret:<handle>`) AND the host has configured. Nothing else reaches the
 * call's egress proxy.
 *
 * @example
 * offeredCredentials(['secret:mail'], { mail, calendar }); // { mail }
 */
export function offeredCredentials(
  capabilities: readonly string[],
  credentials: CredentialSet | undefined,
): Record<string, HostCredential> {
  const offered: Record<string, HostCredential> = {};
  if (!credentials) return offered;
  for (const handle of declaredCredentialHandles(capabilities)) {
    if (Object.hasOwn(credentials, handle)) offered[handle] = credentials[handle]!;
  }
  return offered;
}

/**
 * The servers a credential logs in at, in the order IMAP, SMTP (mail) or the
 * URL's origin (http). A credential is never used anywhere else.
 *
 * @example
 * credentialEndpoints(mail); // [{ host: 'imap.example.com', port: 993, tls: 'tls' }, …]
 */
export function credentialEndpoints(credential: HostCredential): CredentialEndpoint[] {
  if (credential.kind === 'http') return [credential.endpoint];
  return [credential.imap, credential.smtp].filter((endpoint) => endpoint !== undefined);
}

/** `host:port`, the form of a profile's domain entries and of `CONNECT`. */
export function endpointAddress(endpoint: Pick<CredentialEndpoint, 'host' | 'port'>): string {
  return `${endpoint.host}:${endpoint.port}`;
}

/**
 * What the executor process is told about a handle: the servers' addresses.
 *
 * @example
 * credentialView(mail); // { kind: 'mail', imap: 'imap.example.com:993', smtp: 'smtp.example.com:465', address: 'me@example.com' }
 */
export function credentialView(credential: HostCredential): CredentialView {
  if (credential.kind === 'http') {
    const url = new URL(credential.url);
    return { kind: 'http', url: credential.url, origin: url.origin };
  }
  return {
    kind: 'mail',
    ...(credential.imap ? { imap: endpointAddress(credential.imap) } : {}),
    ...(credential.smtp ? { smtp: endpointAddress(credential.smtp) } : {}),
    ...(credential.address ? { address: credential.address } : {}),
  };
}
