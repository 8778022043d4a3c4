import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engineOver } from '../__fixtures__/engine.ts';
import { createWorld, scripted } from '../__fixtures__/world.ts';
import { passReasonForSpan } from './telemetry.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const SECRET_A = 'alpha line of the private note 4711';
const SECRET_B = 'omega line of the other private note 0815';

beforeAll(async () => {
  world = await createWorld();
  await writeFile(join(world.workspace, 'private-a.md'), `${SECRET_A}\n`);
  await writeFile(join(world.workspace, 'private-b.md'), `first\n${SECRET_B}\n`);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
  world.scratchpad.close();
});
beforeEach(() => exporter.reset());

/** The finished spans as a tree: each span's children by name, and its parent. */
function tree(spans: ReadableSpan[]) {
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
  const parentOf = (span: ReadableSpan) => {
    const id = span.parentSpanContext?.spanId;
    return id === undefined ? undefined : byId.get(id);
  };
  const named = (name: string) => spans.filter((span) => span.name === name);
  const one = (name: string) => {
    const found = named(name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  const childrenOf = (span: ReadableSpan) => spans.filter((child) => parentOf(child) === span);
  return { parentOf, named, one, childrenOf };
}

/** Every attribute value and status message of the spans, as text. */
const recordedText = (spans: ReadableSpan[]) =>
  spans.flatMap((span) => [
    span.name,
    span.status.message ?? '',
    ...Object.values(span.attributes).map((value) => String(value)),
  ]);

describe('tracing a turn', () => {
  it('nests model calls and parallel steps under the proposal layer, under the turn, and records no request, argument or content', async () => {
    const plan = JSON.stringify({
      steps: [
        { tool: 'fs_read', args: { path: 'private-a.md' } },
        { tool: 'fs_read', args: { path: 'private-b.md', tail: 1 } },
      ],
      final_message: 'A: ${step1.content}\nB: ${step2.content}',
    });
    const request = 'read private-a.md and the last line of private-b.md for me';
    const { engine, stores } = engineOver(world, { wise: scripted([{ text: plan }]) });
    const result = await engine.runTurn(request);
    stores.close();
    expect(result).toMatchObject({ layer: 'engine', finalKind: 'answer' });
    expect(result.finalMessage).toContain(SECRET_B);

    const spans = exporter.getFinishedSpans();
    const t = tree(spans);
    const turn = t.one('metnos.turn');
    expect(t.parentOf(turn)).toBeUndefined();
    expect(turn.attributes).toMatchObject({
      'metnos.turn.id': result.turnId,
      'metnos.turn.layer': 'engine',
      'metnos.turn.final_kind': 'answer',
      'metnos.turn.model_calls': result.modelCalls,
      'metnos.turn.as_of': result.asOf,
    });

    // the layers tried, in order, each a child of the turn
    expect(t.childrenOf(turn).map((span) => span.name)).toEqual([
      'metnos.layer pre-fastpath',
      'metnos.layer fastpath',
      'metnos.layer autopath',
      'metnos.layer proposal',
    ]);
    expect(t.one('metnos.layer pre-fastpath').attributes).toMatchObject({
      'metnos.layer.outcome': 'passed',
      'metnos.layer.pass_reason': 'not a trivial request',
    });
    const proposal = t.one('metnos.layer proposal');
    expect(proposal.attributes).toMatchObject({
      'metnos.layer': 'proposal',
      'metnos.layer.outcome': 'answered',
    });

    // the model calls of the turn: the proposer's under the proposal layer
    const calls = t.named('metnos.model.call');
    expect(calls).toHaveLength(result.modelCalls);
    const wise = calls.filter((call) => call.attributes['metnos.model.tier'] === 'wise');
    expect(wise.length).toBeGreaterThan(0);
    for (const call of wise) {
      expect(t.parentOf(call)).toBe(proposal);
      expect(call.attributes).toMatchObject({ 'metnos.model.provider': expect.any(String) });
      expect(call.attributes['metnos.model.prompt_revision']).toMatch(/^[0-9a-f]{16}$/);
      expect(call.attributes['metnos.model.input_tokens']).toEqual(expect.any(Number));
    }

    // both steps ran in one wave, each a child of the proposal layer with one invoke under it
    for (const number of [1, 2]) {
      const step = t.one(`metnos.step ${number}`);
      expect(t.parentOf(step)).toBe(proposal);
      const executed = result.steps.find((ran) => ran.number === number)!;
      expect(step.attributes).toMatchObject({
        'metnos.step.tool': 'fs_read',
        'metnos.executor.version': executed.version,
        'metnos.step.attempts': 1,
        'metnos.step.ok': true,
        'metnos.step.result_hash': executed.resultHash,
      });
      expect(step.status.code).not.toBe(SpanStatusCode.ERROR);
      const invokes = t.childrenOf(step);
      expect(invokes.map((span) => span.name)).toEqual(['metnos.executor.invoke']);
      expect(invokes[0]!.attributes).toMatchObject({
        'metnos.step.number': number,
        'metnos.executor.name': 'fs_read',
        'metnos.invoke.ok': true,
      });
    }
    const [first, second] = [t.one('metnos.step 1'), t.one('metnos.step 2')];
    // parallel: the second started before the first ended
    const start = (span: ReadableSpan) => span.startTime[0] * 1e9 + span.startTime[1];
    const end = (span: ReadableSpan) => span.endTime[0] * 1e9 + span.endTime[1];
    expect(start(second)).toBeLessThan(end(first));

    const text = recordedText(spans);
    for (const secret of [request, SECRET_A, SECRET_B, 'private-a.md', 'private-b.md', plan])
      expect(text.filter((value) => value.includes(secret))).toEqual([]);
  });

  it('marks a failed step and its invoke ERROR with the error class only, and cuts the pass reason before the message', async () => {
    const failing = JSON.stringify({
      steps: [{ tool: 'fs_read', args: { path: 'no-such-private.md' } }],
      final_message: '${step1.content}',
    });
    const request = 'read no-such-private.md';
    const { engine, stores } = engineOver(world, {
      wise: scripted([{ text: failing }, { text: failing }, { text: failing }]),
    });
    const result = await engine.runTurn(request);
    stores.close();
    const spans = exporter.getFinishedSpans();
    const t = tree(spans);
    const proposal = t.one('metnos.layer proposal');
    expect(proposal.attributes['metnos.layer.outcome']).toBe('passed');
    expect(proposal.attributes['metnos.layer.pass_reason']).toBe(
      'the plan failed at fs_read (missing_input)',
    );

    const step = t.named('metnos.step 1').find((span) => t.parentOf(span) === proposal)!;
    expect(step.status).toEqual({ code: SpanStatusCode.ERROR, message: 'NotFound' });
    expect(step.attributes).toMatchObject({ 'metnos.step.ok': false, 'error.type': 'NotFound' });
    const [invoke] = t.childrenOf(step);
    expect(invoke!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'NotFound' });
    expect(t.one('metnos.turn').attributes['metnos.turn.layer']).toBe(result.layer);

    const text = recordedText(spans);
    for (const secret of [request, 'no-such-private.md', 'no such file'])
      expect(text.filter((value) => value.includes(secret))).toEqual([]);
  });

  it('cuts each part of a pass reason at its first colon', () => {
    expect(passReasonForSpan('no exact shortcut; by meaning: below the threshold (score 0.500)')).toBe(
      'no exact shortcut; by meaning',
    );
    expect(passReasonForSpan('exact match fp-1 failed at fs_read: no such file: a.md')).toBe(
      'exact match fp-1 failed at fs_read',
    );
  });
});
