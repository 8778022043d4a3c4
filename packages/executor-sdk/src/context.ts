import { homedir } from 'node:os';
import {
  CREDENTIAL_DOMAIN,
  type CredentialSet,
  credentialEndpoints,
  endpointAddress,
  type HostCredential,
} from './credentials.ts';
import type { HostServices } from './host-services.ts';
import type { DeclaredProfile } from './profile.ts';

/** Who asked for a call, recorded in the audit line. */
export type Caller =
  | { kind: 'user'; sender?: string; channel?: string }
  | { kind: 'planner'; turnId?: string }
  | { kind: 'scheduler'; scheduleId: string }
  /** A call from an MCP client through `metnos mcp` or the server's `/mcp`; `client` is the name it gave. */
  | { kind: 'mcp'; client: string }
  | { kind: 'cli' }
  | { kind: 'test' };

/** What the host knows about one call. */
export interface InvocationContext {
  traceId: string;
  turnId?: string;
  /** The workspace root on the host. */
  workspace: string;
  caller: Caller;
  /**
   * The instant the call happens at, as far as the executor can tell: an ISO
   * 8601 instant with a date, a time and `Z` or an offset (e.g. the turn's
   * `2026-04-25T08:14:33.881Z`). When set, `Date.now()`, `new Date()` and
   * `Date()` inside the executor answer this instant, so a replayed turn sees
   * the time its first run saw; `ctx.asOf` carries it as given. Unset: the
   * real clock. A value {@link invalidAsOf} refuses is `InvalidInput`, and
   * nothing runs.
   */
  asOf?: string;
  /** Per-instance settings for this executor (from the host configuration). */
  config?: Record<string, unknown>;
  /**
   * Host paths no executor may write in this call, beside the runner's own
   * (the catalog's executors folder and state, trust lists, `metnos.toml`).
   * Never sent to the executor process.
   */
  protect?: readonly ProtectedPath[];
  /**
   * The person's credentials, by handle (`credentials.toml` in the config
   * dir). Host-only, like `protect`: never sent to the executor process. The
   * sandbox offers a call only the handles its manifest declares
   * (`secret:<handle>`); the egress proxy logs in with them, so the process
   * gets an authenticated session and never the secret.
   */
  credentials?: CredentialSet;
  /**
   * The host services this call may reach at `http://metnos.host/<service>`
   * through the egress proxy, by name. Host-only, like `protect`: never sent
   * to the executor process. The sandbox offers only those the manifest also
   * declares (`host:<service>`).
   */
  hostServices?: HostServices;
}

// A calendar date, a time (seconds and a fraction optional) and a zone: an instant, never a local time.
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * Why `value` cannot be an {@link InvocationContext.asOf}, or undefined when
 * it can: a string in ISO 8601 instant form (`YYYY-MM-DDTHH:MM[:SS[.fraction]]`
 * then `Z` or `±HH:MM`) naming a real calendar date and time. A time without
 * a zone is refused: it would mean a different instant on every host.
 *
 * @example
 * invalidAsOf('2026-04-25T08:14:33.881Z'); // undefined
 * invalidAsOf('2026-02-30T00:00:00Z'); // 'asOf "2026-02-30T00:00:00Z" is not a real date and time'
 */
export function invalidAsOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return `asOf must be an ISO 8601 instant string, not ${typeof value}`;
  const shown = value.length > 64 ? `${value.slice(0, 64)}…` : value;
  const parts = INSTANT.exec(value);
  if (!parts) {
    return `asOf "${shown}" is not an ISO 8601 instant such as 2026-04-25T08:14:33.881Z (a date, a time, and Z or an offset)`;
  }
  const [year, month, day, hour, minute, second = 0, offsetHours = 0, offsetMinutes = 0] = parts
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part)));
  const calendar = new Date(0);
  calendar.setUTCFullYear(year!, month! - 1, day!);
  const realDay =
    calendar.getUTCFullYear() === year &&
    calendar.getUTCMonth() === month! - 1 &&
    calendar.getUTCDate() === day;
  if (!realDay || hour! > 23 || minute! > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) {
    return `asOf "${shown}" is not a real date and time`;
  }
  if (!Number.isFinite(Date.parse(value))) return `asOf "${shown}" is outside the range of a JavaScript Date`;
  return undefined;
}

/** A host path no executor may write, and why (shown in the refusal). */
export interface ProtectedPath {
  path: string;
  why: string;
}

/** A profile with `$WORKSPACE`, `$HOME` and `$TMP` replaced by real paths. */
export interface ExpandedProfile {
  fs: { read: string[]; write: string[]; hardlinks?: boolean };
  max_write_bytes?: number;
  exec: DeclaredProfile['exec'];
  network: DeclaredProfile['network'];
  max_output_bytes: number;
  max_duration_ms: number;
  max_memory_mb: number;
  min_tier: DeclaredProfile['min_tier'];
}

/**
 * Replaces the path placeholders of a declared profile for this host and call,
 * and each `$CREDENTIAL:<handle>` network entry with the `host:port` of that
 * credential's servers when the call is offered it (nothing otherwise).
 */
export function expandProfile(
  profile: DeclaredProfile,
  places: {
    workspace: string;
    tmpDir: string;
    home?: string;
    credentials?: Readonly<Record<string, HostCredential>>;
  },
): ExpandedProfile {
  const home = places.home ?? homedir();
  const expand = (entry: string) =>
    entry
      .replace(/^\$WORKSPACE(?=\/|$)/, places.workspace)
      .replace(/^\$HOME(?=\/|$)/, home)
      .replace(/^\$TMP(?=\/|$)/, places.tmpDir);
  return {
    fs: {
      read: profile.fs.read.map(expand),
      write: profile.fs.write.map(expand),
      ...(profile.fs.hardlinks !== undefined ? { hardlinks: profile.fs.hardlinks } : {}),
    },
    ...(profile.max_write_bytes !== undefined ? { max_write_bytes: profile.max_write_bytes } : {}),
    exec: profile.exec,
    network: {
      mode: profile.network.mode,
      domains: profile.network.domains.flatMap((entry) => {
        const handle = CREDENTIAL_DOMAIN.exec(entry)?.[1];
        if (handle === undefined) return [entry];
        const credential = places.credentials?.[handle];
        return credential ? credentialEndpoints(credential).map(endpointAddress) : [];
      }),
    },
    max_output_bytes: profile.max_output_bytes,
    max_duration_ms: profile.max_duration_ms,
    max_memory_mb: profile.max_memory_mb,
    min_tier: profile.min_tier,
  };
}
