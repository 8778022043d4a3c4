import { join } from 'node:path';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEmbedder } from '../__fixtures__/embedder.ts';
import { approveAll, createWorld, scripted } from '../__fixtures__/world.ts';
import { createEngine } from './engine.ts';
import { createGapLog } from './terminator.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.scratchpad.close());

function engineWith(model: ReturnType<typeof scripted>, extra: { fast?: ReturnType<typeof scripted> } = {}) {
  const fastpath = createFastpathStore({ path: join(world.root, `fastpath-${Math.random()}.sqlite`) });
  const autopath = createAutopathStore({ path: join(world.root, `autopath-${Math.random()}.sqlite`) });
  const gaps = createGapLog({ path: join(world.root, `gaps-${Math.random()}.sqlite`) });
  const engine = createEngine({
    catalog: world.catalog,
    invoker: world.invoker,
    reviewer: approveAll,
    models: { fast: extra.fast ?? scripted([]), wise: model },
    embedder: testEmbedder(),
    fastpath,
    autopath,
    gaps,
    workspace: world.workspace,
    recognition: { fastpathThreshold: 0.8, autopathThreshold: 0.8 },
  });
  return { engine, fastpath, autopath, gaps };
}

const readPlan = (path: string, tail: number) =>
  JSON.stringify({
    steps: [{ tool: 'fs_read', args: { path, tail } }],
    final_message: 'Last lines:\n${step1.content}',
  });

describe('the engine that learns', () => {
  it('answers from the Proposer first, then from memory with zero model calls, also for a paraphrase', async () => {
    const model = scripted([{ text: readPlan('diary.md', 3) }]);
    const { engine } = engineWith(model);
    const first = await engine.runTurn('read diary.md and tell me the last 3 lines');
    expect(first).toMatchObject({
      layer: 'engine',
      finalKind: 'answer',
      finalMessage: 'Last lines:\nthree\nfour\nfive',
    });
    expect(first.modelCalls).toBeGreaterThan(0);

    const again = await engine.runTurn('read diary.md and tell me the last 3 lines');
    expect(again).toMatchObject({
      layer: 'fastpath',
      finalMessage: 'Last lines:\nthree\nfour\nfive',
      modelCalls: 0,
    });

    const paraphrase = await engine.runTurn('please read diary.md and tell me the last 3 lines');
    expect(['fastpath', 'autopath']).toContain(paraphrase.layer);
    expect(paraphrase.modelCalls).toBe(0);
    expect(paraphrase.finalMessage).toBe('Last lines:\nthree\nfour\nfive');
  });

  it('re-binds slots: a remembered read of one file reads the other file asked for', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(world.workspace, 'a.md'), 'a1\na2\n');
    await writeFile(join(world.workspace, 'b.md'), 'b1\nb2\n');
    const model = scripted([{ text: readPlan('a.md', 1) }]);
    const { engine } = engineWith(model);
    expect((await engine.runTurn('read a.md and tell me the last 1 lines')).finalMessage).toBe(
      'Last lines:\na2',
    );
    const other = await engine.runTurn('read b.md and tell me the last 1 lines');
    expect(other).toMatchObject({ layer: 'fastpath', modelCalls: 0, finalMessage: 'Last lines:\nb2' });
    expect((other.plan?.steps[0] as { args?: unknown } | undefined)?.args).toEqual({ path: 'b.md', tail: 1 });
  });

  it('does not serve from memory when a slot cannot be bound', async () => {
    const model = scripted([
      { text: readPlan('a.md', 1) },
      { text: '{"steps": [], "out_of_scope": "which file?"}' },
    ]);
    const { engine } = engineWith(model);
    await engine.runTurn('read a.md and tell me the last 1 lines');
    const vague = await engine.runTurn('read the file and tell me the last lines');
    expect(vague.layer).not.toBe('fastpath');
    expect(vague.layer).not.toBe('autopath');
  });

  it('catches a dangling reference in the Validator and re-proposes once', async () => {
    const broken = JSON.stringify({
      steps: [{ tool: 'fs_read', args: { path: 'diary.md' } }],
      final_message: '${step2.content}',
    });
    const model = scripted([{ text: broken }, { text: readPlan('diary.md', 2) }]);
    const { engine } = engineWith(model);
    const result = await engine.runTurn('show the end of diary.md');
    expect(result).toMatchObject({ layer: 'engine', finalMessage: 'Last lines:\nfour\nfive' });
    const secondRequest = model.requests[1]!.messages[0]!;
    expect(secondRequest.role === 'user' && secondRequest.content).toContain('step2');
  });

  it('recovers with one alternative that excludes the failed tool', async () => {
    const failing = JSON.stringify({ steps: [{ tool: 'crasher', args: {} }], final_message: 'done' });
    const model = scripted([{ text: failing }, { text: readPlan('diary.md', 1) }]);
    const { engine } = engineWith(model);
    const result = await engine.runTurn('get the last line of diary.md somehow');
    expect(result).toMatchObject({ layer: 'recovery', finalMessage: 'Last lines:\nfive' });
    const retryPrompt = model.requests[1]!.messages[0]!;
    expect(retryPrompt.role === 'user' && retryPrompt.content).toContain('Do not use: crasher');
  });

  it('stops serving a plan that fails repeatedly (anti-autopath)', async () => {
    const failing = JSON.stringify({ steps: [{ tool: 'crasher', args: {} }], final_message: 'done' });
    const model = scripted([{ text: failing }, { text: failing }, { text: failing }, { text: failing }]);
    const { engine, autopath } = engineWith(model);
    const first = await engine.runTurn('crash the thing now');
    expect(first.layer).toBe('terminator');
    await engine.runTurn('crash the thing now');
    expect(autopath.antiFor(first.intent!.hash).length).toBeGreaterThan(0);
    const lastPrompt = model.requests.at(-1)!.messages[0]!;
    expect(lastPrompt.role === 'user' && lastPrompt.content).toMatch(/Do not use: crasher|already failed/);
  });

  it('ends out-of-scope requests at the Terminator, in English and in Italian, and logs the gap', async () => {
    const model = scripted([
      { text: '{"steps": [], "out_of_scope": "no flight booking executor"}' },
      { text: '{"steps": [], "out_of_scope": "nessun executor per prenotare voli"}' },
      { text: '{"steps": [], "out_of_scope": "no flight booking executor"}' },
    ]);
    const { engine, gaps } = engineWith(model);
    const english = await engine.runTurn('book me a flight to Paris');
    expect(english).toMatchObject({
      layer: 'terminator',
      finalKind: 'terminated',
      language: 'en',
      termination: { cause: 'out_of_scope' },
    });
    expect(english.finalMessage).toContain('I cannot do this');
    expect(english.termination!.action).toMatch(/executor/);
    const italian = await engine.runTurn('prenotami un volo per Parigi per favore');
    expect(italian).toMatchObject({ layer: 'terminator', language: 'it' });
    expect(italian.finalMessage).toContain('Non posso farlo');
    await engine.runTurn('book me a flight to Paris');
    expect(gaps.list().some((gap) => gap.count === 2)).toBe(true);
  });

  it('answers trivial requests with no model', async () => {
    const { engine } = engineWith(scripted([]));
    const result = await engine.runTurn('what time is it?');
    expect(result).toMatchObject({ layer: 'fastpath', modelCalls: 0 });
    expect(result.finalMessage).toMatch(/^It is \d{2}:\d{2}\.$/);
    expect((await engine.runTurn('che ore sono?')).finalMessage).toMatch(/^Sono le/);
  });

  it('ends cleanly when the model is unreachable', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:11434'), {
      code: 'ECONNREFUSED',
    });
    const { engine } = engineWith(scripted([{ error: refused }]));
    const result = await engine.runTurn('summarise diary.md for me');
    expect(result).toMatchObject({ layer: 'terminator', termination: { cause: 'model_unreachable' } });
    expect(result.finalMessage).toContain('ollama serve');
  });

  it('records feedback as observations (its effects: feedback.test.ts)', async () => {
    const model = scripted([{ text: readPlan('diary.md', 1) }]);
    const { engine, autopath } = engineWith(model);
    const result = await engine.runTurn('read diary.md and tell me the last 1 lines');
    expect(await engine.feedback(result.turnId, 'up')).toMatchObject({ recorded: true, kind: 'up' });
    expect(autopath.observations(result.turnId).map((row) => row.feedback)).toEqual([null, 'up']);
  });

  it('says why each layer above the one that answered passed', async () => {
    const model = scripted([{ text: readPlan('diary.md', 1) }]);
    const { engine } = engineWith(model);
    const first = await engine.runTurn('read diary.md and tell me the last 1 lines');
    expect(first.passes?.map((passed) => passed.layer)).toEqual(['pre-fastpath', 'fastpath', 'autopath']);
    expect(first.passes?.[1]?.reason).toMatch(/no exact shortcut; by meaning: empty/);
    const again = await engine.runTurn('read diary.md and tell me the last 1 lines');
    expect(again.passes).toEqual([{ layer: 'pre-fastpath', reason: 'not a trivial request' }]);
  });
});
