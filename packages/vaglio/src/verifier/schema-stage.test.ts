import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answer, entryOf, failed, input, ok } from '../__fixtures__/verifier.ts';
import { createVerifier } from './verifier.ts';

const verifier = createVerifier();
const readNotes = ok('step1', 'fs_read', { path: 'notes.md' }, { text: 'buy milk' });

function deep(levels: number): unknown {
  let value: unknown = 'x';
  for (let level = 0; level < levels; level++) value = { inner: value };
  return value;
}

describe('verifier schema class', () => {
  it('passes an answer that matches its shape, with evidence and a known pack', () => {
    const verdict = verifier.verify(
      input({ candidate: answer('notes.md says: buy milk'), evidence: [readNotes] }),
    );
    expect(verdict.trace.filter((entry) => entry.class === 'schema')).toEqual([
      { class: 'schema', rule: 'schema.input', outcome: 'pass' },
      { class: 'schema', rule: 'schema.candidate', outcome: 'pass' },
      { class: 'schema', rule: 'schema.pack', outcome: 'pass' },
    ]);
  });

  it('blocks a candidate without a kind, of an unknown kind, or off its shape', () => {
    const reasons = [
      { message: 'hi' },
      { kind: 'decision', message: 'hi' },
      { kind: 'answer', message: 42 },
      { kind: 'answer', message: 'hi', extra: true },
      { kind: 'mail', message: 'hi', mail: { to: [], subject: 's', body: 'b' } },
    ].map((candidate) => {
      const verdict = verifier.verify(input({ candidate }));
      expect(verdict.outcome).toBe('block');
      return entryOf(verdict, 'schema.candidate').reason;
    });
    expect(reasons[0]).toBe('the candidate needs a kind (answer and mail)');
    expect(reasons[1]).toBe('unknown candidate kind "decision" (known: answer and mail)');
    expect(reasons[2]).toMatch(/^the answer candidate does not match its shape: message: /);
    expect(reasons[3]).toMatch(/extra/);
    expect(reasons[4]).toMatch(/^the mail candidate does not match its shape: mail\.to: /);
  });

  it('blocks evidence off its shape, with an id twice, or nested too deep', () => {
    const cases: [unknown, RegExp][] = [
      [[{ id: 'step1', tool: 'fs_read' }], /^the evidence does not match its shape: 0\.result: /],
      [[{ id: 'step 1', tool: 'fs_read', result: { ok: true } }], /0\.id/],
      [[readNotes, readNotes], /^evidence ids appear twice: step1$/],
      [[ok('step1', 'fs_read', {}, deep(70))], /^the evidence nests deeper than 64 levels$/],
      ['step1', /^evidence must be a list of step results$/],
    ];
    for (const [evidence, reason] of cases) {
      const verdict = verifier.verify(input({ candidate: answer('hi'), evidence: evidence as never }));
      expect(verdict.outcome).toBe('block');
      expect(entryOf(verdict, 'schema.input').reason).toMatch(reason);
    }
  });

  it('blocks an unknown pack, and a pack that does not read the candidate kind', () => {
    const unknown = verifier.verify(input({ rulePack: 'rules.nothing.v1', candidate: answer('hi') }));
    expect(unknown.pack).toEqual({ id: 'rules.nothing.v1', version: null });
    expect(entryOf(unknown, 'schema.pack')).toMatchObject({
      outcome: 'block',
      reason:
        'no rule pack "rules.nothing.v1" is registered (known: rules.answer.v1, rules.files.v1 and rules.mail.v1)',
    });
    const wrongKind = verifier.verify(input({ rulePack: 'rules.mail.v1', candidate: answer('hi') }));
    expect(entryOf(wrongKind, 'schema.pack').reason).toBe('rules.mail.v1 reads mail candidates, not answer');
  });

  it('checks candidates of kinds added in the settings against their own schema', () => {
    const withTicket = createVerifier({
      kinds: {
        ticket: z.object({
          kind: z.literal('ticket'),
          message: z.string(),
          severity: z.enum(['low', 'high']),
        }),
      },
    });
    const good = withTicket.verify(
      input({ candidate: { kind: 'ticket', message: 'Opened.', severity: 'low' } }),
    );
    expect(entryOf(good, 'schema.candidate').outcome).toBe('pass');
    const bad = withTicket.verify(
      input({ candidate: { kind: 'ticket', message: 'Opened.', severity: 'urgent' } }),
    );
    expect(entryOf(bad, 'schema.candidate').reason).toMatch(
      /^the ticket candidate does not match its shape: severity: /,
    );
  });

  it('refuses to replace a built-in kind or to take a kind without a schema', () => {
    expect(() => createVerifier({ kinds: { answer: z.object({ kind: z.literal('answer') }) } })).toThrow(
      'kinds: "answer" is built in and cannot be replaced',
    );
    expect(() => createVerifier({ kinds: { ticket: {} as z.ZodType } })).toThrow(
      'kinds: "ticket" needs a zod schema',
    );
  });

  it('fills evidence defaults: a step without sideEffects or approved is a read that was approved', () => {
    const verdict = verifier.verify(
      input({
        candidate: answer('I saved notes.md'),
        evidence: [ok('step1', 'fs_write', { path: 'notes.md' })],
      }),
    );
    expect(entryOf(verdict, 'answer.claimed-action').outcome).toBe('block');
    expect(entryOf(verdict, 'probe.policy').outcome).toBe('pass');
  });

  it('also blocks when failed evidence is only shaped wrong in its error', () => {
    const broken = { ...failed('step1', 'fs_read', {}, 'NotFound'), result: { ok: false, error: 'gone' } };
    const verdict = verifier.verify(input({ candidate: answer('hi'), evidence: [broken as never] }));
    expect(entryOf(verdict, 'schema.input').reason).toMatch(/0\.result\.error/);
  });
});
