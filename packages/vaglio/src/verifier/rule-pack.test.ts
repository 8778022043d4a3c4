import { describe, expect, it } from 'vitest';
import { VaglioSettingsError } from '../errors.ts';
import { BUILT_IN_PACKS } from './packs/index.ts';
import { createRulePackRegistry, defineRulePack } from './rule-pack.ts';
import type { RulePack } from './types.ts';
import { createVerifier } from './verifier.ts';

const rule = {
  id: 'invoice.total',
  description: 'the total is grounded',
  check: () => ({ outcome: 'pass' as const }),
};
const pack: RulePack = { id: 'rules.invoice.v1', version: '1.0.0', description: 'invoices', rules: [rule] };

function problem(changes: Partial<RulePack> | Record<string, unknown>): string {
  try {
    defineRulePack({ ...pack, ...changes } as RulePack);
  } catch (error) {
    if (VaglioSettingsError.isInstance(error) && error.setting === 'packs') return error.message;
  }
  return 'accepted';
}

describe('rule packs', () => {
  it('accepts a well-formed pack and freezes it', () => {
    const defined = defineRulePack(pack);
    expect(Object.isFrozen(defined)).toBe(true);
    expect(Object.isFrozen(defined.rules)).toBe(true);
  });

  it('refuses ids, versions and rules a verdict could not name unambiguously', () => {
    expect(problem({ id: 'invoice' })).toBe(
      'invoice: the id must look like rules.<name>.v<major>, e.g. rules.files.v1',
    );
    expect(problem({ version: 'one' })).toBe(
      'rules.invoice.v1: version "one" is not a semantic version such as 1.0.0',
    );
    expect(problem({ version: '2.0.0' })).toBe(
      "rules.invoice.v1: version 2.0.0 does not match the id's major version v1",
    );
    expect(problem({ rules: [] })).toBe('rules.invoice.v1: a pack needs at least one rule');
    expect(problem({ rules: [rule, rule] })).toBe('rules.invoice.v1: rule id "invoice.total" appears twice');
    expect(problem({ rules: [{ ...rule, id: 'probe.mine' }] })).toBe(
      'rules.invoice.v1: rule id "probe.mine": schema.* and probe.* belong to the verifier',
    );
    expect(problem({ rules: [{ ...rule, id: 'Total' }] })).toMatch(/must look like "files.path-in-evidence"/);
  });

  it('keeps one version per id in a registry; the verifier selects packs by id', () => {
    const registry = createRulePackRegistry(BUILT_IN_PACKS);
    expect(registry.ids()).toEqual(['rules.answer.v1', 'rules.files.v1', 'rules.mail.v1']);
    registry.register(pack);
    expect(() => registry.register({ ...pack, version: '1.1.0' })).toThrow(
      'rules.invoice.v1: already registered (version 1.0.0); a new major version needs a new id',
    );
    const verifier = createVerifier({ packs: registry });
    expect(verifier.packs).toBe(registry);
    const verdict = verifier.verify({
      rulePack: 'rules.invoice.v1',
      candidate: { kind: 'answer', message: 'Total: 12.' },
      evidence: [],
    });
    expect(verdict.trace.map((entry) => entry.rule)).toContain('invoice.total');
  });
});
