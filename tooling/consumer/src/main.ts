// A project outside the Metnos repository that installed the packed @metnos/* tarballs
// with npm. It runs each package's README example for real: the seed executors verified
// against the release key, one sandboxed fs_read, a vaglio verdict, the autopath
// recognizer, and two turns of the engine with a scripted model (the second served from
// memory). tooling/scripts/consumer-check.ts copies this folder into the project,
// typechecks it (strict, skipLibCheck: false) and runs it with `node src/main.ts`.
import { strict as assert } from 'node:assert';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createDefaultEmbedder, createRecognizer, createVectorIndex } from '@metnos/autopath';
import { createAutopathStore, createFastpathStore } from '@metnos/autopath/stores';
import {
  createAuditLog,
  createCatalog,
  createInvoker,
  type ExecutorResult,
  readPublicKey,
  verifyExecutors,
} from '@metnos/executor-sdk';
import { createEngine, createGapLog } from '@metnos/planner';
import { createScriptedModel } from '@metnos/planner/test';
import { createSandboxRunner } from '@metnos/sandbox';
import { createVaglio } from '@metnos/vaglio';

const project = join(import.meta.dirname, '..');
const executors = join(project, 'executors');
const workspace = join(project, 'workspace');
const data = join(project, '.data');
await mkdir(workspace, { recursive: true });
await mkdir(data, { recursive: true });
await writeFile(join(workspace, 'diary.md'), 'one\ntwo\nthree\nfour\nfive\n');

function report(what: string, detail: string): void {
  console.log(`ok  ${what.padEnd(14)} ${detail}`);
}

// @metnos/executor-sdk: every seed verifies against the release key, then loads.
const trustedKeys = [await readPublicKey(join(project, 'keys', 'metnos-release.pub'))];
const seedDirs = (await readdir(executors)).map((name) => join(executors, name));
const outcomes = await verifyExecutors(seedDirs, { trustedKeys });
const refused = outcomes.filter((outcome) => !('executor' in outcome));
assert.deepEqual(refused, [], 'every seed executor verifies');
const catalog = createCatalog({ root: executors, trustedKeys });
const { loaded, quarantined } = await catalog.load();
assert.equal(quarantined.length, 0, JSON.stringify(quarantined));
assert.equal(loaded.length, seedDirs.length);
report('executor-sdk', `${loaded.length} seed executors verified and loaded`);

// @metnos/sandbox: one fs_read through the sandbox runner.
const runner = createSandboxRunner();
const invoker = createInvoker({ catalog, runner, audit: createAuditLog({ workspace }) });
const read: ExecutorResult = await invoker.invoke(
  'fs_read',
  { path: 'diary.md', mode: 'tail', lines: 2 },
  { workspace, caller: { kind: 'cli' } },
);
assert.ok(read.ok, JSON.stringify(read));
assert.equal((read.content as { content: string }).content, 'four\nfive\n');
const outside = await invoker.invoke(
  'fs_read',
  { path: '/etc/passwd' },
  { workspace, caller: { kind: 'cli' } },
);
assert.ok(!outside.ok && outside.error.class === 'PolicyViolation', JSON.stringify(outside));
report('sandbox', `fs_read at tier ${read.isolation?.tier}; /etc/passwd refused (PolicyViolation)`);

// @metnos/vaglio: the guard blocks a forbidden path whatever the score.
const vaglio = createVaglio();
const fsRead = {
  name: 'fs_read',
  version: '1.0.0',
  capabilities: ['fs:read'],
  sideEffects: false,
  idempotent: true,
};
const context = { home: project, workspace };
const allowed = await vaglio.evaluate(
  { executor: fsRead, args: { path: 'diary.md' }, request: 'fs read diary.md', turnId: 't1', stepIndex: 1 },
  context,
);
const blocked = await vaglio.evaluate(
  {
    executor: fsRead,
    args: { path: 'cat ~/.ssh/id_rsa > x' },
    request: 'read it',
    turnId: 't1',
    stepIndex: 2,
  },
  context,
);
assert.ok(allowed.approved && !blocked.approved && blocked.blocked_by === 'guard');
report('vaglio', `approved at ${allowed.score.toFixed(2)}; ~/.ssh blocked by the guard`);

// @metnos/autopath: a vector index in SQLite and the recognizer on top of it.
const index = await createVectorIndex({ path: join(data, 'memory.sqlite') }, createDefaultEmbedder());
await index.add([
  { text: 'wake me up at 7', label: 'plan-alarm' },
  { text: 'set an alarm for six thirty', label: 'plan-alarm' },
  { text: 'what is the weather in rome', label: 'plan-weather' },
  { text: 'will it rain tomorrow', label: 'plan-weather' },
]);
const recognizer = createRecognizer({ index });
await recognizer.calibrate([
  ...index.entries(),
  { text: 'alarm at 8 please', label: 'plan-alarm' },
  { text: 'is it going to rain in paris', label: 'plan-weather' },
  { text: 'who won the match last night', label: null },
  { text: 'order a pizza', label: null },
]);
const alarm = await recognizer.recognize('set an alarm for 9');
const jazz = await recognizer.recognize('play some jazz');
assert.ok(alarm.kind === 'serve' && alarm.label === 'plan-alarm', JSON.stringify(alarm));
assert.equal(jazz.kind, 'miss');
index.close();
report('autopath', `"set an alarm for 9" → ${alarm.label}; "play some jazz" → miss`);

// @metnos/planner: the engine proposes with the scripted model, then serves from memory.
const plan = JSON.stringify({
  steps: [{ tool: 'fs_read', args: { path: 'diary.md', mode: 'tail', lines: 3 } }],
  final_message: 'Last lines:\n${step1.content.content}',
});
const wise = createScriptedModel([{ text: plan }]);
const stores = {
  fastpath: createFastpathStore({ path: join(data, 'fastpath.sqlite') }),
  autopath: createAutopathStore({ path: join(data, 'autopath.sqlite') }),
  gaps: createGapLog({ path: join(data, 'gaps.sqlite') }),
};
const engine = createEngine({
  catalog,
  invoker,
  reviewer: vaglio,
  models: { fast: createScriptedModel([]), wise },
  embedder: createDefaultEmbedder(),
  ...stores,
  workspace,
});
const first = await engine.runTurn('read diary.md and tell me the last 3 lines');
assert.equal(first.finalKind, 'answer', JSON.stringify(first));
assert.equal(first.layer, 'engine');
assert.match(first.finalMessage, /three\nfour\nfive/);
const again = await engine.runTurn('read diary.md and tell me the last 3 lines');
assert.equal(again.layer, 'fastpath');
assert.equal(again.modelCalls, 0);
for (const store of Object.values(stores)) store.close();
report(
  'planner',
  `turn 1 by the ${first.layer} (${first.modelCalls} model call${first.modelCalls === 1 ? '' : 's'}), turn 2 from the ${again.layer} (0)`,
);
