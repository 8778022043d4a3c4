import { z } from 'zod';

/**
 * A hybrid logical clock timestamp: the physical clock in epoch milliseconds
 * (`ms`) and a logical counter (`c`) that orders events within the same
 * millisecond, or while the wall clock stands behind an earlier stamp.
 */
export interface HlcTimestamp {
  ms: number;
  c: number;
}

/** The JSON shape of a {@link HlcTimestamp}, for lines read back from disk. */
export const hlcSchema = z
  .object({
    ms: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    c: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  })
  .strict();

/**
 * Orders two stamps: negative when `a` is earlier, 0 when equal, positive when later.
 *
 * @example
 * compareHlc({ ms: 5, c: 1 }, { ms: 5, c: 0 }); // 1
 */
export function compareHlc(a: HlcTimestamp, b: HlcTimestamp): number {
  return a.ms !== b.ms ? a.ms - b.ms : a.c - b.c;
}

/**
 * A stamp as text that sorts as the stamps do: the UTC instant of `ms` and
 * the counter, e.g. `2026-05-02T10:00:00.000Z/0003`.
 *
 * @example
 * formatHlc({ ms: 0, c: 2 }); // '1970-01-01T00:00:00.000Z/0002'
 */
export function formatHlc(stamp: HlcTimestamp): string {
  return `${new Date(stamp.ms).toISOString()}/${String(stamp.c).padStart(4, '0')}`;
}

/** Settings of {@link createHlc}. */
export interface HlcSettings {
  /** The physical clock in epoch milliseconds; default `Date.now`. */
  now?: () => number;
}

/**
 * A hybrid logical clock. `now()` stamps a local event; `receive(stamp)`
 * merges a stamp seen elsewhere (another process's last receipt), so the next
 * local stamp is later than both. Stamps never go backwards, even when the
 * wall clock steps back: the physical part holds and the counter climbs until
 * the wall clock catches up.
 *
 * @example
 * const hlc = createHlc();
 * const first = hlc.now();
 * const second = hlc.now();
 * compareHlc(second, first) > 0; // true
 */
export function createHlc(settings: HlcSettings = {}) {
  const physical = settings.now ?? Date.now;
  let last: HlcTimestamp = { ms: 0, c: 0 };
  const wall = () => Math.max(0, Math.floor(physical()));
  return {
    /** A stamp for an event happening here, later than every stamp this clock gave or received. */
    now(): HlcTimestamp {
      const ms = wall();
      last = ms > last.ms ? { ms, c: 0 } : { ms: last.ms, c: last.c + 1 };
      return { ...last };
    },
    /** Merges a stamp from elsewhere; returns the stamp of the receipt, later than both. */
    receive(remote: HlcTimestamp): HlcTimestamp {
      const ms = Math.max(wall(), last.ms, remote.ms);
      let c = 0;
      if (ms === last.ms && ms === remote.ms) c = Math.max(last.c, remote.c) + 1;
      else if (ms === last.ms) c = last.c + 1;
      else if (ms === remote.ms) c = remote.c + 1;
      last = { ms, c };
      return { ...last };
    },
    /** The last stamp given, without advancing the clock. */
    peek(): HlcTimestamp {
      return { ...last };
    },
  };
}

/** A hybrid logical clock made by {@link createHlc}. */
export type Hlc = ReturnType<typeof createHlc>;
