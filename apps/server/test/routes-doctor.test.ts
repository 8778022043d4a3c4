import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRefusal, serveApi } from './routes-helpers.ts';

let plain: Awaited<ReturnType<typeof serveApi>>;
let full: Awaited<ReturnType<typeof serveApi>>;
let integrityRuns = 0;

beforeAll(async () => {
  plain = await serveApi({ doctor: {} });
  full = await serveApi({
    doctor: {
      integrity: async () => {
        integrityRuns++;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return [{ check: 'audit', ok: true, detail: 'a private folder of this user' }];
      },
      stores: () => [{ store: 'fastpath', state: 'absent', detail: 'not created yet' }],
    },
  });
});

afterAll(async () => {
  await plain?.server.close();
  await full?.server.close();
});

describe('the doctor route', () => {
  it('answers nothing without the bearer token', async () => {
    await expectRefusal(await plain.call('/api/doctor', {}, 'nope'), 401, 'unauthorized');
  });

  it("answers the sandbox's host report as metnos doctor --json does, naming the checks it was not given", async () => {
    const response = await plain.call('/api/doctor');
    expect(response.status).toBe(200);
    const report = (await response.json()) as Record<string, unknown>;
    expect(report).toMatchObject({
      strongest: expect.any(String),
      findings: expect.any(Array),
      host: expect.objectContaining({ platform: process.platform }),
      skipped: ['integrity', 'stores'],
    });
    expect(report).not.toHaveProperty('integrity');
  });

  it('adds the integrity and store findings it is given, one run for requests that arrive together', async () => {
    const answers = await Promise.all([full.call('/api/doctor'), full.call('/api/doctor')]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({
        integrity: [{ check: 'audit', ok: true }],
        stores: [{ store: 'fastpath', state: 'absent' }],
        skipped: [],
      });
    }
    expect(integrityRuns).toBe(1);
  });

  it('takes no parameters and no other method', async () => {
    await expectRefusal(await plain.call('/api/doctor', { method: 'POST', json: { repair: true } }), 404);
    for (const query of ['repair=1', '__proto__=1', 'json'])
      await expectRefusal(await plain.call(`/api/doctor?${query}`), 400, 'invalid');
  });
});
