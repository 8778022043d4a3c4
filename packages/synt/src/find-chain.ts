import type { VerifiedExecutor } from '@metnos/executor-sdk';
import type { DesiredSignature } from '@metnos/mnestome';
import { type Contract, contractOf, type Field, fills } from './schema-fields.ts';
import { executorWords, wantedWords } from './words.ts';

/** Settings of {@link findChain}; every field has a default. */
export interface FindChainOptions {
  /** The longest chain tried. Default 3. */
  maxDepth?: number;
  /** Milliseconds the search may take before it gives up. Default 50. */
  timeBudgetMs?: number;
  /**
   * Which executors may stand in a chain. Default: every one given (a
   * catalog lists only signed, invocable versions); pass the lifecycle's
   * `active`/`seed` check to leave `fused` or `below_threshold` ones out.
   */
  isActive?: (executor: VerifiedExecutor) => boolean;
  /** The clock the time budget is read on (milliseconds). Default `performance.now`. */
  now?: () => number;
}

/** What {@link findChain} found: a chain, or why there is none. */
export type ChainResult =
  | { found: true; chain: string[]; wanted: string[]; explored: number }
  | {
      found: false;
      /** `no_chain`: none within the depth; `out_of_time`: the budget ran out; `nothing_asked`: the name says nothing. */
      reason: 'no_chain' | 'out_of_time' | 'nothing_asked';
      wanted: string[];
      explored: number;
    };

/** An executor with what the search reads of it, computed once per search. */
interface Node {
  executor: VerifiedExecutor;
  contract: Contract;
  words: Set<string>;
  /** The words of its name alone: a tie between two hops goes to the one whose name says it. */
  nameWords: Set<string>;
}

/** A partial chain: its hops, the fields in hand after the last one, the wanted words covered. */
interface Path {
  hops: Node[];
  fields: Field[];
  covered: Set<string>;
}

/** Can `node` run next with `fields` in hand? Every need filled, and (after a real output) one field fed by it. */
function connects(node: Node, fields: readonly Field[], literals: ReadonlySet<string>): boolean {
  const piped = fields.filter((field) => !literals.has(field.name) || field.kind !== 'other');
  if (!node.contract.needs.every((need) => fields.some((given) => fills(given, need)))) return false;
  if (piped.length === 0) return true;
  return node.contract.takes.some((take) => piped.some((given) => fills(given, take)));
}

const executorsOf = (catalog: readonly VerifiedExecutor[] | { executors(): VerifiedExecutor[] }) =>
  Array.isArray(catalog) ? catalog : (catalog as { executors(): VerifiedExecutor[] }).executors();

/**
 * Reactive compose: a chain of existing executors that does what a missing
 * one was wished for. Breadth-first over the executors given (`isActive`
 * ones), shortest chain first, at most `maxDepth` hops and `timeBudgetMs`:
 * the first hop must take what `from` gives (its output fields, or the
 * call's literal arguments), each next hop what the one before gives —
 * output fields into input fields of the same name, text into a text field,
 * a list into `entries` — with every required input filled. The chain is
 * complete when the executors of the source and the chain together answer to
 * every word of the wished-for name (name and affinity, plurals folded,
 * words like "get" or "tool" dropped). No model, no I/O: milliseconds.
 *
 * @example
 * findChain('fs_read', { name: 'csv_column_sum', args: ['column', 'text'], piped: [...], sourceOutput: ['content'], purpose: [] }, catalog);
 * // { found: true, chain: ['csv_parse', 'column_sum'], wanted: ['csv', 'column', 'sum'], explored: 7 }
 */
export function findChain(
  from: string | undefined,
  desired: DesiredSignature,
  catalog: readonly VerifiedExecutor[] | { executors(): VerifiedExecutor[] },
  options: FindChainOptions = {},
): ChainResult {
  const maxDepth = options.maxDepth ?? 3;
  const now = options.now ?? (() => performance.now());
  const deadline = now() + (options.timeBudgetMs ?? 50);
  const wanted = wantedWords(desired.name);
  if (wanted.length === 0) return { found: false, reason: 'nothing_asked', wanted, explored: 0 };
  const all = executorsOf(catalog);
  const source = from === undefined ? undefined : all.find((executor) => executor.name === from);
  const nodes: Node[] = all
    .filter((executor) => executor.name !== from && executor.name !== desired.name)
    .filter((executor) => options.isActive?.(executor) ?? true)
    .map((executor) => ({
      executor,
      contract: contractOf(executor),
      words: executorWords(executor.name, executor.manifest.executor.affinity),
      nameWords: executorWords(executor.name, []),
    }))
    .sort((a, b) => a.executor.name.localeCompare(b.executor.name));
  const pipedArgs = new Set(desired.piped.map((pipe) => pipe.arg));
  const literals = new Set(desired.args.filter((arg) => source === undefined || !pipedArgs.has(arg)));
  const literalFields: Field[] = [...literals].map((name) => ({ name, kind: 'other' }));
  const sourceWords = source ? executorWords(source.name, source.manifest.executor.affinity) : new Set();
  let frontier: Path[] = [
    {
      hops: [],
      fields: [...(source ? contractOf(source).gives : []), ...literalFields],
      covered: new Set(wanted.filter((word) => sourceWords.has(word))),
    },
  ];
  const seen = new Set<string>();
  let explored = 0;
  for (let depth = 1; depth <= maxDepth && frontier.length > 0; depth++) {
    const next: Path[] = [];
    for (const path of frontier) {
      const candidates = nodes
        .filter((node) => !path.hops.includes(node) && connects(node, path.fields, literals))
        .map((node) => ({ node, gain: wanted.filter((w) => !path.covered.has(w) && node.words.has(w)) }))
        .map((entry) => ({ ...entry, named: entry.gain.filter((w) => entry.node.nameWords.has(w)).length }))
        .sort((a, b) => b.gain.length - a.gain.length || b.named - a.named);
      for (const { node, gain } of candidates) {
        if (now() > deadline) return { found: false, reason: 'out_of_time', wanted, explored };
        explored++;
        const covered = new Set([...path.covered, ...gain]);
        const hops = [...path.hops, node];
        if (covered.size === wanted.length && hops.some((hop) => wanted.some((w) => hop.words.has(w))))
          return { found: true, chain: hops.map((hop) => hop.executor.name), wanted, explored };
        const key = `${node.executor.name}|${[...covered].sort().join(',')}`;
        if (seen.has(key)) continue;
        seen.add(key);
        next.push({ hops, fields: [...node.contract.gives, ...literalFields], covered });
      }
    }
    frontier = next;
  }
  return { found: false, reason: 'no_chain', wanted, explored };
}
