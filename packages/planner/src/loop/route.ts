import type { LoopContext } from './context.ts';
import type { TurnState } from './types.ts';

/**
 * Which mode a turn runs in: the configured one, or for `hybrid` online
 * when a rule fires (a keyword, a capability of a top candidate, a pre-filter
 * less sure than the threshold), else local.
 */
export function route(context: LoopContext, state: TurnState, confidence: number): 'local' | 'online' {
  const mode = context.settings.mode ?? 'local';
  if (mode !== 'hybrid') return mode;
  const rules = context.settings.hybrid ?? {};
  const lowered = state.request.toLowerCase();
  if (rules.escalateOnKeywords?.some((word) => lowered.includes(word.toLowerCase()))) return 'online';
  const top = state.candidates.slice(0, 3);
  if (
    rules.escalateOnCapabilities?.some((capability) =>
      top.some((executor) => executor.manifest.executor.capabilities.includes(capability)),
    )
  ) {
    return 'online';
  }
  if (rules.escalateBelowConfidence !== undefined && confidence < rules.escalateBelowConfidence)
    return 'online';
  return 'local';
}
