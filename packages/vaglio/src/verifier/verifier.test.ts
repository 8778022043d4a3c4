import { MetnosError } from '@metnos/executor-sdk';
import { describe, expect, it } from 'vitest';
import { answer, failed, input, ok } from '../__fixtures__/verifier.ts';
import { aggregate } from './aggregate.ts';
import { BUILT_IN_PACKS } from './packs/index.ts';
import { defineRulePack } from './rule-pack.ts';
import type { Outcome, Rule, RulePack } from './types.ts';
import { VerificationBlocked } from './verification-blocked.ts';
import { createVerifier, VERIFIER_VERSION } from './verifier.ts';

/** A pack of rules that answer what they are told, to drive the aggregation table. */
function scripted(outcomes: Outcome[], version = '1.0.0'): RulePack {
  return defineRulePack({
    id: 'rules.scripted.v1',
    version,
    description: 'rules that answer as scripted',
    rules: outcomes.map(
      (outcome, index): Rule => ({
        id: `scripted.rule-${index + 1}`,
        description: `answers ${outcome}`,
        check: () => (outcome === 'pass' ? { outcome } : { outcome, reason: `scripted ${outcome}` }),
      }),
    ),
  });
}

const clean = input({
  rulePack: 'rules.scripted.v1',
  candidate: answer('notes.md says milk.'),
  evidence: [ok('step1', 'fs_read', { path: 'notes.md' }, { text: 'milk' })],
});

function run(outcomes: Outcome[], overrides = {}) {
  return createVerifier({ packs: [scripted(outcomes)] }).verify({ ...clean, ...overrides });
}

describe('verifier aggregation (seed 003, table 11.4)', () => {
  it('aggregates rule outcomes: any block → block, else any warn → warn, else pass', () => {
    const table: [Outcome[], Outcome][] = [
      [[], 'pass'],
      [['pass', 'pass'], 'pass'],
      [['pass', 'warn'], 'warn'],
      [['warn', 'warn'], 'warn'],
      [['block'], 'block'],
      [['warn', 'block', 'pass'], 'block'],
      [['block', 'warn'], 'block'],
    ];
    for (const [outcomes, expected] of table) {
      const trace = outcomes.map((outcome, index) => ({
        class: 'rules' as const,
        rule: `r${index}`,
        outcome,
      }));
      expect(aggregate(trace), outcomes.join(',')).toBe(expected);
    }
  });

  it('all pass: pass, emitted, no advisories', () => {
    const verdict = run(['pass', 'pass']);
    expect(verdict).toMatchObject({ outcome: 'pass', emit: true, advisories: [] });
    expect(verdict.reason).toBe(
      'pass: the schema, every rule of rules.scripted.v1@1.0.0 and every probe passed',
    );
  });

  it('any warn and no block: warn, emitted, one advisory per warning', () => {
    const verdict = run(['warn', 'pass', 'warn']);
    expect(verdict).toMatchObject({ outcome: 'warn', emit: true });
    expect(verdict.advisories).toEqual([
      { class: 'rules', rule: 'scripted.rule-1', reason: 'scripted warn' },
      { class: 'rules', rule: 'scripted.rule-3', reason: 'scripted warn' },
    ]);
    expect(verdict.reason).toBe('warn: scripted.rule-1: scripted warn; scripted.rule-3: scripted warn');
  });

  it('any block: block, not emitted, whatever warned', () => {
    const verdict = run(['warn', 'block']);
    expect(verdict).toMatchObject({ outcome: 'block', emit: false });
    expect(verdict.reason).toBe('block: scripted.rule-2: scripted block');
    expect(verdict.advisories).toHaveLength(1);
  });

  it('a probe counts like a rule: a warning probe makes a passing pack warn', () => {
    const verdict = run(['pass'], { candidate: answer('notes.md says milk, 250 ml.') });
    expect(verdict.outcome).toBe('warn');
    expect(verdict.advisories.map((advisory) => advisory.rule)).toEqual(['probe.hallucination']);
  });

  it('runs the classes in a fixed order: schema, the pack’s rules in their order, then the probes', () => {
    const verdict = run(['block', 'pass']);
    expect(verdict.trace.map((entry) => `${entry.class} ${entry.rule}`)).toEqual([
      'schema schema.input',
      'schema schema.candidate',
      'schema schema.pack',
      'rules scripted.rule-1',
      'rules scripted.rule-2',
      'probe probe.injection',
      'probe probe.hallucination',
      'probe probe.conflict',
      'probe probe.policy',
    ]);
  });

  it('a schema failure short-circuits: no business rule and no probe runs', () => {
    let called = 0;
    const counting = defineRulePack({
      id: 'rules.counting.v1',
      version: '1.0.0',
      description: 'counts its runs',
      rules: [
        {
          id: 'counting.rule',
          description: 'counts',
          check: () => {
            called++;
            return { outcome: 'pass' };
          },
        },
      ],
    });
    const verifier = createVerifier({ packs: [counting] });
    const verdict = verifier.verify({
      ...clean,
      rulePack: 'rules.counting.v1',
      candidate: { kind: 'answer' },
    });
    expect(verdict.outcome).toBe('block');
    expect(verdict.trace.map((entry) => entry.class)).toEqual(['schema', 'schema', 'schema']);
    expect(called).toBe(0);
    verifier.verify({ ...clean, rulePack: 'rules.counting.v1' });
    expect(called).toBe(1);
  });

  it('a rule that throws, answers a promise, or warns without a reason blocks (the verifier fails closed)', () => {
    const broken = defineRulePack({
      id: 'rules.broken.v1',
      version: '1.0.0',
      description: 'rules with bugs',
      rules: [
        {
          id: 'broken.throws',
          description: 'throws',
          check: () => {
            throw new Error('boom');
          },
        },
        {
          id: 'broken.async',
          description: 'async',
          check: (() => Promise.resolve({ outcome: 'pass' })) as never,
        },
        { id: 'broken.silent', description: 'no reason', check: () => ({ outcome: 'warn' }) as never },
      ],
    });
    const verdict = createVerifier({ packs: [broken] }).verify({ ...clean, rulePack: 'rules.broken.v1' });
    expect(verdict.trace.filter((entry) => entry.class === 'rules')).toEqual([
      { class: 'rules', rule: 'broken.throws', outcome: 'block', reason: 'the rule failed: boom' },
      {
        class: 'rules',
        rule: 'broken.async',
        outcome: 'block',
        reason: 'the rule answered neither pass, nor warn or block with a reason',
      },
      {
        class: 'rules',
        rule: 'broken.silent',
        outcome: 'block',
        reason: 'the rule answered neither pass, nor warn or block with a reason',
      },
    ]);
  });

  it('rules read frozen copies: one cannot change what the next reads, nor the caller’s objects', () => {
    const candidate = answer('notes.md says milk.');
    const tamper = defineRulePack({
      id: 'rules.tamper.v1',
      version: '1.0.0',
      description: 'tries to edit the candidate',
      rules: [
        {
          id: 'tamper.edit',
          description: 'edits',
          check: (context) => {
            (context.candidate as { message: string }).message = '';
            return { outcome: 'pass' };
          },
        },
        {
          id: 'tamper.read',
          description: 'reads',
          check: (context) => ({ outcome: 'pass', reason: String(context.candidate.message) }),
        },
      ],
    });
    const verdict = createVerifier({ packs: [tamper] }).verify({
      ...clean,
      rulePack: 'rules.tamper.v1',
      candidate,
    });
    expect(verdict.trace.find((entry) => entry.rule === 'tamper.edit')?.outcome).toBe('block');
    expect(verdict.trace.find((entry) => entry.rule === 'tamper.read')?.reason).toBe('notes.md says milk.');
    expect(candidate.message).toBe('notes.md says milk.');
    expect(Object.isFrozen(candidate)).toBe(false);
    expect(Object.isFrozen(clean.evidence[0]?.args)).toBe(false);
  });
});

describe('verifier reproducibility', () => {
  it('gives the same hash and trace for the same input, across verifiers and key orders', () => {
    const first = run(['warn', 'pass']);
    const again = run(['warn', 'pass']);
    const reordered = run(['warn', 'pass'], {
      candidate: { message: 'notes.md says milk.', kind: 'answer' },
      evidence: [
        {
          result: { content: { text: 'milk' }, ok: true },
          args: { path: 'notes.md' },
          tool: 'fs_read',
          id: 'step1',
        },
      ],
    });
    expect(first.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(again).toEqual(first);
    expect(reordered.hash).toBe(first.hash);
    expect(first.verifier).toBe(VERIFIER_VERSION);
    expect(first.pack).toEqual({ id: 'rules.scripted.v1', version: '1.0.0' });
  });

  it('gives another hash when the pack version, the candidate or its evidence changes', () => {
    const base = run(['pass']).hash;
    const nextVersion = createVerifier({ packs: [scripted(['pass'], '1.0.1')] }).verify(clean);
    expect(nextVersion.pack.version).toBe('1.0.1');
    expect(nextVersion.hash).not.toBe(base);
    expect(run(['pass'], { candidate: answer('notes.md says milk!') }).hash).not.toBe(base);
    expect(
      run(['pass'], { evidence: [ok('step1', 'fs_read', { path: 'notes.md' }, { text: 'oat milk' })] }).hash,
    ).not.toBe(base);
  });

  it('hashes evidence by meaning: a default left out equals the default written', () => {
    const written = run(['pass'], {
      evidence: [
        ok(
          'step1',
          'fs_read',
          { path: 'notes.md' },
          { text: 'milk' },
          { sideEffects: false, approved: true },
        ),
      ],
    });
    expect(written.hash).toBe(run(['pass']).hash);
  });

  it('leaves the isolation record of a result out: the same turn hashes alike on another machine', () => {
    const [read] = clean.evidence;
    const isolated = {
      ...read!,
      result: { ...read!.result, isolation: { tier: 'bubblewrap', layers: ['process'] } },
    };
    expect(run(['pass'], { evidence: [isolated] }).hash).toBe(run(['pass']).hash);
  });

  it('verdicts of the built-in packs are stable for a turn replayed', () => {
    const turn = input({
      candidate: answer('I saved notes.md.'),
      evidence: [failed('step1', 'fs_write', { path: 'notes.md' }, 'Timeout', { sideEffects: true })],
    });
    const verdicts = [createVerifier().verify(turn), createVerifier({ packs: BUILT_IN_PACKS }).verify(turn)];
    expect(verdicts[1]).toEqual(verdicts[0]);
    expect(verdicts[0]?.outcome).toBe('block');
  });
});

describe('VerificationBlocked', () => {
  it('release returns a passing or warning verdict and throws the typed error on a block', () => {
    const verifier = createVerifier({ packs: [scripted(['warn', 'block'])] });
    expect(createVerifier({ packs: [scripted(['warn'])] }).release(clean).outcome).toBe('warn');
    let thrown: unknown;
    try {
      verifier.release(clean);
    } catch (error) {
      thrown = error;
    }
    expect(VerificationBlocked.isInstance(thrown)).toBe(true);
    expect(MetnosError.isInstance(thrown)).toBe(true);
    const blocked = thrown as VerificationBlocked;
    const verdict = verifier.verify(clean);
    expect(blocked.code).toBe('verifier_blocked');
    expect(blocked.name).toBe('VerificationBlocked');
    expect(blocked.message).toBe(
      'the verifier blocked the candidate (rules.scripted.v1@1.0.0): scripted.rule-2: scripted block',
    );
    expect(blocked.verdict).toEqual(verdict);
    expect(blocked.trace).toEqual(verdict.trace);
    expect(blocked.hash).toBe(verdict.hash);
    expect([blocked.rulePack, blocked.packVersion]).toEqual(['rules.scripted.v1', '1.0.0']);
    expect(blocked.blocking).toEqual([
      { class: 'rules', rule: 'scripted.rule-2', outcome: 'block', reason: 'scripted block' },
    ]);
  });

  it('is recognised by its Symbol.for marker, not by class identity', () => {
    const foreign = Object.assign(new Error('blocked'), {
      [Symbol.for('metnos.error')]: true,
      [Symbol.for('metnos.error.VerificationBlocked')]: true,
    });
    expect(VerificationBlocked.isInstance(foreign)).toBe(true);
    expect(VerificationBlocked.isInstance(new MetnosError({ code: 'other', message: 'x' }))).toBe(false);
    expect(VerificationBlocked.isInstance(new Error('x'))).toBe(false);
  });

  it('names an unknown pack with an unknown version', () => {
    expect(() => createVerifier().release({ ...clean, rulePack: 'rules.gone.v2' })).toThrow(
      'the verifier blocked the candidate (rules.gone.v2@unknown): schema.pack: no rule pack "rules.gone.v2" is registered',
    );
  });
});
