import type { ChatModel } from '../model.ts';
import type { FillerCache } from './filler-cache.ts';
import { type Plan, planHash } from './plan.ts';
import { findPlaceholders } from './references.ts';

/** The models fillers may ask, by tier; a missing tier falls back to the next cheaper one. */
export type FillerModels = Partial<Record<'fast' | 'middle' | 'wise', ChatModel>>;

/** The model a filler's `tier` asks: its own tier, else the nearest cheaper one, else none. */
export function fillerModelFor(
  models: FillerModels,
  tier: 'fast' | 'middle' | 'wise',
): ChatModel | undefined {
  if (tier === 'wise') return models.wise ?? models.middle ?? models.fast;
  if (tier === 'middle') return models.middle ?? models.fast;
  return models.fast;
}

/** What resolving the fillers of a plan needs. */
export interface FillerSettings {
  request: string;
  slots?: Record<string, string>;
  models: FillerModels;
  /** Filler answers cached across turns, keyed by plan + filler + request slots. */
  cache?: FillerCache;
  signal?: AbortSignal;
}

/** A filler is used by a plan when a step, a decision draft, the final message or a branch's message names it. */
function usedFillers(plan: Plan): Set<string> {
  const texts: unknown[] = [
    plan.final_message,
    ...(plan.policy?.branch ?? []).map((branch) => branch.final_message),
  ];
  for (const step of plan.steps) {
    if (step.kind === 'decision') texts.push(step.draft);
    else if (step.kind !== 'verify') texts.push(step.args);
  }
  return new Set(
    findPlaceholders(texts)
      .filter((match) => match.kind === 'filler')
      .map((match) => match.name!),
  );
}

async function askFiller(
  model: ChatModel,
  prompt: string,
  settings: FillerSettings,
): Promise<string | undefined> {
  try {
    const response = await model.generate({
      system: 'Answer with the value only: one short line, no explanation.',
      messages: [{ role: 'user', content: `Request: ${settings.request}\nQuestion: ${prompt}` }],
      tools: [],
      signal: settings.signal,
    });
    const line = response.text.trim().split('\n')[0]?.trim();
    return line && line.length <= 500 ? line : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The values of the fillers a plan uses: each asked of the model of its
 * `tier` (fast by default) with a one-line answer, cached across turns;
 * a filler whose model fails or has no tier falls back to its default.
 */
export async function resolveFillers(plan: Plan, settings: FillerSettings): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  for (const name of usedFillers(plan)) {
    const filler = plan.fillers[name];
    if (!filler) continue;
    const key = `${planHash(plan)}|${name}|${JSON.stringify(settings.slots ?? {})}`;
    const cached = settings.cache?.get(key);
    if (cached !== undefined) {
      values[name] = cached;
      continue;
    }
    const model = fillerModelFor(settings.models, filler.tier);
    const value = (model ? await askFiller(model, filler.prompt, settings) : undefined) ?? filler.default;
    if (value === undefined) continue;
    values[name] = value;
    settings.cache?.set(key, value);
  }
  return values;
}
