import { describe, expect, it } from 'vitest';
import { entryOf, input, ok, outcomeOf } from '../../__fixtures__/verifier.ts';
import { createVerifier } from '../verifier.ts';

const verifier = createVerifier();
const contacts = ok('step1', 'contacts_find', { name: 'Bob' }, { email: 'bob@example.org' });

function mail(
  fields: { to?: string[]; cc?: string[]; bcc?: string[]; subject?: string; body?: string } = {},
) {
  return {
    kind: 'mail',
    message: 'Ready to send.',
    mail: { to: ['bob@example.org'], subject: 'Minutes', body: 'Hi Bob, the minutes.', ...fields },
  };
}

function check(candidate: object, request = 'mail the minutes to Bob') {
  return verifier.verify(input({ rulePack: 'rules.mail.v1', candidate, evidence: [contacts], request }));
}

describe('rules.mail.v1', () => {
  it('passes a mail whose recipients come from the evidence or the request', () => {
    const verdict = check(
      mail({ to: ['Bob <bob@example.org>'], cc: ['ada@example.org'] }),
      'cc ada@example.org',
    );
    for (const rule of ['mail.recipients-resolved', 'mail.recipients-valid', 'mail.recipients-grounded'])
      expect(outcomeOf(verdict, rule)).toBe('pass');
  });

  it('mail.recipients-resolved blocks template leftovers among recipients', () => {
    for (const recipient of ['${SLOT:email_1}', '{{bob}}', '<recipient>', '[name]', 'TODO', ' '])
      expect(outcomeOf(check(mail({ to: [recipient] })), 'mail.recipients-resolved')).toBe('block');
    expect(entryOf(check(mail({ bcc: ['${step1.content.email}'] })), 'mail.recipients-resolved').reason).toBe(
      'unresolved recipients: "${step1.content.email}"',
    );
  });

  it('mail.recipients-valid blocks a recipient that is not an address', () => {
    expect(entryOf(check(mail({ to: ['Bob'] })), 'mail.recipients-valid')).toMatchObject({
      outcome: 'block',
      reason: 'not email addresses: "Bob"',
    });
    expect(outcomeOf(check(mail({ to: ['bob@localhost'] })), 'mail.recipients-valid')).toBe('block');
  });

  it('mail.recipients-grounded blocks an address found nowhere in the request or evidence', () => {
    expect(entryOf(check(mail({ to: ['robert@example.com'] })), 'mail.recipients-grounded')).toMatchObject({
      outcome: 'block',
      reason: 'addresses found nowhere in the request or evidence: "robert@example.com"',
    });
  });

  it('mail.text-resolved blocks placeholders in subject or body; mail.subject-present warns on no subject', () => {
    expect(outcomeOf(check(mail({ body: 'Hi ${FILLER:name}' })), 'mail.text-resolved')).toBe('block');
    expect(outcomeOf(check(mail()), 'mail.text-resolved')).toBe('pass');
    expect(entryOf(check(mail({ subject: '' })), 'mail.subject-present')).toMatchObject({
      outcome: 'warn',
      reason: 'the mail has no subject',
    });
  });
});
