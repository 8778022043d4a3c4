import { randomBytes } from 'node:crypto';
import { MetnosError } from '@metnos/executor-sdk';
import { z } from 'zod';
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolSpec } from '../llm/types.ts';
import { canonicalJson, digest } from './canonical-json.ts';
import { type RecordedChatRequest, snapshotRequest } from './scripted-model.ts';

/** Why a cassette was refused. */
export type CassetteFailure =
  | 'malformed'
  | 'integrity'
  | 'integrity_required'
  | 'downgrade'
  | 'turn_order'
  | 'filter_mismatch'
  | 'prompt_drift'
  | 'exhausted'
  | 'not_serializable';

const cassetteMarker = Symbol.for('metnos.error.CassetteError');

/**
 * A cassette that cannot be trusted or replayed: edited after recording,
 * spliced, downgraded, replayed against a different prompt, filtered on one
 * side only, or used past its end. `turnIndex` names the turn when one is at
 * fault.
 *
 * @example
 * catch (error) { if (CassetteError.isInstance(error) && error.reason === 'prompt_drift') console.error(`turn ${error.turnIndex} drifted`); }
 */
export class CassetteError extends MetnosError {
  private readonly [cassetteMarker] = true;
  readonly reason: CassetteFailure;
  readonly turnIndex: number | undefined;

  constructor(settings: { reason: CassetteFailure; message: string; turnIndex?: number; cause?: unknown }) {
    super({ code: `cassette_${settings.reason}`, message: settings.message, cause: settings.cause });
    this.name = 'CassetteError';
    this.reason = settings.reason;
    this.turnIndex = settings.turnIndex;
  }

  static override isInstance(error: unknown): error is CassetteError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[cassetteMarker] === true
    );
  }
}

/** What a prompt hash covers. A hash filter receives and returns this. */
export interface PromptView {
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
}

/**
 * Normalises dynamic prompt content (dates, session ids) before hashing. The
 * same filter (by `id`) must be given when recording and when replaying.
 */
export interface HashFilter {
  /** Recorded in the cassette; replay refuses a different or missing filter. */
  id: string;
  normalize(prompt: PromptView): PromptView;
}

const toolCallSchema = z.object({ id: z.string(), name: z.string(), args: z.unknown() });

const responseSchema = z.object({
  text: z.string(),
  toolCalls: z.array(toolCallSchema),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
  costUsd: z.number().optional(),
  finishReason: z.string().optional(),
  latencyMs: z.number().optional(),
});

const hex = (length: number) => z.string().regex(new RegExp(`^[0-9a-f]{${length}}$`));

const entrySchema = z.object({
  turnIndex: z.number().int().nonnegative(),
  promptHash: hex(64),
  responseHash: hex(64).optional(),
  response: responseSchema,
});

/**
 * The JSON shape of a cassette. Version 2 (what the recorder writes) carries
 * `cassetteId`, `hashFilter`, a `responseHash` per entry and `envelopeHash`;
 * version 1 is a hand-written fixture without them.
 */
export const cassetteSchema = z.object({
  version: z.union([z.literal(1), z.literal(2)]),
  label: z.string().optional(),
  recordedAt: z.string(),
  recordedProvider: z.string(),
  recordedModel: z.string(),
  cassetteId: hex(32).optional(),
  hashFilter: z.string().nullable().optional(),
  envelopeHash: hex(64).optional(),
  entries: z.array(entrySchema),
});

/** A recorded conversation with a model. */
export type Cassette = z.infer<typeof cassetteSchema>;
/** One recorded turn. */
export type CassetteEntry = z.infer<typeof entrySchema>;
/** A recorded answer. */
export type CassetteResponse = z.infer<typeof responseSchema>;

/**
 * SHA-256 of a request's canonical `{ system, messages, tools }`, after the
 * filter. Useful to write version-1 fixtures by hand.
 *
 * @example
 * const promptHash = hashPrompt({ system: 's', messages: [{ role: 'user', content: 'hi' }], tools: [] });
 */
export function hashPrompt(
  request: PromptView | ChatRequest | RecordedChatRequest,
  filter?: HashFilter,
): string {
  const view: PromptView = { system: request.system, messages: request.messages, tools: request.tools };
  return digest(filter ? filter.normalize(structuredClone(view)) : view);
}

function responseHash(cassetteId: string, entry: Omit<CassetteEntry, 'responseHash'>): string {
  return digest({
    cassetteId,
    turnIndex: entry.turnIndex,
    promptHash: entry.promptHash,
    response: entry.response,
  });
}

function envelopeHash(cassette: Cassette): string {
  return digest({
    version: cassette.version,
    label: cassette.label ?? null,
    recordedAt: cassette.recordedAt,
    recordedProvider: cassette.recordedProvider,
    recordedModel: cassette.recordedModel,
    cassetteId: cassette.cassetteId,
    hashFilter: cassette.hashFilter ?? null,
    entryDigests: cassette.entries.map((entry) => entry.responseHash),
  });
}

/** Options of {@link createRecordingModel}. */
export interface RecordingOptions {
  /** Scrubs secrets from each response before it is stored (the caller still gets the original). */
  redact?: (response: CassetteResponse) => CassetteResponse;
  hashFilter?: HashFilter;
  /** A name for the cassette (a test, an agent, a tier); covered by the envelope hash. */
  label?: string;
  /** Clock for `recordedAt`. Default `() => new Date()`. */
  now?: () => Date;
  /** 32 hex characters. Default 16 random bytes. */
  cassetteId?: () => string;
}

/** A model wrapper that records every answer. */
export interface RecordingModel extends ChatModel {
  /** The cassette so far: a deep copy, sealed with its hashes. */
  toCassette(): Cassette;
}

/**
 * Wraps a model and records each turn: the prompt hash, the answer and its
 * integrity hash. A pure observer — calls, answers, costs and errors pass
 * through unchanged; failed calls are not recorded. Answers that JSON cannot
 * carry (BigInt, functions in tool arguments) throw at capture time.
 *
 * @example
 * const recorder = createRecordingModel(createOllamaModel({ model: 'qwen3:8b' }), { label: 'diary-tail' });
 * await planner.turn('read the last three lines of diary.md', { model: recorder });
 * await writeFile('cassettes/diary-tail.json', JSON.stringify(recorder.toCassette(), null, 2));
 */
export function createRecordingModel(model: ChatModel, options: RecordingOptions = {}): RecordingModel {
  const now = options.now ?? (() => new Date());
  const cassetteId = (options.cassetteId ?? (() => randomBytes(16).toString('hex')))();
  const entries: CassetteEntry[] = [];
  let recordedAt: string | undefined;

  return {
    id: model.id,
    provider: model.provider,
    ...(model.tier ? { tier: model.tier } : {}),
    async generate(request): Promise<ChatResponse> {
      const promptHash = hashPrompt(request, options.hashFilter);
      const response = await model.generate(request);
      recordedAt ??= now().toISOString();
      const turnIndex = entries.length;
      let stored: CassetteResponse;
      try {
        // Round-trip through JSON now, so the hash covers exactly what a cassette file will hold.
        const copy = responseSchema.parse(JSON.parse(canonicalJson(response)));
        stored = options.redact
          ? responseSchema.parse(JSON.parse(canonicalJson(options.redact(copy))))
          : copy;
      } catch (cause) {
        throw new CassetteError({
          reason: 'not_serializable',
          turnIndex,
          message: `turn ${turnIndex}: the answer cannot be recorded as JSON (${(cause as Error).message})`,
          cause,
        });
      }
      const entry = { turnIndex, promptHash, response: stored };
      entries.push({ ...entry, responseHash: responseHash(cassetteId, entry) });
      return response;
    },
    toCassette(): Cassette {
      const cassette: Cassette = {
        version: 2,
        ...(options.label === undefined ? {} : { label: options.label }),
        recordedAt: recordedAt ?? now().toISOString(),
        recordedProvider: model.provider,
        recordedModel: model.id,
        cassetteId,
        hashFilter: options.hashFilter?.id ?? null,
        entries: structuredClone(entries),
      };
      return { ...cassette, envelopeHash: envelopeHash(cassette) };
    },
  };
}

/** Options of {@link createCassetteModel}. */
export interface ReplayOptions {
  /** Refuse a request whose prompt hash differs from the recorded one. Default true. */
  strict?: boolean;
  /** Must be the filter (same `id`) the cassette was recorded with. */
  hashFilter?: HashFilter;
  /** Refuse version-1 cassettes, which carry no hashes. Default true. */
  requireIntegrity?: boolean;
}

/** A model that replays a cassette. */
export interface CassetteModel extends ChatModel {
  /** Requests received, as recorded by the test models. */
  readonly requests: RecordedChatRequest[];
  /** Rewinds to the first turn (the cursor is single-use otherwise). */
  reset(): void;
  /** Turns not replayed yet. */
  remaining(): number;
}

const V2_ONLY_FIELDS = ['cassetteId', 'envelopeHash', 'hashFilter'] as const;

function verify(input: unknown, options: ReplayOptions): Cassette {
  const parsed = cassetteSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CassetteError({
      reason: 'malformed',
      message: `not a cassette: ${issue.path.join('.')}: ${issue.message}`,
      cause: parsed.error,
    });
  }
  const cassette = parsed.data;
  if (cassette.version === 1) {
    const carriesV2 =
      V2_ONLY_FIELDS.some((field) => cassette[field] !== undefined) ||
      cassette.entries.some((entry) => entry.responseHash !== undefined);
    if (carriesV2) {
      throw new CassetteError({
        reason: 'downgrade',
        message: 'a version-1 cassette carries version-2 integrity fields: downgrade tampering suspected',
      });
    }
    if (options.requireIntegrity !== false) {
      throw new CassetteError({
        reason: 'integrity_required',
        message:
          'a version-1 cassette has no integrity hashes; re-record it, or pass requireIntegrity: false',
      });
    }
  } else {
    const { cassetteId, envelopeHash: sealed } = cassette;
    if (cassetteId === undefined || sealed === undefined || cassette.hashFilter === undefined) {
      throw new CassetteError({
        reason: 'integrity',
        message: 'a version-2 cassette lacks cassetteId, hashFilter or envelopeHash',
      });
    }
    for (const entry of cassette.entries) {
      if (entry.responseHash !== responseHash(cassetteId, entry)) {
        throw new CassetteError({
          reason: 'integrity',
          turnIndex: entry.turnIndex,
          message: `turn ${entry.turnIndex}: the entry does not match its responseHash (edited, or spliced from another cassette)`,
        });
      }
    }
    if (sealed !== envelopeHash(cassette)) {
      throw new CassetteError({
        reason: 'integrity',
        message: 'the envelope does not match its envelopeHash (metadata or entry list edited)',
      });
    }
  }
  cassette.entries.forEach((entry, position) => {
    if (entry.turnIndex !== position) {
      throw new CassetteError({
        reason: 'turn_order',
        turnIndex: entry.turnIndex,
        message: `entry ${position} claims turn ${entry.turnIndex}: the cassette is out of order`,
      });
    }
  });
  const recorded = cassette.hashFilter ?? null;
  const given = options.hashFilter?.id ?? null;
  if (recorded !== given) {
    throw new CassetteError({
      reason: 'filter_mismatch',
      message: `recorded with hash filter ${JSON.stringify(recorded)}, replayed with ${JSON.stringify(given)}: use the same filter on both sides`,
    });
  }
  return cassette;
}

/**
 * Replays a cassette as a model: checks its integrity at load, then answers
 * each request with the next recorded turn. In strict mode (the default) a
 * request whose prompt hash differs from the recording throws
 * `CassetteError('prompt_drift')` naming the turn — upstream behaviour
 * changed. The cursor is single-use: call `reset()` to replay again.
 *
 * @example
 * const replay = createCassetteModel(JSON.parse(await readFile('cassettes/diary-tail.json', 'utf8')));
 * await planner.turn('read the last three lines of diary.md', { model: replay });
 */
export function createCassetteModel(input: unknown, options: ReplayOptions = {}): CassetteModel {
  const cassette = verify(input, options);
  const strict = options.strict !== false;
  const requests: RecordedChatRequest[] = [];
  let cursor = 0;
  return {
    id: cassette.recordedModel,
    provider: 'cassette',
    requests,
    reset: () => {
      cursor = 0;
    },
    remaining: () => cassette.entries.length - cursor,
    async generate(request): Promise<ChatResponse> {
      requests.push(snapshotRequest(request));
      const entry = cassette.entries[cursor];
      if (entry === undefined) {
        throw new CassetteError({
          reason: 'exhausted',
          turnIndex: cursor,
          message: `the cassette has ${cassette.entries.length} turn(s) and all were replayed; call reset() to replay again`,
        });
      }
      if (strict && hashPrompt(request, options.hashFilter) !== entry.promptHash) {
        throw new CassetteError({
          reason: 'prompt_drift',
          turnIndex: entry.turnIndex,
          message: `turn ${entry.turnIndex}: the prompt differs from the recording (system, messages or tools changed)`,
        });
      }
      cursor++;
      return structuredClone(entry.response);
    },
  };
}

/** One difference between two cassettes. */
export interface CassetteDifference {
  turnIndex: number;
  /** `entry`: the turn exists in one cassette only. */
  field: 'entry' | 'toolCalls' | 'text';
  a: unknown;
  b: unknown;
}

function behaviour(response: CassetteResponse) {
  return response.toolCalls.map((call) => ({ name: call.name, args: call.args }));
}

/**
 * Compares what two cassettes' models did, turn by turn: the tool calls by
 * name and canonical arguments (ids differ on every run and are ignored), and
 * the text unless `ignoreText`. Empty when they behaved the same.
 *
 * @example
 * const drift = diffCassettes(recordedWithQwen, recordedWithGemma, { ignoreText: true });
 * expect(drift).toEqual([]);
 */
export function diffCassettes(
  a: Cassette,
  b: Cassette,
  options: { ignoreText?: boolean } = {},
): CassetteDifference[] {
  const differences: CassetteDifference[] = [];
  const turns = Math.max(a.entries.length, b.entries.length);
  for (let turnIndex = 0; turnIndex < turns; turnIndex++) {
    const left = a.entries[turnIndex]?.response;
    const right = b.entries[turnIndex]?.response;
    if (left === undefined || right === undefined) {
      differences.push({ turnIndex, field: 'entry', a: left, b: right });
      continue;
    }
    const [leftCalls, rightCalls] = [behaviour(left), behaviour(right)];
    if (canonicalJson(leftCalls) !== canonicalJson(rightCalls)) {
      differences.push({ turnIndex, field: 'toolCalls', a: leftCalls, b: rightCalls });
    }
    if (options.ignoreText !== true && left.text !== right.text) {
      differences.push({ turnIndex, field: 'text', a: left.text, b: right.text });
    }
  }
  return differences;
}
