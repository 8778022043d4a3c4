import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatModel, ChatResponse, ToolSpec } from '../llm/types.ts';
import { digest } from './canonical-json.ts';
import {
  type Cassette,
  CassetteError,
  createCassetteModel,
  createRecordingModel,
  diffCassettes,
  type HashFilter,
  hashPrompt,
} from './cassette.ts';
import { createScriptedModel, type ScriptStep } from './scripted-model.ts';
import { thrownBy } from './thrown-by.ts';

const TOOLS: ToolSpec[] = [
  {
    name: 'fs_read',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
];

/** A two-step ReAct loop in miniature: call the model, run the tool, feed the observation back. */
async function runTurn(
  model: ChatModel,
  query: string,
  observation = 'buy milk',
  system = 'You are Metnos.',
) {
  const messages: ChatMessage[] = [{ role: 'user', content: query }];
  const responses: ChatResponse[] = [];
  for (let step = 0; step < 4; step++) {
    const response = await model.generate({ system, messages: structuredClone(messages), tools: TOOLS });
    responses.push(response);
    if (response.toolCalls.length === 0) break;
    messages.push({ role: 'assistant', content: response.text, toolCalls: response.toolCalls });
    for (const call of response.toolCalls) {
      messages.push({
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: JSON.stringify({ ok: true, content: observation }),
      });
    }
  }
  return responses;
}

const SCRIPT: ScriptStep[] = [
  {
    toolCalls: [{ id: 'call_x1', name: 'fs_read', args: { path: 'notes.txt' } }],
    usage: { inputTokens: 120, outputTokens: 12 },
  },
  { text: 'Your note says: buy milk.', usage: { inputTokens: 160, outputTokens: 9 } },
];

const fixedClock = () => new Date('2026-04-27T10:00:00Z');

async function recorded(script = SCRIPT, options: Parameters<typeof createRecordingModel>[1] = {}) {
  const recorder = createRecordingModel(createScriptedModel(script, { id: 'qwen3:8b', provider: 'ollama' }), {
    now: fixedClock,
    ...options,
  });
  const responses = await runTurn(recorder, 'what does notes.txt say?');
  return { cassette: recorder.toCassette(), responses };
}

/** A cassette as it would come back from a file. */
const throughFile = (cassette: Cassette): Cassette => JSON.parse(JSON.stringify(cassette));

const refusal = (action: () => unknown) => thrownBy(action, CassetteError.isInstance);

describe('cassette record and replay', () => {
  it('replays a recorded turn identically, with no model behind it', async () => {
    const { cassette, responses } = await recorded();
    expect(cassette.version).toBe(2);
    expect(cassette.cassetteId).toMatch(/^[0-9a-f]{32}$/);
    expect(cassette.recordedProvider).toBe('ollama');
    expect(cassette.recordedModel).toBe('qwen3:8b');
    expect(cassette.recordedAt).toBe('2026-04-27T10:00:00.000Z');
    expect(cassette.entries.map((entry) => entry.turnIndex)).toEqual([0, 1]);

    const replay = createCassetteModel(throughFile(cassette));
    const replayed = await runTurn(replay, 'what does notes.txt say?');
    expect(replayed).toEqual(responses);
    expect(replay.remaining()).toBe(0);
  });

  it('gives each recording its own random cassetteId', async () => {
    const [first, second] = await Promise.all([recorded(), recorded()]);
    expect(first.cassette.cassetteId).not.toBe(second.cassette.cassetteId);
  });

  it('is single-use until reset()', async () => {
    const { cassette } = await recorded();
    const replay = createCassetteModel(cassette);
    await runTurn(replay, 'what does notes.txt say?');
    const exhausted = await runTurn(replay, 'what does notes.txt say?').catch((error: unknown) => error);
    expect(CassetteError.isInstance(exhausted) && exhausted.reason).toBe('exhausted');
    replay.reset();
    await expect(runTurn(replay, 'what does notes.txt say?')).resolves.toHaveLength(2);
  });

  it('throws on prompt drift and names the turn that drifted', async () => {
    const { cassette } = await recorded();
    const drift = await runTurn(createCassetteModel(cassette), 'what does notes.txt say?', 'buy bread').catch(
      (error: unknown) => error,
    );
    expect(CassetteError.isInstance(drift)).toBe(true);
    expect((drift as CassetteError).reason).toBe('prompt_drift');
    expect((drift as CassetteError).turnIndex).toBe(1);
    expect((drift as CassetteError).message).toContain('turn 1');
  });

  it('tolerates drift when strict is off', async () => {
    const { cassette, responses } = await recorded();
    const replayed = await runTurn(
      createCassetteModel(cassette, { strict: false }),
      'something else entirely',
      'buy bread',
    );
    expect(replayed).toEqual(responses);
  });

  it('stores redacted answers while the caller still gets the original', async () => {
    const secret: ScriptStep[] = [{ text: 'Mail alice@example.com with the key sk-live-123.' }];
    const recorder = createRecordingModel(createScriptedModel(secret), {
      redact: (response) => ({
        ...response,
        text: response.text.replace(/\S+@\S+/g, '<EMAIL>').replace(/sk-\S+/g, '<KEY>'),
      }),
    });
    const [live] = await runTurn(recorder, 'who do I mail?');
    expect(live!.text).toContain('alice@example.com');
    const cassette = recorder.toCassette();
    expect(cassette.entries[0]!.response.text).toBe('Mail <EMAIL> with the key <KEY>');
    expect(JSON.stringify(cassette)).not.toContain('alice');
    const [replayed] = await runTurn(createCassetteModel(cassette), 'who do I mail?');
    expect(replayed!.text).toBe('Mail <EMAIL> with the key <KEY>');
  });

  it('refuses, at capture time, answers JSON cannot carry', async () => {
    const recorder = createRecordingModel(
      createScriptedModel([{ toolCalls: [{ name: 'fs_read', args: { size: 10n } }] }]),
    );
    const error = await runTurn(recorder, 'go').catch((caught: unknown) => caught);
    expect(CassetteError.isInstance(error) && error.reason).toBe('not_serializable');
  });
});

describe('cassette integrity', () => {
  it('detects an edited entry and names its turn', async () => {
    const cassette = throughFile((await recorded()).cassette);
    cassette.entries[1]!.response.text = 'Your note says: wire money.';
    const error = refusal(() => createCassetteModel(cassette));
    expect(error.reason).toBe('integrity');
    expect(error.turnIndex).toBe(1);
  });

  it('detects edited tool-call arguments', async () => {
    const cassette = throughFile((await recorded()).cassette);
    cassette.entries[0]!.response.toolCalls[0]!.args = { path: '/etc/shadow' };
    expect(refusal(() => createCassetteModel(cassette)).reason).toBe('integrity');
  });

  it('detects edited envelope metadata', async () => {
    for (const edit of [
      (cassette: Cassette) => (cassette.recordedProvider = 'anthropic'),
      (cassette: Cassette) => (cassette.recordedAt = '2020-01-01T00:00:00.000Z'),
      (cassette: Cassette) => (cassette.label = 'another test'),
      (cassette: Cassette) => cassette.entries.pop(),
    ]) {
      const cassette = throughFile((await recorded()).cassette);
      edit(cassette);
      expect(refusal(() => createCassetteModel(cassette)).reason).toBe('integrity');
    }
  });

  it('detects an entry spliced in from another cassette, even with the envelope re-sealed', async () => {
    const target = throughFile((await recorded()).cassette);
    const donor = throughFile(
      (await recorded([SCRIPT[0]!, { text: 'Your note says: wire money.' }])).cassette,
    );
    target.entries[1] = donor.entries[1]!;
    target.envelopeHash = digest({
      version: target.version,
      label: null,
      recordedAt: target.recordedAt,
      recordedProvider: target.recordedProvider,
      recordedModel: target.recordedModel,
      cassetteId: target.cassetteId,
      hashFilter: target.hashFilter,
      entryDigests: target.entries.map((entry) => entry.responseHash),
    });
    const error = refusal(() => createCassetteModel(target));
    expect(error.reason).toBe('integrity');
    expect(error.turnIndex).toBe(1);
  });

  it('detects a downgrade to version 1 that keeps version-2 fields', async () => {
    const cassette = throughFile((await recorded()).cassette) as unknown as Record<string, unknown>;
    cassette.version = 1;
    const error = refusal(() => createCassetteModel(cassette, { requireIntegrity: false }));
    expect(error.reason).toBe('downgrade');
    expect(error.message).toContain('downgrade tampering suspected');
  });

  it('refuses version-1 cassettes unless integrity is waived, and checks their turn order', async () => {
    const request = { system: 's', messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
    const handWritten = {
      version: 1,
      recordedAt: '2026-04-27T10:00:00Z',
      recordedProvider: 'hand',
      recordedModel: 'fixture',
      entries: [
        {
          turnIndex: 0,
          promptHash: hashPrompt(request),
          response: { text: 'hello', toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 } },
        },
      ],
    };
    expect(refusal(() => createCassetteModel(handWritten)).reason).toBe('integrity_required');
    const replay = createCassetteModel(handWritten, { requireIntegrity: false });
    expect((await replay.generate(request)).text).toBe('hello');
    const shuffled = { ...handWritten, entries: [{ ...handWritten.entries[0]!, turnIndex: 3 }] };
    expect(refusal(() => createCassetteModel(shuffled, { requireIntegrity: false })).reason).toBe(
      'turn_order',
    );
  });

  it('refuses something that is not a cassette', () => {
    expect(refusal(() => createCassetteModel({ version: 2, entries: 'nope' })).reason).toBe('malformed');
    expect(refusal(() => createCassetteModel(null)).reason).toBe('malformed');
  });
});

describe('hash filters', () => {
  const stripSession: HashFilter = {
    id: 'strip-session-v1',
    normalize: (prompt) => ({
      ...prompt,
      system: prompt.system.replace(/session=[a-f0-9-]+/g, 'session=<id>'),
    }),
  };

  async function recordWith(filter: HashFilter | undefined, session: string) {
    const recorder = createRecordingModel(createScriptedModel(SCRIPT), {
      ...(filter ? { hashFilter: filter } : {}),
    });
    await runTurn(recorder, 'what does notes.txt say?', 'buy milk', `You are Metnos. session=${session}`);
    return recorder.toCassette();
  }

  it('lets dynamic prompt content through when both sides use the same filter', async () => {
    const cassette = await recordWith(stripSession, 'aaaa-1111');
    expect(cassette.hashFilter).toBe('strip-session-v1');
    const replay = createCassetteModel(cassette, { hashFilter: stripSession });
    await expect(
      runTurn(replay, 'what does notes.txt say?', 'buy milk', 'You are Metnos. session=bbbb-2222'),
    ).resolves.toHaveLength(2);
  });

  it('throws when only one side filters, either way round, or the filters differ', async () => {
    const filtered = await recordWith(stripSession, 'aaaa-1111');
    const plain = await recordWith(undefined, 'aaaa-1111');
    expect(refusal(() => createCassetteModel(filtered)).reason).toBe('filter_mismatch');
    expect(refusal(() => createCassetteModel(plain, { hashFilter: stripSession })).reason).toBe(
      'filter_mismatch',
    );
    const other: HashFilter = { id: 'strip-session-v2', normalize: stripSession.normalize };
    expect(refusal(() => createCassetteModel(filtered, { hashFilter: other })).reason).toBe(
      'filter_mismatch',
    );
  });

  it('records the filter identity under the envelope hash', async () => {
    const cassette = await recordWith(stripSession, 'aaaa-1111');
    cassette.hashFilter = null;
    expect(refusal(() => createCassetteModel(cassette)).reason).toBe('integrity');
  });
});

describe('diffCassettes', () => {
  it('ignores tool-call ids and key order, and compares names and arguments', async () => {
    const a = (await recorded()).cassette;
    const sameBehaviour = (
      await recorded([
        { toolCalls: [{ id: 'call_other', name: 'fs_read', args: { path: 'notes.txt' } }] },
        SCRIPT[1]!,
      ])
    ).cassette;
    expect(diffCassettes(a, sameBehaviour)).toEqual([]);

    const otherFile = (
      await recorded([{ toolCalls: [{ name: 'fs_read', args: { path: 'todo.txt' } }] }, SCRIPT[1]!])
    ).cassette;
    expect(diffCassettes(a, otherFile)).toEqual([
      {
        turnIndex: 0,
        field: 'toolCalls',
        a: [{ name: 'fs_read', args: { path: 'notes.txt' } }],
        b: [{ name: 'fs_read', args: { path: 'todo.txt' } }],
      },
    ]);
  });

  it('compares text unless told not to, and reports missing turns', async () => {
    const a = (await recorded()).cassette;
    const reworded = (await recorded([SCRIPT[0]!, { text: 'It says to buy milk.' }])).cassette;
    expect(diffCassettes(a, reworded).map((difference) => difference.field)).toEqual(['text']);
    expect(diffCassettes(a, reworded, { ignoreText: true })).toEqual([]);
    const shorter = (await recorded([{ text: 'I will not read files.' }])).cassette;
    expect(diffCassettes(a, shorter).map((difference) => [difference.turnIndex, difference.field])).toEqual([
      [0, 'toolCalls'],
      [0, 'text'],
      [1, 'entry'],
    ]);
  });
});
