import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ChatModel } from '../model.ts';
import { tokenize } from '../prefilter.ts';
import { INTENT_OBJECTS, INTENT_VERBS } from './intent-vocabulary.ts';
import { extractQualifiers } from './qualifiers.ts';

export { INTENT_OBJECTS, INTENT_VERBS };

/**
 * verb + object + qualifiers, and a stable hash of them. The qualifiers are
 * always the ones {@link extractQualifiers} reads from the request, never
 * the model's: a model that answers "read file" for "the first 3 lines" and
 * for "the last 3 lines" still gives two intents. The model's own words are
 * kept as `keywords`, for the Proposer's prompt.
 */
export interface Intent {
  verb: string;
  object: string;
  qualifiers: string[];
  keywords: string[];
  hash: string;
  complete: boolean;
  source: 'model' | 'rules';
}

function lookup(
  vocabulary: Readonly<Record<string, readonly string[]>>,
  tokens: string[],
): string | undefined {
  for (const token of tokens) {
    for (const [key, words] of Object.entries(vocabulary)) if (words.includes(token)) return key;
  }
  return undefined;
}

function finish(
  request: string,
  verb: string | undefined,
  object: string | undefined,
  keywords: string[],
  source: Intent['source'],
): Intent {
  const qualifiers = extractQualifiers(request);
  const v = verb ?? 'unknown';
  const o = object ?? 'unknown';
  return {
    verb: v,
    object: o,
    qualifiers,
    keywords: [...new Set(keywords)].sort().slice(0, 6),
    hash: createHash('sha256')
      .update(`${v}|${o}|${qualifiers.join(',')}`)
      .digest('hex')
      .slice(0, 24),
    complete: verb !== undefined && object !== undefined,
    source,
  };
}

/** Rule-based intent from the vocabulary: no model. */
export function intentFromRules(request: string): Intent {
  const tokens = tokenize(request);
  const verb = lookup(INTENT_VERBS, tokens);
  const object = lookup(INTENT_OBJECTS, tokens);
  const vocabulary = new Set([
    ...Object.values(INTENT_VERBS).flat(),
    ...Object.values(INTENT_OBJECTS).flat(),
  ]);
  const keywords = tokens.filter(
    (token) => token.length > 3 && !vocabulary.has(token) && !/^\d+$/.test(token),
  );
  return finish(request, verb, object, keywords.slice(0, 3), 'rules');
}

const intentSchema = z.object({
  verb: z.string(),
  object: z.string(),
  qualifiers: z.array(z.string()).max(6).default([]),
});

/**
 * The intent extractor: asks the fast tier for verb + object + qualifiers
 * from the closed vocabulary, parses the answer with a schema and keeps only
 * vocabulary words; falls back to the rules when the model is missing, fails
 * or answers outside the vocabulary.
 *
 * @example
 * const intent = await extractIntent('move the spam mail to trash', { model: tiers.fast });
 */
export async function extractIntent(
  request: string,
  options: { model?: ChatModel; signal?: AbortSignal } = {},
): Promise<Intent> {
  const rules = intentFromRules(request);
  if (!options.model) return rules;
  try {
    const response = await options.model.generate({
      system: `Classify the request. Reply with JSON only: {"verb": one of ${JSON.stringify(Object.keys(INTENT_VERBS))}, "object": one of ${JSON.stringify(Object.keys(INTENT_OBJECTS))}, "qualifiers": [up to 3 lowercase keywords]}`,
      messages: [{ role: 'user', content: request }],
      tools: [],
      signal: options.signal,
    });
    const start = response.text.indexOf('{');
    const data = JSON.parse(response.text.slice(start, response.text.lastIndexOf('}') + 1));
    const parsed = intentSchema.safeParse(data);
    if (!parsed.success) return rules;
    const verb = Object.hasOwn(INTENT_VERBS, parsed.data.verb)
      ? parsed.data.verb
      : rules.verb === 'unknown'
        ? undefined
        : rules.verb;
    const object = Object.hasOwn(INTENT_OBJECTS, parsed.data.object)
      ? parsed.data.object
      : rules.object === 'unknown'
        ? undefined
        : rules.object;
    const keywords = parsed.data.qualifiers
      .map((word) => tokenize(word).join(''))
      .filter((word) => /^[a-z0-9]{2,24}$/.test(word));
    return finish(request, verb, object, keywords.slice(0, 3), 'model');
  } catch {
    return rules;
  }
}
