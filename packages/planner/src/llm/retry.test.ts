import { describe, expect, it } from 'vitest';
import {
  ProviderAbortedError,
  ProviderConfigError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from './errors.ts';
import { classifyFailure, type RetryOptions, withRetry } from './retry.ts';

const http = (status: number, retryAfterMs?: number) =>
  new ProviderHttpError({ status, bodySnippet: '', providerName: 'openai', hint: '', retryAfterMs });
const failed = (errorClass: string) => ({ ok: false as const, error: { class: errorClass, message: 'x' } });
const networkError = (code: string) =>
  Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });

describe('classifyFailure', () => {
  it('sorts model failures', () => {
    for (const status of [408, 429, 500, 502, 503, 529])
      expect(classifyFailure(http(status))).toBe('transient');
    for (const status of [400, 401, 403, 404, 413, 422])
      expect(classifyFailure(http(status))).toBe('permanent');
    expect(classifyFailure(new ProviderTimeoutError({ providerName: 'ollama', timeoutMs: 5 }))).toBe(
      'transient',
    );
    expect(
      classifyFailure(new ProviderUnreachableError({ providerName: 'ollama', baseUrl: 'x', hint: '' })),
    ).toBe('transient');
    expect(classifyFailure(new ProviderAbortedError({ providerName: 'ollama' }))).toBe('permanent');
    expect(classifyFailure(new ProviderConfigError({ field: 'model', message: '' }))).toBe('permanent');
    expect(
      classifyFailure(new ProviderResponseError({ providerName: 'openai', message: 'schema mismatch' })),
    ).toBe('permanent');
  });

  it('sorts executor results and policy denials', () => {
    for (const errorClass of ['Timeout', 'RateLimited', 'Network', 'Unavailable'])
      expect(classifyFailure(failed(errorClass))).toBe('transient');
    for (const errorClass of ['InvalidInput', 'NotFound', 'PermissionDenied', 'NonJsonOutput']) {
      expect(classifyFailure(failed(errorClass))).toBe('permanent');
    }
    for (const errorClass of ['PolicyViolation', 'IsolationUnavailable'])
      expect(classifyFailure(failed(errorClass))).toBe('policy');
    expect(classifyFailure({ approved: false, blocked_by: 'guard', reason: 'forbidden path' })).toBe(
      'policy',
    );
  });

  it('sorts plain errors by status, network code, name and explicit classification', () => {
    expect(classifyFailure(networkError('ECONNRESET'))).toBe('transient');
    expect(classifyFailure(Object.assign(new Error('x'), { statusCode: 503 }))).toBe('transient');
    expect(classifyFailure(Object.assign(new Error('x'), { status: 404 }))).toBe('permanent');
    expect(classifyFailure(new DOMException('late', 'TimeoutError'))).toBe('transient');
    expect(classifyFailure(new DOMException('stop', 'AbortError'))).toBe('permanent');
    expect(classifyFailure(Object.assign(new Error('no'), { classification: 'policy' }))).toBe('policy');
    expect(classifyFailure(new Error('a bug'))).toBe('permanent');
    expect(classifyFailure('a string')).toBe('permanent');
  });
});

function harness(outcomes: unknown[], options: RetryOptions = {}) {
  const waits: number[] = [];
  const keys: string[] = [];
  let calls = 0;
  const run = withRetry(
    async ({ attempt, idempotencyKey }) => {
      keys.push(idempotencyKey);
      expect(attempt).toBe(++calls);
      const outcome = outcomes.shift();
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    { sleep: async (ms) => void waits.push(ms), random: () => 0, ...options },
  );
  return { run, waits, keys, calls: () => calls };
}

describe('withRetry', () => {
  it('backs off exponentially with injected jitter and keeps one idempotency key', async () => {
    const { run, waits, keys } = harness([http(503), http(502), http(500), 'ok'], {
      attempts: 4,
      baseDelayMs: 100,
      idempotencyKey: 'k-1',
    });
    await expect(run).resolves.toBe('ok');
    expect(waits).toEqual([50, 100, 200]);
    expect(keys).toEqual(['k-1', 'k-1', 'k-1', 'k-1']);
  });

  it('spreads the wait between half and all of the backoff, capped at maxDelayMs', async () => {
    const { run, waits } = harness([http(500), http(500), http(500), 'ok'], {
      attempts: 4,
      baseDelayMs: 1000,
      maxDelayMs: 1500,
      random: () => 0.999,
    });
    await run;
    expect(waits).toEqual([1000, 1499, 1499]);
    const exact = harness([http(500), 'ok'], { baseDelayMs: 300, jitter: false });
    await exact.run;
    expect(exact.waits).toEqual([300]);
  });

  it('waits at least Retry-After, and gives up when the server asks for longer than maxDelayMs', async () => {
    const honoured = harness([http(429, 4000), 'ok'], { baseDelayMs: 100, maxDelayMs: 10_000 });
    await expect(honoured.run).resolves.toBe('ok');
    expect(honoured.waits).toEqual([4000]);
    const tooLong = harness([http(429, 60_000), 'ok'], { maxDelayMs: 10_000 });
    const error = await tooLong.run.catch((caught: unknown) => caught);
    expect((error as ProviderHttpError).status).toBe(429);
    expect(tooLong.calls()).toBe(1);
  });

  it('does not retry permanent or policy failures', async () => {
    const permanent = harness([http(401), 'ok']);
    await expect(permanent.run).rejects.toMatchObject({ status: 401 });
    expect(permanent.calls()).toBe(1);
    const policy = harness([failed('PolicyViolation'), 'ok']);
    await expect(policy.run).resolves.toEqual(failed('PolicyViolation'));
    expect(policy.calls()).toBe(1);
  });

  it('rethrows the last error once attempts run out', async () => {
    const { run, calls } = harness([http(500), http(503), 'ok'], { attempts: 2 });
    await expect(run).rejects.toMatchObject({ status: 503 });
    expect(calls()).toBe(2);
  });

  it('retries failed executor results as data and returns the last one', async () => {
    const recovered = harness([failed('Timeout'), { ok: true, content: 'x' }]);
    await expect(recovered.run).resolves.toEqual({ ok: true, content: 'x' });
    const stuck = harness([failed('Timeout'), failed('Timeout'), failed('RateLimited')]);
    await expect(stuck.run).resolves.toEqual(failed('RateLimited'));
    expect(stuck.calls()).toBe(3);
  });

  it('stops when the signal aborts during a wait', async () => {
    const controller = new AbortController();
    let calls = 0;
    const result = withRetry(
      async () => {
        calls++;
        throw http(503);
      },
      { attempts: 5, signal: controller.signal, sleep: async () => controller.abort() },
    );
    await expect(result).rejects.toMatchObject({ status: 503 });
    expect(calls).toBe(1);
  });

  it('reports each retry before waiting', async () => {
    const events: unknown[] = [];
    const { run } = harness([http(500), 'ok'], {
      baseDelayMs: 10,
      jitter: false,
      onRetry: (event) => events.push(event),
    });
    await run;
    expect(events).toEqual([
      {
        attempt: 1,
        delayMs: 10,
        classification: 'transient',
        failure: expect.objectContaining({ status: 500 }),
      },
    ]);
  });
});
