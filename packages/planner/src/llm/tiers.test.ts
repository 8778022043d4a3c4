import { afterEach, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../test/anthropic-server.ts';
import { startOllamaServer } from '../test/ollama-server.ts';
import { thrownBy } from '../test/thrown-by.ts';
import type { WireServer } from '../test/wire-server.ts';
import { ProviderConfigError } from './errors.ts';
import { createTiers, createTiersFromToml, llmConfigSchema } from './tiers.ts';

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const configError = (action: () => unknown) => thrownBy(action, ProviderConfigError.isInstance);

describe('tiers from TOML', () => {
  it('aliases middle and wise to fast when only fast is configured', () => {
    const tiers = createTiersFromToml(`
[runtime.llm.fast]
provider = "ollama"
model = "qwen3:8b"
think = false
`);
    expect(tiers.fast.id).toBe('qwen3:8b');
    expect(tiers.fast.tier).toBe('fast');
    expect(tiers.middle).toBe(tiers.fast);
    expect(tiers.wise).toBe(tiers.fast);
    expect(tiers.aliases).toEqual({ middle: 'fast', wise: 'fast' });
  });

  it('aliases wise to middle when middle exists, and middle to fast when only wise exists', () => {
    const withMiddle = createTiers({
      fast: { provider: 'ollama', model: 'qwen3:8b' },
      middle: { provider: 'ollama', model: 'gemma3:12b' },
    });
    expect(withMiddle.wise).toBe(withMiddle.middle);
    expect(withMiddle.middle.id).toBe('gemma3:12b');
    expect(withMiddle.aliases).toEqual({ wise: 'middle' });

    const withWise = createTiers(
      {
        fast: { provider: 'ollama', model: 'qwen3:8b' },
        wise: { provider: 'anthropic', model: 'claude-sonnet-4-6' },
      },
      { env: { ANTHROPIC_API_KEY: 'sk-ant' } },
    );
    expect(withWise.middle).toBe(withWise.fast);
    expect(withWise.wise.provider).toBe('anthropic');
    expect(withWise.wise.tier).toBe('wise');
    expect(withWise.aliases).toEqual({ middle: 'fast' });
  });

  it('wires every per-tier setting through to the request', async () => {
    const ollama = await startOllamaServer([{ text: 'fast answer' }, { text: 'deep answer' }]);
    const anthropic = await startAnthropicServer([{ text: 'wise answer' }], { apiKey: 'from-env' });
    servers.push(ollama, anthropic);
    const tiers = createTiersFromToml(
      `
[runtime.llm.fast]
provider = "ollama"
model = "qwen3:8b"
think = false
base_url = "${ollama.url}"
max_tokens = 512

[runtime.llm.middle]
provider = "ollama"
model = "qwen3:32b"
think = true
base_url = "${ollama.url}"
prompt = "Think it through before you answer."

[runtime.llm.wise]
provider = "anthropic"
model = "claude-sonnet-4-6"
base_url = "${anthropic.baseUrl}"
api_key_env = "METNOS_TEST_ANTHROPIC_KEY"
timeout_ms = 30000
max_tokens = 2048
prompt = "Weigh the options."
`,
      { env: { METNOS_TEST_ANTHROPIC_KEY: 'from-env' } },
    );
    expect(tiers.aliases).toEqual({});
    const request = {
      system: 'You are Metnos.',
      messages: [{ role: 'user' as const, content: 'hi' }],
      tools: [],
    };
    await tiers.fast.generate(request);
    await tiers.middle.generate(request);
    expect((await tiers.wise.generate(request)).text).toBe('wise answer');
    const [fast, middle] = ollama.requests.map((seen) => seen.body as Record<string, unknown>);
    expect(fast).toMatchObject({ model: 'qwen3:8b', think: false, options: { num_predict: 512 } });
    expect(middle).toMatchObject({ model: 'qwen3:32b', think: true });
    expect((middle!.messages as Array<{ content: string }>)[0]!.content).toBe(
      'You are Metnos.\n\nThink it through before you answer.',
    );
    const wise = anthropic.requests[0]!.body as Record<string, unknown>;
    expect(wise).toMatchObject({
      model: 'claude-sonnet-4-6',
      max_tokens: 2048,
      system: [{ type: 'text', text: 'You are Metnos.\n\nWeigh the options.' }],
    });
  });

  it('reads extra prices from [runtime.llm.pricing]', async () => {
    const anthropic = await startAnthropicServer([
      { text: 'ok', usage: { inputTokens: 1_000_000, outputTokens: 0 } },
    ]);
    servers.push(anthropic);
    const tiers = createTiersFromToml(
      `
[runtime.llm.fast]
provider = "anthropic"
model = "claude-next-1"
base_url = "${anthropic.baseUrl}"

[runtime.llm.pricing]
"claude-next" = { input = 2, output = 8 }
`,
      { env: { ANTHROPIC_API_KEY: 'k' } },
    );
    expect(
      (await tiers.fast.generate({ system: '', messages: [{ role: 'user', content: 'x' }], tools: [] }))
        .costUsd,
    ).toBe(2);
  });
});

describe('tier configuration errors', () => {
  it('requires an explicit model and names the tier at fault', () => {
    const error = configError(() =>
      createTiers({ fast: { provider: 'ollama', model: 'qwen3:8b' }, middle: { provider: 'ollama' } }),
    );
    expect(error.field).toBe('runtime.llm.middle.model');
  });

  it('requires [runtime.llm.fast]', () => {
    expect(configError(() => createTiers({ wise: { provider: 'ollama', model: 'x' } })).field).toBe(
      'runtime.llm.fast',
    );
    expect(configError(() => createTiersFromToml('[workspace]\nroot = "."')).field).toBe('runtime.llm');
    expect(configError(() => createTiersFromToml('[runtime.llm.fast\n')).field).toBe('runtime.llm');
  });

  it('refuses unknown providers, unknown keys and misplaced switches', () => {
    expect(configError(() => createTiers({ fast: { provider: 'gemini', model: 'x' } })).field).toBe(
      'runtime.llm.fast.provider',
    );
    expect(
      configError(() => createTiers({ fast: { provider: 'ollama', model: 'x', temperature: 1 } })).message,
    ).toMatch(/temperature/);
    expect(
      configError(() => createTiers({ fast: { provider: 'ollama', model: 'x', api_key_env: 'K' } })).field,
    ).toBe('runtime.llm.fast.api_key_env');
    expect(
      configError(() =>
        createTiers(
          { fast: { provider: 'openai', model: 'x', think: true } },
          { env: { OPENAI_API_KEY: 'k' } },
        ),
      ).field,
    ).toBe('runtime.llm.fast.think');
  });

  it('fails at construction when a key is missing or the base URL is plain http to a remote host', () => {
    expect(
      configError(() =>
        createTiers({ fast: { provider: 'openai', model: 'gpt-4o', api_key_env: 'NOPE' } }, { env: {} }),
      ).message,
    ).toContain('NOPE');
    expect(
      configError(() =>
        createTiers({
          fast: { provider: 'ollama', model: 'qwen3:8b', base_url: 'http://gpu-box.lan:11434' },
        }),
      ).field,
    ).toBe('base_url');
  });

  it('exports the schema for the app to parse [runtime.llm] once', () => {
    expect(
      llmConfigSchema.safeParse({ fast: { provider: 'ollama', model: 'qwen3:8b', think: false } }).success,
    ).toBe(true);
  });
});
