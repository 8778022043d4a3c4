// A host with nothing else to do: two calls back to back through the warm pool,
// the second handed the process still starting after the first. Prints one
// JSON line per call and exits by itself (the waiting process it leaves does
// not keep it alive).
// Usage: node --conditions=metnos-source pool-host.ts <executor dir> <public key file> <workspace> <home>
import { readPublicKey, verifyExecutor } from '@metnos/executor-sdk';
import { createSandboxRunner } from '../../src/index.ts';

const [dir, keyFile, workspace, home] = process.argv.slice(2) as [string, string, string, string];
const executor = await verifyExecutor(dir, { trustedKeys: [await readPublicKey(keyFile)] });
const runner = createSandboxRunner({ audit: false, home, pool: { size: 1 } });
for (let call = 0; call < 2; call++) {
  const report = await runner.run({
    executor,
    args: {},
    context: { traceId: `pool-host-${call}`, workspace, caller: { kind: 'test' } },
  });
  console.log(JSON.stringify({ ok: report.result.ok, notes: report.result.isolation?.notes ?? [] }));
}
