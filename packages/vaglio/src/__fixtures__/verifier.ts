import type { EvidenceInput, VerifierVerdict, VerifyInput } from '../index.ts';

/** A successful step: `ok('step1', 'fs_read', { path: 'a.md' }, { text: 'hi' })`. */
export function ok(
  id: string,
  tool: string,
  args: unknown,
  content?: unknown,
  extra: Partial<EvidenceInput> = {},
): EvidenceInput {
  return { id, tool, args, result: { ok: true, content }, ...extra };
}

/** A failed step with an error class: `failed('step1', 'fs_read', { path: 'a.md' }, 'NotFound')`. */
export function failed(
  id: string,
  tool: string,
  args: unknown,
  errorClass: string,
  extra: Partial<EvidenceInput> = {},
): EvidenceInput {
  return {
    id,
    tool,
    args,
    result: { ok: false, error: { class: errorClass, message: `${tool} failed` } },
    ...extra,
  };
}

/** A plain answer candidate. */
export function answer(message: string, cites?: string[]) {
  return cites ? { kind: 'answer', message, cites } : { kind: 'answer', message };
}

/** The input of one verification, with the answer pack unless told otherwise. */
export function input(overrides: Partial<VerifyInput> & Pick<VerifyInput, 'candidate'>): VerifyInput {
  return { rulePack: 'rules.answer.v1', evidence: [], ...overrides };
}

/** The trace entry of one rule, or a failure naming the rules that ran. */
export function entryOf(verdict: VerifierVerdict, rule: string) {
  const found = verdict.trace.find((entry) => entry.rule === rule);
  if (!found)
    throw new Error(
      `${rule} did not run; the trace holds ${verdict.trace.map((entry) => entry.rule).join(', ')}`,
    );
  return found;
}

/** The outcome one rule gave. */
export function outcomeOf(verdict: VerifierVerdict, rule: string) {
  return entryOf(verdict, rule).outcome;
}
