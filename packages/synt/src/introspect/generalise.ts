import { contractSchema, type VerifiedExecutor } from '@metnos/executor-sdk';
import { type CardDraft, type IntrospectionInput, ownActive } from './types.ts';

/** How many same-shaped executors make a generalisation worth proposing. Default 3. */
export interface GeneraliseRules {
  minGroup?: number;
}

type Json = Record<string, unknown>;

function fields(schema: Json | undefined): string {
  const properties = (schema?.properties ?? {}) as Record<string, Json>;
  return Object.entries(properties)
    .map(([name, property]) => `${name}:${JSON.stringify(property?.type ?? null)}`)
    .sort()
    .join(',');
}

/**
 * An executor's shape: its input and output fields with their types, the
 * required inputs, and the kinds of access its profile grants. Executors of
 * one shape differ only in what their code fixes.
 */
export function shapeOf(executor: VerifiedExecutor): string {
  const input = contractSchema(executor, 'input');
  const profile = executor.manifest.sandbox;
  const required = [...((input?.required as string[] | undefined) ?? [])].sort().join(',');
  const access = [
    profile.fs.read.length > 0 ? 'read' : '',
    profile.fs.write.length > 0 ? 'write' : '',
    profile.network.mode === 'allowlist' ? 'network' : '',
  ]
    .filter(Boolean)
    .join('+');
  return `in(${fields(input)}) req(${required}) out(${fields(contractSchema(executor, 'output'))}) ${access || 'no access'}`;
}

/** The leading name words executors share (`weather_rome`, `weather_paris` → `weather`). */
function commonStem(names: readonly string[]): string {
  const split = names.map((name) => name.split('_'));
  const stem: string[] = [];
  for (let index = 0; split.every((words) => words.length > index + 1); index++) {
    const word = split[0]![index]!;
    if (!split.every((words) => words[index] === word)) break;
    stem.push(word);
  }
  return stem.join('_');
}

/**
 * Generalise proposals: at least `minGroup` of the person's active
 * executors with the same shape and a common leading name (`weather_rome`,
 * `weather_paris`, `weather_oslo`) — one parametric executor could replace
 * them. The card names the shape and the members.
 *
 * @example
 * generaliseCandidates({ executors, listing, mnests, now }); // [{ kind: 'generalise', key: 'generalise:weather_oslo+…', … }]
 */
export function generaliseCandidates(input: IntrospectionInput, rules: GeneraliseRules = {}): CardDraft[] {
  const minGroup = rules.minGroup ?? 3;
  const taken = new Set(input.executors.map((executor) => executor.name));
  const groups = new Map<string, VerifiedExecutor[]>();
  for (const executor of ownActive(input)) {
    const stem = executor.name.split('_')[0]!;
    const key = `${stem}|${shapeOf(executor)}`;
    groups.set(key, [...(groups.get(key) ?? []), executor]);
  }
  const cards: CardDraft[] = [];
  for (const members of groups.values()) {
    if (members.length < minGroup) continue;
    const names = members.map((executor) => executor.name).sort();
    const stem = commonStem(names);
    if (stem === '') continue;
    const name = taken.has(stem) ? `${stem}_any` : stem;
    const shape = shapeOf(members[0]!);
    cards.push({
      kind: 'generalise',
      key: `generalise:${names.join('+')}`,
      title: `generalise ${names.join(', ')} into one parametric ${name}`,
      motivation: { kind: 'generalise', executors: names, shape, stem: name },
      evidence: {
        measured: 'executors of one shape (fields, types, access) under one leading name',
        members: names,
        shape,
      },
      note: `${names.length} executors of one shape: approve to generate ${name} with a parameter for what differs; they go fused once it is installed`,
    });
  }
  return cards;
}
