import { z } from 'zod';

/**
 * What a missing executor was wished for, inferred conservatively from one
 * call: the tool name the model asked for, the names of the arguments it gave
 * (never their values), which of them were piped from an earlier step's
 * field, the fields the source step's output schema declares, and the content
 * words of the turn's request (not the request itself).
 */
export interface DesiredSignature {
  /** The tool name the model asked for. */
  name: string;
  /** The names of the arguments the call gave, sorted. */
  args: string[];
  /** Arguments filled from an earlier step: the argument, the source executor, the field read. */
  piped: Array<{ arg: string; from: string; field: string }>;
  /** Top-level fields of the source step's output schema (empty when it declares none). */
  sourceOutput: string[];
  /** Content words of the request, at most {@link MAX_PURPOSE_WORDS}. */
  purpose: string[];
}

/** How many request words a signature keeps. */
export const MAX_PURPOSE_WORDS = 16;

/** The longest stored signature read back; the schema's bounds keep real ones far below. */
const MAX_STORED_CHARS = 65_536;

const NAME = z.string().min(1).max(200);

/** The stored form of a {@link DesiredSignature}, bounded so a damaged or hostile row cannot grow unbounded. */
export const desiredSignatureSchema = z.object({
  name: NAME,
  args: z.array(NAME).max(64),
  piped: z.array(z.object({ arg: NAME, from: NAME, field: z.string().max(400) })).max(64),
  sourceOutput: z.array(NAME).max(200),
  purpose: z.array(z.string().min(1).max(64)).max(MAX_PURPOSE_WORDS),
});

/**
 * A stored signature read back; `undefined` for text that is not one (a
 * damaged row is skipped, never a failure).
 *
 * @example
 * readDesiredSignature('{"name":"csv_sum","args":["column"],"piped":[],"sourceOutput":[],"purpose":[]}');
 */
export function readDesiredSignature(text: string | null): DesiredSignature | undefined {
  if (text === null || text.length > MAX_STORED_CHARS) return undefined;
  try {
    const parsed = desiredSignatureSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
