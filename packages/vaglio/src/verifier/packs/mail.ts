import { listSome, quote } from '../reasons.ts';
import { defineRulePack } from '../rule-pack.ts';
import type { MailCandidate } from '../shapes.ts';
import { placeholdersIn } from '../text-patterns.ts';
import type { Rule, VerificationContext } from '../types.ts';

/** Template leftovers a recipient or a mail text must not hold. */
const TEMPLATE_MARKS =
  /\$\{[^}]*\}?|\{\{[^}]*\}\}|<<[^>]*>>|\[[^\]@]*\]|<[^@<>]*>|\b(?:TODO|TBD|FIXME|XXX)\b/;
/** `ada@example.org`, or `Ada Lovelace <ada@example.org>`. */
const ADDRESS =
  /^(?:[^<>@]*<\s*)?([^\s@<>()[\]{},;:"]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?:\s*>)?$/;

function mailOf(context: VerificationContext): MailCandidate['mail'] {
  return (context.candidate as MailCandidate).mail;
}

function recipientsOf(context: VerificationContext): string[] {
  const { to, cc = [], bcc = [] } = mailOf(context);
  return [...to, ...cc, ...bcc];
}

function isTemplate(text: string): boolean {
  return text.trim() === '' || TEMPLATE_MARKS.test(text);
}

const recipientsResolved: Rule = {
  id: 'mail.recipients-resolved',
  description: 'no recipient is empty or a template leftover (${…}, {{…}}, <name>, [recipient], TODO)',
  check: (context) => {
    const open = recipientsOf(context).filter(isTemplate);
    return open.length === 0
      ? { outcome: 'pass' }
      : { outcome: 'block', reason: `unresolved recipients: ${listSome(open.map(quote))}` };
  },
};

const recipientsValid: Rule = {
  id: 'mail.recipients-valid',
  description: 'every recipient is an email address, bare or as `Name <address>`',
  check: (context) => {
    const invalid = recipientsOf(context).filter(
      (recipient) => !isTemplate(recipient) && !ADDRESS.test(recipient.trim()),
    );
    return invalid.length === 0
      ? { outcome: 'pass' }
      : { outcome: 'block', reason: `not email addresses: ${listSome(invalid.map(quote))}` };
  },
};

const recipientsGrounded: Rule = {
  id: 'mail.recipients-grounded',
  description: 'every address appears in the request, the runtime values or the evidence (none is invented)',
  check: (context) => {
    const invented = recipientsOf(context)
      .map((recipient) => ADDRESS.exec(recipient.trim())?.[1])
      .filter((address): address is string => address !== undefined && !context.sources.mentions(address));
    return invented.length === 0
      ? { outcome: 'pass' }
      : {
          outcome: 'block',
          reason: `addresses found nowhere in the request or evidence: ${listSome(invented.map(quote))}`,
        };
  },
};

const textResolved: Rule = {
  id: 'mail.text-resolved',
  description: 'subject and body hold no unresolved ${…} placeholder',
  check: (context) => {
    const { subject, body } = mailOf(context);
    const found = [...new Set([...placeholdersIn(subject), ...placeholdersIn(body)])];
    return found.length === 0
      ? { outcome: 'pass' }
      : { outcome: 'block', reason: `unresolved placeholders in the mail: ${listSome(found.map(quote))}` };
  },
};

const subjectPresent: Rule = {
  id: 'mail.subject-present',
  description: 'the mail has a subject',
  check: (context) =>
    mailOf(context).subject.trim()
      ? { outcome: 'pass' }
      : { outcome: 'warn', reason: 'the mail has no subject' },
};

/**
 * `rules.mail.v1`, for `mail` candidates: resolved, well-formed recipients
 * that come from the request or the evidence, and a resolved subject and body.
 *
 * @example
 * verifier.verify({ rulePack: 'rules.mail.v1', candidate: { kind: 'mail', message: 'Sending.', mail }, evidence, request });
 */
export const mailRules = defineRulePack({
  id: 'rules.mail.v1',
  version: '1.0.0',
  description: 'mail recipients are resolved, valid and grounded; subject and body are resolved',
  kinds: ['mail'],
  rules: [recipientsResolved, recipientsValid, recipientsGrounded, textResolved, subjectPresent],
});
