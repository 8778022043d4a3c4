import { join } from 'node:path';
import { createKeyStore, readPublicKey } from '@metnos/executor-sdk';
import { createMnestome } from '@metnos/mnestome';
import { createTiers } from '@metnos/planner';
import { createSandboxRunner } from '@metnos/sandbox';
import { createSynt, createSyntStore, type Synt } from '@metnos/synt';
import type { Runtime } from './commands/ask.ts';
import { DEFAULT_LLM } from './config.ts';
import { formatNotices, openOrDoWithout, type StoreNotice, storePath } from './stores.ts';
import { placeCatalog, trustedKeys } from './workspace.ts';

/**
 * The synt of a place, as `metnos synt` and `metnos serve` use it: its
 * record (`<data>/synt.sqlite`), the mnestome beside it, the catalog of the
 * executors folder (where a generated executor lands), the wise tier of
 * `[runtime.llm]`, the sandbox runner birth tests go through, and the
 * person's key store in the config dir (`[synt] key`, default "default").
 * The release keys the workspace's `metnos.toml` trusts are refused as
 * signers. The synt's own store must open (for `serve`, `orDoWithout`
 * replaces it by an empty one); the mnestome, when it cannot, is replaced
 * by an empty one. Either is said through `warn`.
 *
 * @example
 * const { synt, close } = await openSynt(await runtime({}), (line) => io.err(line));
 */
export async function openSynt(
  context: Runtime,
  warn: (line: string) => void,
  options: {
    /** `serve`: a synt.sqlite that cannot be opened is replaced by an empty record, and said so. */
    orDoWithout?: boolean;
    mnestome?: ReturnType<typeof createMnestome>;
    catalog?: Parameters<typeof createSynt>[0]['catalog'];
  } = {},
): Promise<{ synt: Synt; close(): void }> {
  const { place, config, data } = context;
  const keys = await trustedKeys(place, place.executors);
  const catalog = options.catalog ?? (await placeCatalog(place, keys));
  if (!options.catalog) await catalog.load();
  const releaseKeys = await Promise.all(
    (place.config?.trustedKeyFiles ?? []).map((file) => readPublicKey(file)),
  );
  const notices: StoreNotice[] = [];
  const mnestome = options.mnestome ?? openOrDoWithout('mnestome', data, createMnestome, notices);
  const store = options.orDoWithout
    ? openOrDoWithout('synt', data, createSyntStore, notices)
    : createSyntStore({ path: storePath(data, 'synt') });
  for (const line of formatNotices(notices)) warn(line);
  const settings = config.synt;
  const synt = createSynt({
    store,
    catalog,
    mnestome,
    model: createTiers(config.runtime.llm ?? DEFAULT_LLM, { env: process.env }).wise,
    runner: createSandboxRunner({ hostOverrides: config.sandbox?.host_overrides }),
    keyStore: createKeyStore({ configDir: place.configDir }),
    keyName: settings?.key,
    trustedKeys: keys,
    refusedKeyIds: releaseKeys.map((key) => key.keyId),
    auditDir: join(place.workspace, '.audit'),
    pattern: {
      minUses: settings?.min_uses,
      minWeight: settings?.min_weight,
      windowDays: settings?.window_days,
    },
  });
  return {
    synt,
    close() {
      store.close();
      if (!options.mnestome) mnestome.close();
    },
  };
}
