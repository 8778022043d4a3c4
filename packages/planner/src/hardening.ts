import { exceedsJsonDepth, jsonTextDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import { type HardenedArgs, hardenToolArgs } from './llm/tool-args.ts';

export { TOOL_UNAVAILABLE } from './llm/tool-args.ts';

/**
 * Cleans tool arguments from a model before the loop uses them: the same
 * checks as {@link hardenToolArgs} (prototype keys dropped at every depth,
 * nesting past `MAX_JSON_DEPTH` refused before anything walks it, an object
 * required), so one rule serves the loop and the model layer.
 *
 * @example
 * hardenArgs('{"path":"notes.md"}'); // { ok: true, args: { path: 'notes.md' } }
 */
export function hardenArgs(raw: unknown): HardenedArgs {
  return hardenToolArgs(raw);
}

/** What the turn log and the model's history keep in place of arguments nested too deeply. */
export const ARGUMENTS_NOT_KEPT = `[arguments nested deeper than ${MAX_JSON_DEPTH} levels, not kept]`;

/**
 * A model's raw tool arguments as the turn keeps them (turn log, history sent
 * back to the model): unchanged, unless they nest deeper than `MAX_JSON_DEPTH`,
 * which no serialiser could write; then {@link ARGUMENTS_NOT_KEPT}.
 *
 * @example
 * keptArgs({ path: 'a.md' }); // { path: 'a.md' }
 */
export function keptArgs(raw: unknown): unknown {
  const tooDeep = typeof raw === 'string' ? jsonTextDepth(raw) > MAX_JSON_DEPTH : exceedsJsonDepth(raw);
  return tooDeep ? ARGUMENTS_NOT_KEPT : raw;
}
