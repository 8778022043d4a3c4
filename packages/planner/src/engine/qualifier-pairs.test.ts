import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addEchoExecutor, echoPlan, engineOver } from '../__fixtures__/engine.ts';
import { createWorld } from '../__fixtures__/world.ts';
import { createOllamaModel } from '../llm/providers.ts';
import { startOllamaServer } from '../test/ollama-server.ts';
import type { WireServer } from '../test/wire-server.ts';

let world: Awaited<ReturnType<typeof createWorld>>;
const servers: WireServer[] = [];
beforeAll(async () => {
  world = await createWorld();
  await addEchoExecutor(world);
});
afterAll(async () => {
  world.scratchpad.close();
  await Promise.all(servers.map((server) => server.close()));
});

/**
 * Pairs of requests that differ only in a qualifier, each with what its plan
 * says. A model that classifies both the same way (it answers the same
 * intent for both, as a small model does) must not make the second reuse the
 * first's plan.
 */
const PAIRS: Array<[string, string, string, string]> = [
  [
    'read notes/diary.md and tell me the first 3 lines',
    'head-3',
    'read notes/diary.md and tell me the last 3 lines',
    'tail-3',
  ],
  ['show me the head of notes/diary.md', 'head', 'show me the tail of notes/diary.md', 'tail'],
  [
    'find the largest file in the notes folder',
    'largest',
    'find the smallest file in the notes folder',
    'smallest',
  ],
  ['open the newest log in the logs folder', 'newest', 'open the oldest log in the logs folder', 'oldest'],
  [
    'list the meetings on my calendar for today',
    'today',
    'list the meetings on my calendar for tomorrow',
    'tomorrow',
  ],
  [
    'how much did I spend on groceries yesterday',
    'yesterday',
    'how much did I spend on groceries today',
    'today',
  ],
  ['show the mail sent from anna this week', 'from-anna', 'show the mail sent to anna this week', 'to-anna'],
  ['convert 10 euro to dollars for me', 'eur-usd', 'convert 10 dollars to euro for me', 'usd-eur'],
  ['send the weekly report to marco', 'to-marco', 'send the weekly report to giulia', 'to-giulia'],
  ['remind me to stretch in 5 minutes', 'in-300s', 'remind me to stretch in 10 minutes', 'in-600s'],
  [
    'sort the notes by date in ascending order',
    'ascending',
    'sort the notes by date in descending order',
    'descending',
  ],
  [
    'list the files in the notes folder that are empty',
    'empty',
    'list the files in the notes folder that are not empty',
    'not-empty',
  ],
  ['read the last three lines of the diary', 'tail-3', 'read the last five lines of the diary', 'tail-5'],
  ['show my meetings on monday', 'monday', 'show my meetings on friday', 'friday'],
  [
    'leggi le prime 3 righe di notes/diario.md',
    'testa-3',
    'leggi le ultime 3 righe di notes/diario.md',
    'coda-3',
  ],
  ['show the previous page of results', 'previous', 'show the next page of results', 'next'],
  [
    'list the invoices paid before the 2 of the month',
    'before',
    'list the invoices paid after the 2 of the month',
    'after',
  ],
  [
    'list the files bigger than 10 kilobytes',
    'over-10k',
    'list the files smaller than 10 kilobytes',
    'under-10k',
  ],
];

/** The intent a small model gives every request above: the qualifier is lost in it. */
const SAME_INTENT = { text: '{"verb":"read","object":"file","qualifiers":["notes"]}' };

/**
 * Two scripted Ollama servers on loopback — the fast tier answers intents,
 * the wise tier plans — and the models that talk to them over the wire.
 */
async function ollamaTiers(intents: number, plans: string[]) {
  const fast = await startOllamaServer(Array.from({ length: intents }, () => SAME_INTENT));
  const wise = await startOllamaServer(plans.map((text) => ({ text })));
  servers.push(fast, wise);
  const model = (server: WireServer) =>
    createOllamaModel({ model: 'qwen3:8b', baseUrl: server.url, think: false });
  return { wise, models: { fast: model(fast), wise: model(wise) } };
}

describe('a qualifier is never lost between the request and a remembered plan (over the Ollama protocol)', () => {
  it.each(PAIRS.map(([first, firstSays, second, secondSays]) => ({ first, firstSays, second, secondSays })))(
    '"$first", then "$second"',
    async ({ first, firstSays, second, secondSays }) => {
      const { wise, models } = await ollamaTiers(3, [echoPlan(firstSays), echoPlan(secondSays)]);
      // An eager memory: without qualifiers in the key, every second request here would be served.
      const { engine, stores } = engineOver(world, models, {
        recognition: { fastpathThreshold: 0.5, autopathThreshold: 0.5 },
      });

      const learned = await engine.runTurn(first);
      expect(learned).toMatchObject({ layer: 'engine', finalMessage: `Did ${firstSays}.` });
      const replayed = await engine.runTurn(first);
      expect(replayed).toMatchObject({ layer: 'fastpath', modelCalls: 0, finalMessage: `Did ${firstSays}.` });

      const other = await engine.runTurn(second);
      expect(other.finalMessage).toBe(`Did ${secondSays}.`);
      expect(other.layer).toBe('engine');
      expect(other.modelCalls).toBeGreaterThan(0);
      expect(wise.requests).toHaveLength(2);
      stores.close();
    },
  );

  it('has at least twelve pairs, each differing in a qualifier or a slot value, nothing else', async () => {
    const { describeRequest } = await import('./request-key.ts');
    expect(PAIRS.length).toBeGreaterThanOrEqual(12);
    for (const [first, , second] of PAIRS) {
      const [one, two] = [describeRequest(first), describeRequest(second)];
      const values = (key: typeof one) => key.slots.map((slot) => slot.value).join('|');
      expect(one.qualifiers.join() !== two.qualifiers.join() || values(one) !== values(two)).toBe(true);
      expect(one.slots.map((slot) => slot.name)).toEqual(two.slots.map((slot) => slot.name));
    }
  });

  it('replays a plan whose slots carry the difference, bound to the new values', async () => {
    const { models } = await ollamaTiers(2, [echoPlan('ada@example.com', { to: 'ada@example.com' })]);
    const { engine, stores } = engineOver(world, models);
    await engine.runTurn('send the weekly report to ada@example.com');
    const other = await engine.runTurn('send the weekly report to bob@example.com');
    expect(other).toMatchObject({ layer: 'fastpath', modelCalls: 0, finalMessage: 'Did bob@example.com.' });
    expect((other.plan?.steps[0] as { args?: unknown } | undefined)?.args).toEqual({
      says: 'bob@example.com',
      to: 'bob@example.com',
    });
    stores.close();
  });
});
