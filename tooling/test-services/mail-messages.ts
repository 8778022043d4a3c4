/** One message to put in a test mailbox. */
export interface TestMessage {
  /** The folder it sits in (`INBOX`, `Junk`, `Archive`, `Sent`, `Trash`). Default `INBOX`. */
  folder?: string;
  from: string;
  to: string;
  subject: string;
  /** ISO 8601 instant. */
  date: string;
  body: string;
  /** Extra headers, e.g. `{ 'X-Spam-Flag': 'YES' }`. */
  headers?: Record<string, string>;
  /** Read (`\Seen`). Default false: unread. */
  seen?: boolean;
  flagged?: boolean;
  /** Attached files: sent base64-encoded in a multipart/mixed message. */
  attachments?: Array<{ name: string; type: string; content: string | Buffer }>;
  /** The Message-ID without angle brackets. Default: made from the index. */
  messageId?: string;
  /** The whole RFC 5322 text as is (CRLF line ends), for odd encodings; the other fields are then only labels. */
  raw?: string;
}

/** What kind of mail a generated message is, for assertions. */
export type GeneratedKind = 'personal' | 'newsletter' | 'spam' | 'ham';

const PEOPLE = [
  'Ada Rossi <ada@rossi.example>',
  'Bruno Neri <bruno.neri@work.example>',
  'Chiara Fabbri <chiara@fabbri.example>',
  'Dario Conti <dario@conti.example>',
  'Elena Moretti <elena.moretti@work.example>',
];
const ME = 'Me <me@metnos.test>';
const PERSONAL_SUBJECTS = [
  'Dinner on Saturday?',
  'Minutes of the Monday meeting',
  'Photos from the trip',
  'Invoice 2026-114 attached',
  'Can you review the draft?',
  'Train tickets for Milan',
  'Re: budget for Q4',
  'Plumber coming Thursday',
  'Book recommendation',
  'Lunch tomorrow',
  'The keys are under the mat',
  'Quarterly report',
  'Birthday present for Luca',
  'Re: holiday dates',
  'Team offsite agenda',
  'Password for the Wi-Fi at the cottage',
];
const NEWSLETTERS = [
  { from: 'Il Post <newsletter@ilpost.example>', subject: 'Le notizie di oggi', list: 'ilpost' },
  { from: 'Rail Deals <deals@rail.example>', subject: 'Weekend fares from 19 €', list: 'rail-deals' },
  { from: 'Garden Club <club@garden.example>', subject: 'November in the garden', list: 'garden' },
  { from: 'Dev Weekly <weekly@dev.example>', subject: 'Issue 412: faster builds', list: 'devweekly' },
  { from: 'Bookshop <news@books.example>', subject: 'New arrivals this week', list: 'books' },
  { from: 'City Museum <info@museum.example>', subject: 'Exhibitions in December', list: 'museum' },
  { from: 'Running Club <hello@run.example>', subject: 'Sunday long run route', list: 'run' },
  { from: 'Dev Weekly <weekly@dev.example>', subject: 'Issue 413: type-safe SQL', list: 'devweekly' },
];
const SPAM = [
  {
    from: 'Prize Dept <winner@lucky-prize.example>',
    subject: '[SPAM] You have WON a brand new phone',
    score: 9.8,
  },
  {
    from: 'Pharmacy <sales@cheap-pills.example>',
    subject: '[SPAM] Cheap meds, no prescription',
    score: 12.1,
  },
  {
    from: 'Bank Security <security@bank-alerts.example>',
    subject: 'Your account has been suspended',
    score: 7.3,
  },
  {
    from: 'Crypto Gains <invest@moon-coin.example>',
    subject: 'Turn 100 € into 10.000 € this week',
    score: 8.4,
  },
  { from: 'Dating <hi@lonely-hearts.example>', subject: '[SPAM] Someone near you wants to meet', score: 6.9 },
  {
    from: 'Shipping <track@parcel-notice.example>',
    subject: 'Your parcel is waiting: pay 1.99 €',
    score: 7.7,
  },
  { from: 'Loans <offer@fast-loans.example>', subject: 'Pre-approved loan of 50.000 €', score: 10.2 },
  { from: 'Lottery <claim@euro-lotto.example>', subject: '[SPAM] Claim your lottery winnings', score: 11.5 },
  { from: 'SEO Expert <seo@rank-first.example>', subject: 'First page of Google guaranteed', score: 5.6 },
  { from: 'Watches <sale@replica-watch.example>', subject: 'Luxury watches 90% off', score: 8.8 },
];
const HAM = [
  { from: 'Bruno Neri <bruno.neri@work.example>', subject: 'Server maintenance tonight' },
  { from: 'Chiara Fabbri <chiara@fabbri.example>', subject: 'Recipe for the lasagne' },
  { from: 'Ada Rossi <ada@rossi.example>', subject: 'Concert tickets' },
  { from: 'Dario Conti <dario@conti.example>', subject: 'Moving the call to 3 pm' },
];

function spamHeaders(score: number): Record<string, string> {
  return {
    'X-Spam-Flag': 'YES',
    'X-Spam-Status': `Yes, score=${score.toFixed(1)} required=5.0 tests=BAYES_99,HTML_MESSAGE,RDNS_NONE,URIBL_BLACK autolearn=no version=3.4.6`,
    'X-Spam-Level': '*'.repeat(Math.floor(score)),
  };
}

function hamHeaders(): Record<string, string> {
  return {
    'X-Spam-Flag': 'NO',
    'X-Spam-Status':
      'No, score=-1.2 required=5.0 tests=BAYES_00,DKIM_SIGNED,DKIM_VALID autolearn=ham version=3.4.6',
  };
}

/**
 * A mailbox of 42 generated messages in the shapes real mail has: 16
 * personal messages (two with attachments, some read), 8 newsletters with
 * `List-Unsubscribe` and `Precedence: bulk`, 10 spam marked the way
 * SpamAssassin marks it (`X-Spam-Flag: YES`, `X-Spam-Status: Yes, score=…
 * required=5.0`, `X-Spam-Level: *******`, a `[SPAM]` subject on some), 4 ham
 * with `X-Spam-Status: No, score=-1.2`, two archived, one sent and one in
 * Junk already. Every message carries `X-Test-Kind` so tests can count.
 *
 * @example
 * const server = await startMailServer({ messages: generatedMailbox() });
 */
export function generatedMailbox(): Array<TestMessage & { kind: GeneratedKind }> {
  const messages: Array<TestMessage & { kind: GeneratedKind }> = [];
  const day = (index: number, hour = 9) =>
    new Date(Date.UTC(2026, 10, 1 + (index % 20), hour, (index * 7) % 60)).toISOString();
  PERSONAL_SUBJECTS.forEach((subject, index) => {
    const attachments =
      index === 3
        ? [
            {
              name: 'invoice-2026-114.pdf',
              type: 'application/pdf',
              content: Buffer.from('%PDF-1.4\n% test invoice\n'),
            },
          ]
        : index === 2
          ? [
              { name: 'beach.jpg', type: 'image/jpeg', content: Buffer.alloc(2048, 0xff) },
              { name: 'notes.txt', type: 'text/plain', content: 'Bring sunscreen.\n' },
            ]
          : undefined;
    messages.push({
      kind: 'personal',
      from: PEOPLE[index % PEOPLE.length]!,
      to: ME,
      subject,
      date: day(index),
      body: `Hi,\n\n${subject.replace(/^Re: /, '')} — see below.\nThis is message ${index + 1} of the test mailbox.\n\nBye`,
      seen: index % 3 === 0,
      flagged: index === 4,
      ...(attachments ? { attachments } : {}),
    });
  });
  NEWSLETTERS.forEach((letter, index) => {
    messages.push({
      kind: 'newsletter',
      from: letter.from,
      to: ME,
      subject: letter.subject,
      date: day(index + 3, 6),
      body: `${letter.subject}\n\nRead it online. To stop receiving these, unsubscribe.`,
      headers: {
        'List-Unsubscribe': `<https://${letter.list}.example/unsubscribe?u=42>, <mailto:unsubscribe@${letter.list}.example>`,
        'List-Id': `${letter.list} <${letter.list}.list.example>`,
        Precedence: 'bulk',
      },
    });
  });
  SPAM.forEach((spam, index) => {
    messages.push({
      kind: 'spam',
      from: spam.from,
      to: ME,
      subject: spam.subject,
      date: day(index + 5, 2),
      body: `Dear customer,\n\n${spam.subject}! Click here now: http://spam.example/offer/${index}\n`,
      headers: spamHeaders(spam.score),
    });
  });
  HAM.forEach((ham, index) => {
    messages.push({
      kind: 'ham',
      from: ham.from,
      to: ME,
      subject: ham.subject,
      date: day(index + 10, 14),
      body: `${ham.subject}.\n\nSee you.`,
      headers: hamHeaders(),
      seen: index % 2 === 0,
    });
  });
  messages.push(
    {
      kind: 'personal',
      folder: 'Archive',
      from: PEOPLE[0]!,
      to: ME,
      subject: 'Old thread about the garden',
      date: day(0, 8),
      body: 'Archived.',
      seen: true,
    },
    {
      kind: 'personal',
      folder: 'Archive',
      from: PEOPLE[1]!,
      to: ME,
      subject: 'Contract signed',
      date: day(1, 8),
      body: 'Archived too.',
      seen: true,
    },
    {
      kind: 'personal',
      folder: 'Sent',
      from: ME,
      to: PEOPLE[2]!,
      subject: 'Re: Photos from the trip',
      date: day(2, 20),
      body: 'Lovely photos!',
      seen: true,
    },
    {
      kind: 'spam',
      folder: 'Junk',
      from: 'Casino <vip@casino-royale.example>',
      subject: '[SPAM] 200 free spins',
      to: ME,
      date: day(4, 3),
      body: 'Play now.',
      headers: spamHeaders(14.2),
    },
  );
  return messages.map((message, index) => ({
    ...message,
    messageId: `test-${index + 1}@metnos.test`,
    headers: { ...message.headers, 'X-Test-Kind': message.kind },
  }));
}

function encodeWords(value: string): string {
  // RFC 2047 for non-ASCII header text
  return /[^\x20-\x7e]/.test(value) ? `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=` : value;
}

function base64Lines(content: string | Buffer): string {
  const text = Buffer.from(content).toString('base64');
  return text.replace(/.{1,76}/g, (line) => `${line}\r\n`);
}

/**
 * The RFC 5322 text of a test message (CRLF line ends): plain text, or
 * multipart/mixed with base64 attachments.
 *
 * @example
 * const raw = messageText({ from: 'a@b.example', to: 'c@d.example', subject: 'Hi', date, body: 'Hello' }, 1);
 */
export function messageText(message: TestMessage, index: number): string {
  if (message.raw !== undefined) return message.raw;
  const headers: string[] = [
    `From: ${encodeWords(message.from)}`,
    `To: ${encodeWords(message.to)}`,
    `Subject: ${encodeWords(message.subject)}`,
    `Date: ${new Date(message.date).toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${message.messageId ?? `generated-${index}@metnos.test`}>`,
    'MIME-Version: 1.0',
    ...Object.entries(message.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
  ];
  const body = message.body.replace(/\r?\n/g, '\r\n');
  if (!message.attachments?.length) {
    headers.push('Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit');
    return `${headers.join('\r\n')}\r\n\r\n${body}\r\n`;
  }
  const boundary = `=_metnos_${index}_boundary`;
  headers.push(`Content-Type: multipart/mixed; boundary="${boundary}"`);
  const parts = [
    `--${boundary}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${body}\r\n`,
    ...message.attachments.map(
      (file) =>
        `--${boundary}\r\nContent-Type: ${file.type}; name="${file.name}"\r\nContent-Disposition: attachment; filename="${file.name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(file.content)}`,
    ),
  ];
  return `${headers.join('\r\n')}\r\n\r\nThis is a multi-part message in MIME format.\r\n\r\n${parts.join('')}--${boundary}--\r\n`;
}
