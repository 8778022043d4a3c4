import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOllamaServer } from '@metnos/planner/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, writeWorkspaceConfig } from './__fixtures__/cli.ts';

// metnos ask wires the host services: the engine's `model` (a brokered fast-tier call,
// counted and recorded in the turn's replay bundle) and `reminders` over the data
// folder's scheduler.sqlite, the store `metnos schedule` lists. Real seeds, real sandbox.

let work: string;
let server: Awaited<ReturnType<typeof startOllamaServer>>;
const savedEnv = { ...process.env };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-host-services-'));
  server = await startOllamaServer();
  await writeWorkspaceConfig(work, server.url);
  process.env.INIT_CWD = work;
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
});

afterAll(async () => {
  process.env = savedEnv;
  await server.close();
  await rm(work, { recursive: true, force: true });
});

describe('metnos ask with host services', () => {
  it('classify_entries asks the fast model through the host once; the call is counted and recorded', async () => {
    const entries = [
      { uid: 1, subject: '[SPAM] You won', headers: {} },
      { uid: 2, subject: 'Claim your prize', headers: {} },
    ];
    const plan = JSON.stringify({
      steps: [{ tool: 'classify_entries', args: { entries, dimension: 'spam' } }],
      final_message:
        'rules ${step1.content.summary.decided.rule}, model ${step1.content.summary.decided.model}',
    });
    server.push(
      { text: '{"verb":"find","object":"message","qualifiers":["spam"]}' },
      { text: plan },
      { text: '[{"i": 1, "label": "spam"}]' },
    );
    const before = server.requests.length;
    const result = await cli(['ask', 'which of these mails are spam', '--json']);
    expect(result.err).toBe('');
    const turn = JSON.parse(result.out) as { finalMessage: string; modelCalls: number; turnId: string };
    expect(turn.finalMessage).toBe('rules 1, model 1');
    expect(turn.modelCalls).toBe(3);
    const brokered = server.requests.slice(before)[2]?.body as { messages: Array<{ content: string }> };
    expect(JSON.stringify(brokered.messages)).toContain('Claim your prize');
    expect(JSON.stringify(brokered.messages)).not.toContain('You won');
    const bundle = JSON.parse(
      await readFile(join(work, 'data', 'replay', `${turn.turnId}.json`), 'utf8'),
    ) as {
      modelCalls: Array<{ tier: string; brokered?: { executor: string } }>;
    };
    expect(bundle.modelCalls.filter((call) => call.brokered)).toEqual([
      expect.objectContaining({
        tier: 'fast',
        brokered: expect.objectContaining({ executor: 'classify_entries' }),
      }),
    ]);
    const replay = await cli(['replay', turn.turnId]);
    expect(replay.code).toBe(0);
    expect(server.requests.length).toBe(before + 3);
  });

  it('reminder_set lands in the store metnos schedule lists, as one one-shot reminder', async () => {
    const plan = JSON.stringify({
      steps: [{ tool: 'reminder_set', args: { text: 'call the plumber', in_minutes: 30 } }],
      final_message: 'Reminder set for ${step1.content.next_fire}.',
    });
    server.push({ text: '{"verb":"create","object":"reminder","qualifiers":[]}' }, { text: plan });
    const result = await cli(['ask', 'remind me to call the plumber in 30 minutes', '--yes']);
    expect(result.err).toBe('');
    expect(result.out).toMatch(/Reminder set for \d{4}-\d{2}-\d{2}T/);
    const listed = await cli(['schedule', 'list', '--json']);
    const schedules = JSON.parse(listed.out) as Array<{ target: unknown; count: number; channel: unknown }>;
    expect(schedules).toEqual([
      expect.objectContaining({
        target: { kind: 'reminder', text: 'call the plumber' },
        count: 1,
        channel: null,
      }),
    ]);
    expect((await cli(['schedule', 'list'])).out).toContain('reminder "call the plumber"');
    expect(await readdir(join(work, 'data'))).toContain('scheduler.sqlite');
  });
});
