import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { executorCode, sandboxToml, useTempDirs } from './__fixtures__/index.ts';
import { createCatalog } from './catalog.ts';
import { createInvoker, type InvokeOptions } from './invoke.ts';
import { generateSigningKey } from './keys.ts';
import { createProcessRunner, RUNTIME_DIR } from './runner.ts';
import { writeSignedExecutor } from './test/index.ts';

const temp = useTempDirs('metnos-runtime-imports-');
const TELEGRAM_FILE = join(RUNTIME_DIR, 'telegram.mjs');

/** Specifiers that name the SDK or its runtime folder some other way than the mapped modules. */
const REFUSED = [
  '@metnos/executor-sdk',
  '@metnos/executor-sdk/test',
  '@metnos/executor-sdk/harness',
  '@metnos/executor-sdk/telegram.mjs',
  '@metnos/executor-sdk/runtime/telegram.mjs',
  pathToFileURL(TELEGRAM_FILE).href,
  TELEGRAM_FILE,
  pathToFileURL(join(RUNTIME_DIR, 'json-schema.mjs')).href,
];

let invoker: ReturnType<typeof createInvoker>;
let options: InvokeOptions;

beforeAll(async () => {
  const root = await temp.make('root-');
  const workspace = await temp.make('workspace-');
  const key = await generateSigningKey();
  const write = (name: string, code: string) =>
    writeSignedExecutor({ root, name, key, sandboxToml: sandboxToml(), code });
  await write(
    'uses_telegram',
    executorCode(
      `const client = createTelegramClient({ token: '123456:abcdefgh' });
      return ok({ pieces: splitMessage('a'.repeat(5000)).map((piece) => piece.length),
        limit: TELEGRAM_MESSAGE_LIMIT, methods: Object.keys(client).sort() });`,
      `import { createTelegramClient, splitMessage, TELEGRAM_MESSAGE_LIMIT } from '@metnos/executor-sdk/telegram';`,
    ),
  );
  for (const [index, specifier] of REFUSED.entries()) {
    await write(`refused_${index}`, executorCode(`return ok({});`, `import ${JSON.stringify(specifier)};`));
  }
  const catalog = createCatalog({ root, trustedKeys: [key] });
  expect((await catalog.load()).quarantined).toEqual([]);
  invoker = createInvoker({ catalog, runner: createProcessRunner() });
  options = { workspace, caller: { kind: 'user', sender: 'ada', channel: 'cli' } };
});

describe('what an executor may import', () => {
  it('lets the code import @metnos/executor-sdk/telegram, the shared Bot API client', async () => {
    expect(await invoker.invoke('uses_telegram', {}, options)).toMatchObject({
      ok: true,
      content: {
        pieces: [4096, 904],
        limit: 4096,
        methods: ['answerCallbackQuery', 'getUpdates', 'sendMessage'],
      },
    });
  });

  for (const [index, specifier] of REFUSED.entries()) {
    it(`refuses ${specifier} as Crashed, saying why`, async () => {
      expect(await invoker.invoke(`refused_${index}`, {}, options)).toMatchObject({
        ok: false,
        error: {
          class: 'Crashed',
          message: expect.stringContaining(
            `import of "${specifier}" refused: executors may import only node: built-ins, ` +
              '@metnos/executor-sdk/define and @metnos/executor-sdk/telegram',
          ),
        },
      });
    });
  }
});
