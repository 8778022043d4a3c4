import { SPECIFICATION_SYSTEM, specificationPrompt, specificationRetry } from './prompts.ts';
import { checkSpecification, readModelJson, type Specification, specificationSchema } from './spec-schema.ts';
import type { Stage, StageContext } from './types.ts';

/** How many drafts the wise tier gets before the stage asks the person for a fix. */
const ATTEMPTS = 2;

function existingNames(context: StageContext): Set<string> {
  return new Set(context.executors().map((executor) => executor.name));
}

/**
 * Stage 2, specification: the wise tier drafts name, summary, input and
 * output schemas, error classes, a profile guess and birth cases, as one
 * JSON object parsed with a schema and checked (never trusted raw). The
 * stage then waits for the person: approve the draft, or send an amended
 * one, which is checked the same way.
 */
export const specificationStage: Stage = {
  name: 'specification',
  async run(draft, context) {
    const existing = existingNames(context);
    const edited = context.decision?.spec;
    if (edited) {
      const checked = checkSpecification(edited, { existing });
      if (!checked.ok)
        return { kind: 'suspend', waitingFor: 'spec', reason: `the amended spec: ${checked.reason}` };
      return {
        kind: 'done',
        note: `spec of ${edited.name} written by ${context.decision!.by}`,
        update: { spec: edited },
      };
    }
    if (draft.spec && context.decision)
      return { kind: 'done', note: `spec of ${draft.spec.name} approved by ${context.decision.by}` };
    const prompt = specificationPrompt(draft.motivation, context.executors());
    let refusal = '';
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const answer = await context.ask(
        SPECIFICATION_SYSTEM,
        refusal ? specificationRetry(prompt, refusal) : prompt,
      );
      const parsed = readModelJson<Specification>(answer, specificationSchema);
      const checked = parsed.ok ? checkSpecification(parsed.value, { existing }) : parsed;
      if (checked.ok)
        return {
          kind: 'suspend',
          waitingFor: 'spec',
          reason: `approve the spec of ${checked.value.name} drafted by the wise tier, or send an amended one`,
          update: { spec: checked.value },
        };
      refusal = checked.reason;
    }
    return {
      kind: 'suspend',
      waitingFor: 'fix',
      reason: `the wise tier's spec was refused twice (${refusal}): send a spec, approve to ask again, or reject`,
    };
  },
};
