import type { Motivation, PatternRules, ProtoSource, Stage } from './types.ts';

/** The pattern detector's defaults (issue 14, seed 004 ch. 7): uses ≥ 3 and weight ≥ 0.30 within a month. */
export const DEFAULT_PATTERN_RULES: Required<PatternRules> = { minUses: 3, minWeight: 0.3, windowDays: 30 };

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The recurring proto-mnests as of `now`: wished-for executors used at least
 * `minUses` times, with a weight of at least `minWeight`, last asked for
 * within `windowDays`. Each comes back as the motivation a generation (or a
 * compose) starts from.
 *
 * @example
 * recurringProtos(mnestome, new Date()); // [{ kind: 'proto', src: 'fs_read', dst: 'csv_sum', uses: 3, weight: 0.39, … }]
 */
export function recurringProtos(
  source: ProtoSource,
  now: Date,
  rules: PatternRules = {},
): Array<Extract<Motivation, { kind: 'proto' }>> {
  const minUses = rules.minUses ?? DEFAULT_PATTERN_RULES.minUses;
  const minWeight = rules.minWeight ?? DEFAULT_PATTERN_RULES.minWeight;
  const windowDays = rules.windowDays ?? DEFAULT_PATTERN_RULES.windowDays;
  const since = new Date(now.getTime() - windowDays * DAY_MS);
  return source
    .protoMnests({ since, minUses, minWeight })
    .filter((mnest) => mnest.desiredSignature !== undefined)
    .map((mnest) => ({
      kind: 'proto' as const,
      src: mnest.src,
      dst: mnest.dst,
      uses: mnest.uses,
      weight: Math.round(mnest.weight * 1000) / 1000,
      lastUsedAt: mnest.lastUsedAt,
      desired: mnest.desiredSignature!,
    }));
}

/** The executors a motivation names that must exist for it to still hold. */
function namedExecutors(motivation: Motivation): string[] {
  switch (motivation.kind) {
    case 'proto':
      return [];
    case 'merge':
      return motivation.executors;
    case 'generalise':
      return motivation.executors;
    case 'specialise':
      return [motivation.executor];
  }
}

/**
 * Stage 1, pattern detect: the motivation still holds when the run starts —
 * a proto-mnest still recurs and its executor still does not exist; the
 * executors a merge, generalisation or specialisation names are still there.
 * Otherwise the run waits, saying what changed.
 */
export const patternStage: Stage = {
  name: 'pattern',
  async run(draft, context) {
    const motivation = draft.motivation;
    const present = new Set(context.executors().map((executor) => executor.name));
    if (motivation.kind === 'proto') {
      if (present.has(motivation.dst))
        return {
          kind: 'suspend',
          waitingFor: 'fix',
          reason: `an executor named ${motivation.dst} exists now: nothing to generate (reject this proposal)`,
        };
      const source = context.settings.mnestome;
      const now = (context.settings.clock ?? (() => new Date()))();
      if (source) {
        const still = recurringProtos(source, now, context.settings.pattern).find(
          (proto) => proto.src === motivation.src && proto.dst === motivation.dst,
        );
        if (!still)
          return {
            kind: 'suspend',
            waitingFor: 'fix',
            reason: `${motivation.dst} is no longer wished for often enough (the pattern faded): reject this proposal, or approve to check again`,
          };
        return {
          kind: 'done',
          note: `${still.dst} wished for ${still.uses} times after ${still.src}, weight ${still.weight}`,
          update: { motivation: still },
        };
      }
      return {
        kind: 'done',
        note: `${motivation.dst} wished for ${motivation.uses} times after ${motivation.src}`,
      };
    }
    const missing = namedExecutors(motivation).filter((name) => !present.has(name));
    if (missing.length > 0)
      return {
        kind: 'suspend',
        waitingFor: 'fix',
        reason: `${missing.join(', ')} no longer in the catalog: the ${motivation.kind} no longer holds`,
      };
    return {
      kind: 'done',
      note: `${motivation.kind} of ${namedExecutors(motivation).join(', ')} still holds`,
    };
  },
};
