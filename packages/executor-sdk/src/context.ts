import { homedir } from 'node:os';
import type { DeclaredProfile } from './profile.ts';

/** Who asked for a call, recorded in the audit line. */
export type Caller =
  | { kind: 'user'; sender?: string; channel?: string }
  | { kind: 'planner'; turnId?: string }
  | { kind: 'scheduler'; scheduleId: string }
  | { kind: 'cli' }
  | { kind: 'test' };

/** What the host knows about one call. */
export interface InvocationContext {
  traceId: string;
  turnId?: string;
  /** The workspace root on the host. */
  workspace: string;
  caller: Caller;
  /** Per-instance settings for this executor (from the host configuration). */
  config?: Record<string, unknown>;
  /**
   * Host paths no executor may write in this call, beside the runner's own
   * (the catalog's executors folder and state, trust lists, `metnos.toml`).
   * Never sent to the executor process.
   */
  protect?: readonly ProtectedPath[];
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

/** Replaces the path placeholders of a declared profile for this host and call. */
export function expandProfile(
  profile: DeclaredProfile,
  places: { workspace: string; tmpDir: string; home?: string },
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
    network: profile.network,
    max_output_bytes: profile.max_output_bytes,
    max_duration_ms: profile.max_duration_ms,
    max_memory_mb: profile.max_memory_mb,
    min_tier: profile.min_tier,
  };
}
