import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTempDirs } from '../__fixtures__/index.ts';
import { createAuditLog } from '../audit.ts';
import { createCatalog } from '../catalog.ts';
import { createInvoker } from '../invoke.ts';
import { generateSigningKey, type SigningKey } from '../keys.ts';
import { createProcessRunner } from '../runner.ts';
import { writeSignedExecutor } from '../test/index.ts';
import { createReceiptChain, type ReceiptChain } from './chain.ts';
import { receiptsDirOf } from './files.ts';
import { receiptDigest } from './format.ts';
import { verifyReceiptChain } from './verify.ts';

const temp = useTempDirs('metnos-invoke-receipts-');
const SECRET = 'the-password-is-tangerine-4711';

let workspace: string;
let key: SigningKey;
let chain: ReceiptChain;
let invoker: ReturnType<typeof createInvoker>;

beforeAll(async () => {
  const root = await temp.make('root-');
  workspace = await temp.make('workspace-');
  const signer = await generateSigningKey();
  await writeSignedExecutor({ root, name: 'echo', key: signer });
  const catalog = createCatalog({ root, trustedKeys: [signer] });
  expect((await catalog.load()).quarantined).toEqual([]);
  key = await generateSigningKey();
  chain = createReceiptChain({ dir: receiptsDirOf(workspace), key });
  invoker = createInvoker({
    catalog,
    runner: createProcessRunner(),
    audit: createAuditLog({ workspace }),
    receipts: chain,
  });
});

const receiptLines = async () => {
  const dir = receiptsDirOf(workspace);
  const file = join(dir, `${new Date().toISOString().slice(0, 10)}.jsonl`);
  return (await readFile(file, 'utf8')).trim().split('\n');
};

describe('receipts of executor invocations', () => {
  it('appends one signed receipt per call, refusals included, with digests and never the arguments', async () => {
    const args = { note: SECRET };
    const result = await invoker.invoke('echo', args, {
      workspace,
      caller: { kind: 'scheduler', scheduleId: 'morning' },
      traceId: 'trace-1',
      turnId: 'turn-1',
    });
    expect(result.ok).toBe(true);
    const refused = await invoker.invoke('missing_one', args, { workspace, caller: { kind: 'cli' } });
    expect(refused).toMatchObject({ ok: false, error: { class: 'NotInvocable' } });
    const lines = await receiptLines();
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toContain(SECRET);
    const [first, second] = lines.map((line) => JSON.parse(line));
    expect(first).toMatchObject({
      seq: 0,
      kind: 'executor',
      data: {
        executor: 'echo',
        caller: 'scheduler',
        schedule: 'morning',
        trace_id: 'trace-1',
        turn_id: 'turn-1',
        args: await receiptDigest(args),
        exit: 'ok',
        error_class: null,
      },
    });
    expect(second).toMatchObject({
      seq: 1,
      parent_sig: first.sig,
      data: { exit: 'policy', error_class: 'NotInvocable' },
    });
    expect(await verifyReceiptChain({ dir: receiptsDirOf(workspace), keys: [key] })).toMatchObject({
      status: 'ok',
      receipts: 2,
    });
  });

  it('refuses the call when the chain cannot take its receipt (a torn tail), and runs nothing', async () => {
    const [file] = (await receiptLines()).slice(-1);
    const path = join(receiptsDirOf(workspace), `${new Date().toISOString().slice(0, 10)}.jsonl`);
    await appendFile(path, file!.slice(0, 30));
    const result = await invoker.invoke('echo', { note: 'x' }, { workspace, caller: { kind: 'cli' } });
    expect(result).toMatchObject({
      ok: false,
      error: { class: 'AuditUnavailable', message: expect.stringContaining('torn') },
    });
    const audit = await readFile(
      join(workspace, '.audit', 'executors', `${new Date().toISOString().slice(0, 10)}.jsonl`),
      'utf8',
    );
    expect(audit.trim().split('\n')).toHaveLength(2);
    await chain.repair();
    expect((await invoker.invoke('echo', { note: 'x' }, { workspace, caller: { kind: 'cli' } })).ok).toBe(
      true,
    );
  });
});
