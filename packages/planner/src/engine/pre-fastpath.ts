import type { Language } from './terminator.ts';

/** What the pre fast-path knows about the turn. */
export interface PreFastpathContext {
  now: Date;
  actor: string;
  timeZone?: string;
  language: Language;
}

interface Pattern {
  name: string;
  test: RegExp;
  answer(context: PreFastpathContext): string;
}

const time = (context: PreFastpathContext) =>
  new Intl.DateTimeFormat(context.language === 'it' ? 'it-IT' : 'en-GB', {
    hour: '2-digit',
    minute: '2-digit',
    timeZone: context.timeZone,
  }).format(context.now);
const date = (context: PreFastpathContext) =>
  new Intl.DateTimeFormat(context.language === 'it' ? 'it-IT' : 'en-GB', {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: context.timeZone,
  }).format(context.now);

const PATTERNS: Pattern[] = [
  {
    name: 'time',
    test: /^\s*(what(?:'s| is) the time|what time is it|time\??|che or[ae] (?:sono|è|e)|che ora è|ora\??)\s*(now|adesso|ora)?\s*[?!.]*\s*$/i,
    answer: (context) =>
      context.language === 'it' ? `Sono le ${time(context)}.` : `It is ${time(context)}.`,
  },
  {
    name: 'date',
    test: /^\s*(what(?:'s| is) (?:the date|today(?:'s date)?)|what day is (?:it|today)|today'?s date|che giorno è(?: oggi)?|che giorno e(?: oggi)?|che data è(?: oggi)?|quanti ne abbiamo(?: oggi)?)\s*[?!.]*\s*$/i,
    answer: (context) =>
      context.language === 'it' ? `Oggi è ${date(context)}.` : `Today is ${date(context)}.`,
  },
  {
    name: 'whoami',
    test: /^\s*(who am i|what(?:'s| is) my name|chi sono(?: io)?|come mi chiamo)\s*[?!.]*\s*$/i,
    answer: (context) => (context.language === 'it' ? `Sei ${context.actor}.` : `You are ${context.actor}.`),
  },
];

/**
 * Deterministic answers for trivial requests (time, date, who am I), in
 * English or Italian, with no model and no executor.
 *
 * @example
 * preFastpath('what time is it?', { now: new Date(), actor: 'ada', language: 'en' }); // { name: 'time', answer: 'It is 10:30.' }
 */
export function preFastpath(
  request: string,
  context: PreFastpathContext,
): { name: string; answer: string } | undefined {
  const pattern = PATTERNS.find((candidate) => candidate.test.test(request));
  return pattern ? { name: pattern.name, answer: pattern.answer(context) } : undefined;
}
