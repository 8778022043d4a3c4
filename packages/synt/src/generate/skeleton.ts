import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSigningKey, signExecutor, verifyExecutor } from '@metnos/executor-sdk';
import { renderManifest, writeExecutorFolder } from './artefacts.ts';
import { checkCode, checkSchemaText } from './code-check.ts';
import { SKELETON_SYSTEM, skeletonPrompt } from './prompts.ts';
import type { Checked, Specification } from './spec-schema.ts';
import type { Stage } from './types.ts';

/** The fenced blocks of an answer: the one `ts` block and the one `json` block. */
export function readSkeleton(answer: string): Checked<{ code: string; schema: string }> {
  const blocks = [...answer.matchAll(/```([a-zA-Z]*)[^\n]*\n([\s\S]*?)\n```/g)];
  const code = blocks.filter((block) => ['ts', 'typescript'].includes(block[1]!.toLowerCase()));
  const schema = blocks.filter((block) => block[1]!.toLowerCase() === 'json');
  if (code.length !== 1 || schema.length !== 1)
    return {
      ok: false,
      reason: 'answer with exactly one ```ts block (main.ts) and one ```json block (schema.json)',
    };
  return { ok: true, value: { code: `${code[0]![2]!.trim()}\n`, schema: `${schema[0]![2]!.trim()}\n` } };
}

/**
 * The SDK's own checks of a draft, by signing it in a staging folder with a
 * key made for this check and verifying it: the manifest parses, the schema
 * uses only the supported keywords and holds the contract's definitions.
 */
async function sdkCheck(
  spec: Specification,
  code: string,
  schema: string,
  runId: string,
): Promise<Checked<true>> {
  const stage = await mkdtemp(join(tmpdir(), 'metnos-synt-check-'));
  try {
    const grants = {
      read: spec.profile.fs_read,
      write: spec.profile.fs_write,
      domains: spec.profile.network,
    };
    const dir = join(stage, spec.name);
    const manifest = renderManifest(spec, grants, { runId, createdAt: new Date() });
    await writeExecutorFolder(dir, { manifest, code, schema, cases: [], grants }, { name: spec.name, runId });
    const key = await generateSigningKey();
    await signExecutor(dir, key);
    await verifyExecutor(dir, { trustedKeys: [key] });
    return { ok: true, value: true };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/** One draft through every check; the first refusal wins. */
async function check(
  answer: string,
  spec: Specification,
  runId: string,
): Promise<Checked<{ code: string; schema: string }>> {
  const files = readSkeleton(answer);
  if (!files.ok) return files;
  const code = checkCode(files.value.code, spec);
  if (!code.ok) return code;
  const schema = checkSchemaText(files.value.schema, spec);
  if (!schema.ok) return schema;
  const sdk = await sdkCheck(spec, files.value.code, files.value.schema, runId);
  return sdk.ok ? files : sdk;
}

/**
 * Stage 3, skeleton: the wise tier writes `main.ts` and `schema.json` from
 * the approved spec. Neither is trusted raw: the code must parse as
 * TypeScript and keep the import rule (only `node:` built-ins and the SDK's
 * define module) and the other rules of `checkCode`; the schema must match
 * the spec and pass the SDK's keyword and contract checks. A refused draft
 * is sent back once with the reason; then the run waits for a fix.
 */
export const skeletonStage: Stage = {
  name: 'skeleton',
  async run(draft, context) {
    const spec = draft.spec;
    if (!spec) return { kind: 'suspend', waitingFor: 'fix', reason: 'no approved spec to write code from' };
    const attempts = context.settings.skeletonAttempts ?? 2;
    let refusal: string | undefined;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const answer = await context.ask(SKELETON_SYSTEM, skeletonPrompt(spec, refusal));
      const checked = await check(answer, spec, context.runId);
      if (checked.ok)
        return {
          kind: 'done',
          note: `main.ts (${checked.value.code.split('\n').length} lines) and schema.json pass the checks`,
          update: checked.value,
        };
      refusal = checked.reason;
    }
    return {
      kind: 'suspend',
      waitingFor: 'fix',
      reason: `the code was refused ${attempts} times: ${refusal}. Amend the spec, approve to ask again, or reject`,
    };
  },
};
