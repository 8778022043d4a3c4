import type { StoredCalibration } from '@metnos/autopath/stores';
import type { MemoryRecognition } from './recognition.ts';
import { normalizeRequest } from './slots.ts';
import type { EngineSettings } from './types.ts';

/** What one round of maintenance did. */
export interface MaintenanceReport {
  /** L0 shortcuts dropped by the aging rules. */
  aged: string[];
  /** L0 shortcuts dropped because an executor they use changed version or is gone. */
  invalidated: string[];
  /** L1 autopaths retired for the same reason. */
  retired: string[];
  /** L0 vectors re-embedded because another embedder made them. */
  reembedded: number;
  /** Calibrations fitted and saved in this round. */
  calibrated: Partial<Record<'fastpath' | 'autopath', StoredCalibration>>;
}

/**
 * The part of maintenance that needs no embedding: aging of L0 shortcuts
 * (never reused, stale, over the cap) and invalidation of L0 shortcuts and
 * L1 autopaths whose executors changed version or disappeared. An empty
 * catalog invalidates nothing (the turn ends at the Terminator anyway, and
 * a catalog that failed to load must not wipe the memory).
 */
export function ageAndInvalidate(
  settings: EngineSettings,
): Pick<MaintenanceReport, 'aged' | 'invalidated' | 'retired'> {
  const aged = settings.fastpath.age(settings.aging);
  const executors = settings.catalog.executors();
  if (executors.length === 0) return { aged, invalidated: [], retired: [] };
  const versions = new Map(executors.map((executor) => [executor.name, executor.version]));
  const current = (name: string) => versions.get(name);
  return {
    aged,
    invalidated: settings.fastpath.invalidate(current),
    retired: settings.autopath.invalidate(current),
  };
}

/** Re-embeds L0 vectors another (or an unnamed) embedder made, so they are compared again. */
export async function reembedShortcuts(settings: EngineSettings, embedderId: string): Promise<number> {
  const stale = settings.fastpath.list().filter((entry) => entry.embedderId !== embedderId);
  if (stale.length === 0) return 0;
  const vectors = await settings.embedder.embed(stale.map((entry) => normalizeRequest(entry.request)));
  settings.fastpath.setVectors(
    stale.map((entry, index) => ({ id: entry.id, vector: vectors[index]! })),
    embedderId,
  );
  return stale.length;
}

/**
 * One round of memory maintenance: aging and invalidation, re-embedding of
 * vectors of another embedder, and a fresh calibration of the L0 and L1
 * recognizers when the stored one for this embedder is missing or older
 * than `calibrateEveryMs`. The engine runs it when it opens and on its
 * own every `maintenanceEveryMs`; `engine.maintain()` runs it on demand.
 *
 * @example
 * const report = await maintainMemory(settings, 'hashing-v1', recognition);
 * console.log(`${report.aged.length} aged, ${report.invalidated.length} invalidated`);
 */
export async function maintainMemory(
  settings: EngineSettings,
  embedderId: string,
  recognition: MemoryRecognition,
  options: { forceCalibration?: boolean } = {},
): Promise<MaintenanceReport> {
  const sync = ageAndInvalidate(settings);
  let reembedded = 0;
  try {
    reembedded = await reembedShortcuts(settings, embedderId);
  } catch {
    // an embedder that fails now leaves the old vectors out of recognition until it answers
  }
  const calibrated = await recognition.calibrate({
    everyMs: settings.calibrateEveryMs,
    force: options.forceCalibration,
  });
  return { ...sync, reembedded, calibrated };
}

/**
 * Calls `maintain()` every `everyMs` on a timer that does not keep the
 * process alive; returns the function that stops it. Failures go to
 * `onError` (default: ignored, the next round tries again).
 *
 * @example
 * const stop = scheduleMaintenance(engine, { everyMs: 3_600_000 });
 * process.on('SIGTERM', stop);
 */
export function scheduleMaintenance(
  engine: { maintain(): Promise<unknown> },
  options: { everyMs: number; onError?: (error: unknown) => void },
): () => void {
  const timer = setInterval(() => {
    engine.maintain().catch((error: unknown) => options.onError?.(error));
  }, options.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
