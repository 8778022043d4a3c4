import type { VerifiedExecutor } from '@metnos/executor-sdk';
import type { DesiredSignature } from '@metnos/mnestome';
import { type FindChainOptions, findChain } from './find-chain.ts';

/**
 * What reactive compose tells the planner about a proto-mnest it just
 * registered, in the seed's words: the chain that closes it and the hop to
 * try next, or the road is closed. The planner does not run the chain
 * itself: the model (or the Proposer) stays master of the sequence.
 */
export type ComposeReport =
  | {
      strategy: 'compose';
      state: 'composed';
      chain: string[];
      first_hop: string;
      suggestion: string;
    }
  | {
      strategy: 'compose';
      state: 'abandoned';
      chain: [];
      first_hop: null;
      suggestion: string;
    };

/** What {@link Composer.compose} is asked: the source executor, the wished-for signature, the executors to use. */
export interface ComposeRequest {
  from?: string;
  desired: DesiredSignature;
  executors: readonly VerifiedExecutor[];
}

/** The sentence of a closed road. */
export const ROAD_CLOSED = 'There is no executor available for this need, look for another way';

/**
 * Reactive compose for one proto-mnest: {@link findChain}, as the report
 * the observation (or the Recovery prompt) carries. Fail-safe: whatever
 * goes wrong inside gives `undefined`, and the caller keeps its own message.
 *
 * @example
 * composeReaction({ from: 'fs_read', desired, executors: catalog.executors() });
 * // { strategy: 'compose', state: 'composed', chain: ['csv_parse', 'column_sum'], first_hop: 'csv_parse',
 * //   suggestion: "Retry by invoking 'csv_parse' as the next step, then column_sum" }
 */
export function composeReaction(
  request: ComposeRequest,
  options: FindChainOptions = {},
): ComposeReport | undefined {
  try {
    const result = findChain(request.from, request.desired, request.executors, options);
    if (!result.found)
      return { strategy: 'compose', state: 'abandoned', chain: [], first_hop: null, suggestion: ROAD_CLOSED };
    const [first, ...rest] = result.chain as [string, ...string[]];
    const then = rest.length > 0 ? `, then ${rest.join(' → ')}` : '';
    return {
      strategy: 'compose',
      state: 'composed',
      chain: result.chain,
      first_hop: first,
      suggestion: `Retry by invoking '${first}' as the next step${then}`,
    };
  } catch {
    return undefined;
  }
}

/** The composer the planner is given: reactive compose with fixed search options. */
export interface Composer {
  compose(request: ComposeRequest): ComposeReport | undefined;
}

/**
 * A {@link Composer} for the planner's settings (`composer`): the loop
 * asks it when a proto-mnest is registered, the engine's Recovery before it
 * gives up on a tool that does not exist.
 *
 * @example
 * const engine = createEngine({ ...settings, mnestome, composer: createComposer() });
 */
export function createComposer(options: FindChainOptions = {}): Composer {
  return { compose: (request) => composeReaction(request, options) };
}
