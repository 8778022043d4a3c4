import { and, eq } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { CalibrationReport, DecisionRule } from '../recognizer.ts';
import { recognizerCalibrations } from './schema.ts';

/** A decision rule a store keeps for one embedder, with what its calibration measured. */
export interface StoredCalibration {
  embedderId: string;
  rule: DecisionRule;
  examples: number;
  correctReuse: number;
  wrongReuse: number;
  falseHits: number;
  bounded: boolean;
  calibratedAt: string;
}

/**
 * The calibrations of one store (`space`), one row per embedder id, in the
 * store's own file beside the vectors they were fitted on.
 *
 * @example
 * const calibrations = calibrationsOf(db, 'fastpath', () => new Date());
 * calibrations.save('hashing-v1', report);
 * calibrations.get('hashing-v1')?.rule;
 */
export function calibrationsOf(db: BetterSQLite3Database, space: string, clock: () => Date) {
  return {
    get(embedderId: string): StoredCalibration | undefined {
      const row = db
        .select()
        .from(recognizerCalibrations)
        .where(
          and(eq(recognizerCalibrations.space, space), eq(recognizerCalibrations.embedderId, embedderId)),
        )
        .get();
      if (!row) return undefined;
      return {
        embedderId,
        rule: { threshold: row.threshold, margin: row.margin, mix: row.mix },
        examples: row.examples,
        correctReuse: row.correctReuse,
        wrongReuse: row.wrongReuse,
        falseHits: row.falseHits,
        bounded: row.bounded,
        calibratedAt: row.calibratedAt,
      };
    },
    save(embedderId: string, report: CalibrationReport): StoredCalibration {
      const values = {
        threshold: report.rule.threshold,
        margin: report.rule.margin,
        mix: report.rule.mix,
        examples: report.inScope + report.outOfScope,
        correctReuse: report.correctReuse,
        wrongReuse: report.wrongReuse,
        falseHits: report.falseHits,
        bounded: report.bounded,
        calibratedAt: clock().toISOString(),
      };
      db.insert(recognizerCalibrations)
        .values({ space, embedderId, ...values })
        .onConflictDoUpdate({
          target: [recognizerCalibrations.space, recognizerCalibrations.embedderId],
          set: values,
        })
        .run();
      return this.get(embedderId)!;
    },
  };
}
