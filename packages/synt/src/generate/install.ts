import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { signExecutor, verifyExecutor } from '@metnos/executor-sdk';
import { reviewDigest, writeExecutorFolder } from './artefacts.ts';
import type { GeneratorSettings, Motivation, RunDraft, Stage, StageOutcome } from './types.ts';

/** The key name the release key goes by; a synthesised executor is never signed with it. */
export const RELEASE_KEY_NAME = 'metnos-release';

const fix = (reason: string): StageOutcome => ({ kind: 'suspend', waitingFor: 'fix', reason });

/**
 * The approval gate, checked again where the signing happens: an approval
 * exists, and it names the digest of exactly the artefacts about to be
 * written. Undefined when the draft may be signed, else why not.
 */
export function approvalRefusal(draft: RunDraft): string | undefined {
  if (!draft.review || !draft.approval) return 'nothing is signed without the person’s approval';
  const digest = reviewDigest(draft.review.artefacts);
  if (draft.approval.digest !== digest || draft.review.digest !== digest)
    return `the approval (${draft.approval.digest}) is not for these artefacts (${digest})`;
  return undefined;
}

/** The executors a merge or generalisation replaces: they go `fused` once the new one is active. */
function replaced(motivation: Motivation): string[] {
  return motivation.kind === 'merge' || motivation.kind === 'generalise' ? [...motivation.executors] : [];
}

async function markFused(settings: GeneratorSettings, names: string[], by: string): Promise<string[]> {
  if (names.length === 0) return [];
  const lifecycle = await settings.catalog.lifecycle();
  const fused: string[] = [];
  for (const name of names) {
    const executor = settings.catalog.get(name);
    if (!executor) continue;
    lifecycle.transition(`${name}@${executor.version}`, 'fused', `fused into ${by}`);
    fused.push(`${name}@${executor.version}`);
  }
  await lifecycle.save();
  return fused;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Stage 7, sign and install: only an approved draft (see
 * {@link approvalRefusal}), only with the person's own key from their key
 * store — never the release key, never a key the workspace does not trust.
 * The approved artefacts are written to `<executors>/<name>/` (with
 * `created_by = "synt:<run id>"` in the manifest), signed, verified against
 * the workspace's trusted keys, and the catalog loaded again so the
 * executor lands active. A merge or generalisation marks what it replaces
 * `fused`. Any failure removes what was written.
 */
export const installStage: Stage = {
  name: 'install',
  async run(draft, context) {
    const refusal = approvalRefusal(draft);
    if (refusal) return fix(refusal);
    const settings = context.settings;
    const artefacts = draft.review!.artefacts;
    const name = draft.spec!.name;
    const keyName = settings.keyName ?? 'default';
    if (keyName === RELEASE_KEY_NAME) return fix('the release key never signs a synthesised executor');
    const key = await settings.keyStore.load(keyName);
    if (settings.refusedKeyIds?.includes(key.keyId))
      return fix(`key "${keyName}" (${key.keyId}) is a release key: sign with your own key`);
    if (!settings.trustedKeys.some((trusted) => trusted.keyId === key.keyId))
      return fix(
        `your key "${keyName}" (${key.keyId}) is not trusted by this workspace: run \`metnos keys trust\` with its .pub, then approve again`,
      );
    const dir = join(settings.catalog.root, name);
    if (await exists(dir)) return fix(`${dir} exists already: nothing was written`);
    try {
      await writeExecutorFolder(dir, artefacts, { name, runId: context.runId });
      const signed = await signExecutor(dir, key);
      await verifyExecutor(dir, { trustedKeys: settings.trustedKeys });
      await settings.catalog.load();
      const row = settings.catalog
        .list()
        .find((entry) => entry.name === name && entry.version === signed.version);
      if (!settings.catalog.get(name) || !row)
        throw new Error(`${name} did not load: ${row?.reason ?? 'not in the catalog after loading'}`);
      const fused = await markFused(settings, replaced(draft.motivation), `${name} (synt:${context.runId})`);
      return {
        kind: 'done',
        note: `${name}@${signed.version} signed with ${key.keyId} and installed: ${row.state}${fused.length > 0 ? `; fused ${fused.join(', ')}` : ''}`,
        update: { installed: { name, version: signed.version, keyId: key.keyId, dir, state: row.state } },
        detail: { fused },
      };
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      await settings.catalog.load().catch(() => undefined);
      return fix(
        `installing ${name} failed, nothing kept: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  },
};
