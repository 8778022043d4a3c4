import { posix } from 'node:path';
import { inventory } from './arguments.ts';
import type { Judge, JudgeInput, Judgement } from './judge.ts';
import { isWithin, percentDecode } from './paths.ts';

/** Version of the rule pack: a rules verdict is reproducible from (version, call). */
export const RULES_JUDGE_VERSION = 'rules-1';

/** The weights of the rules judge. Every signal applies once per call, however often it occurs. */
export interface RulesJudgeWeights {
  /** Where every call starts. */
  base: number;
  /** The request names the executor (`fs_read`, `fs read` or `fs-read`): explicit intent. */
  namesExecutor: number;
  /** A `..` segment in a path-like value: possible traversal. */
  traversal: number;
  /** A key with characters other than letters, digits and `_`: not what a planner writes. */
  anomalousKey: number;
  /** A prompt-injection phrase in the arguments ("ignore previous instructions"). */
  injection: number;
  /** Zero-width or bidirectional control characters: text that reads differently than it runs. */
  hiddenCharacters: number;
  /** A value that is an absolute (or `~`) path outside the workspace: the call reaches beyond where executors work. Needs `place`. */
  outsideWorkspace: number;
}

/** The default weights (bonus positive, penalties as positive amounts subtracted). */
export const DEFAULT_RULES_WEIGHTS: Readonly<RulesJudgeWeights> = Object.freeze({
  base: 0.7,
  namesExecutor: 0.2,
  traversal: 0.3,
  anomalousKey: 0.3,
  injection: 0.5,
  hiddenCharacters: 0.2,
  outsideWorkspace: 0.1,
});

const builtIn = new WeakSet<Judge>();

const INJECTION =
  /\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding)\s+(?:instructions|rules|prompts?|messages)\b|<\/?\s*system\s*>|\bnew\s+system\s+prompt\b|\byou\s+are\s+now\s+(?:in\s+)?(?:developer|jailbreak|dan)\b/i;
const HIDDEN = /[\u200B-\u200D\u2060\uFEFF\u202A-\u202E\u2066-\u2069]/;
const TRAVERSAL = /(?:^|[\\/])\.\.(?:[\\/]|$)/;
const PLAIN_KEY = /^[A-Za-z0-9_]+$/;

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function namesExecutor(request: string, name: string): boolean {
  const lowered = request.toLowerCase();
  const forms = new Set(
    [name, name.replace(/[_-]+/g, ' '), name.replace(/[_-]+/g, '-'), name.replace(/[_-]+/g, '_')].map(
      (form) => form.toLowerCase(),
    ),
  );
  return [...forms].some((form) => {
    const escaped = form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+');
    return new RegExp(`(?:^|[^a-z0-9_])${escaped}(?:$|[^a-z0-9_])`).test(lowered);
  });
}

/** True when a value that is a single absolute (or home) path points outside the workspace. */
function isOutside(text: string, place: JudgeInput['place']): boolean {
  if (place === undefined) return false;
  const trimmed = text.trim();
  if (/\s/.test(trimmed)) return false;
  const expanded = trimmed.replace(/^(?:~(?=\/|$)|\$HOME(?![A-Za-z0-9_])|\$\{HOME\})/, place.home);
  if (!expanded.startsWith('/')) return false;
  return !isWithin(posix.resolve(expanded), posix.resolve(place.workspace));
}

/** Settings of {@link createRulesJudge}. */
export interface RulesJudgeSettings {
  /** Overrides some or all of {@link DEFAULT_RULES_WEIGHTS}. */
  weights?: Partial<RulesJudgeWeights>;
}

/**
 * The rules judge: local heuristics, microseconds, no model. Starts at
 * `base`, adds `namesExecutor` when the request names the executor, and
 * subtracts one penalty per signal found; the score is clamped to [0, 1].
 * The reason lists every signal with its weight, never an argument value.
 *
 * @example
 * const judge = createRulesJudge();
 * await judge.judge({ request: 'fs read notes.md', executor, args: { path: 'notes.md' } });
 * // { ok: true, score: 0.9, reason: 'rules-1: base 0.7; +0.2 request names the executor' }
 */
export function createRulesJudge(settings: RulesJudgeSettings = {}): Judge {
  const weights = { ...DEFAULT_RULES_WEIGHTS, ...settings.weights };

  function judge(input: JudgeInput): Judgement {
    const found = inventory(input.args);
    const values = found.strings.filter((entry) => entry.role === 'value').map((entry) => entry.text);
    const keys = found.strings.filter((entry) => entry.role === 'key').map((entry) => entry.text);
    const texts = found.strings.map((entry) => entry.text);
    const signals: [number, string][] = [];
    if (namesExecutor(input.request, input.executor.name))
      signals.push([weights.namesExecutor, 'request names the executor']);
    if (values.some((value) => TRAVERSAL.test(value) || TRAVERSAL.test(percentDecode(value))))
      signals.push([-weights.traversal, "'..' segment in a path"]);
    if (keys.some((key) => !PLAIN_KEY.test(key)))
      signals.push([-weights.anomalousKey, 'key with characters other than letters, digits or _']);
    if (texts.some((text) => INJECTION.test(text)))
      signals.push([-weights.injection, 'prompt-injection phrase in the arguments']);
    if (texts.some((text) => HIDDEN.test(text)))
      signals.push([-weights.hiddenCharacters, 'invisible or bidirectional control characters']);
    if (values.some((value) => isOutside(value, input.place)))
      signals.push([-weights.outsideWorkspace, 'absolute path outside the workspace']);
    const total = signals.reduce((sum, [weight]) => sum + weight, weights.base);
    const score = round(Math.min(1, Math.max(0, total)));
    const parts = [
      `base ${weights.base}`,
      ...signals.map(([weight, label]) => `${weight >= 0 ? '+' : '−'}${round(Math.abs(weight))} ${label}`),
    ];
    return { ok: true, score, reason: `${RULES_JUDGE_VERSION}: ${parts.join('; ')}` };
  }

  const created: Judge = { kind: 'rules', judge };
  builtIn.add(created);
  return created;
}

/** True for judges made by {@link createRulesJudge}, whose reasons never carry argument values. */
export function isBuiltInRulesJudge(judge: Judge): boolean {
  return builtIn.has(judge);
}
