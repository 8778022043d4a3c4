import { Cron } from 'croner';

/**
 * When a schedule fires. `cron` is a five-to-seven-field expression read by
 * croner in the schedule's time zone; `daily` is `daily@HH:MM`; `every` is
 * `every_N_minutes`, counted from the schedule's anchor (its creation, or the
 * last change of cadence), so the first slot is the anchor itself; `manual`
 * fires only through `runNow`.
 */
export type Cadence =
  | { kind: 'cron'; expression: string }
  | { kind: 'daily'; hour: number; minute: number }
  | { kind: 'every'; minutes: number }
  | { kind: 'manual' };

/** A cadence that could not be read; `unparsed` is the part of the text that was not understood. */
export class CadenceError extends Error {
  readonly input: string;
  readonly unparsed: string;
  constructor(input: string, unparsed: string, reason: string) {
    super(`cannot read the cadence "${input}": ${reason}`);
    this.name = 'CadenceError';
    this.input = input;
    this.unparsed = unparsed;
  }
}

const MAX_CADENCE_LENGTH = 200;
const CRON_FIELD = /^[\w*/,\-?#]+$/;

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, paused: true });
}

/** Whether `timezone` is an IANA time zone this Node knows. */
export function isTimeZone(timezone: string): boolean {
  if (timezone.length === 0 || timezone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads a formal cadence: `manual`, `daily@HH:MM`, `every_N_minutes` or a cron
 * expression. Throws {@link CadenceError} for anything else.
 *
 * @example
 * parseCadence('daily@04:00'); // { kind: 'daily', hour: 4, minute: 0 }
 */
export function parseCadence(text: string, timezone = 'UTC'): Cadence {
  const input = text.trim();
  if (input.length > MAX_CADENCE_LENGTH) throw new CadenceError(input.slice(0, 40), input, 'too long');
  if (input === 'manual') return { kind: 'manual' };
  const daily = /^daily@(\d{2}):(\d{2})$/.exec(input);
  if (daily) {
    const hour = Number(daily[1]);
    const minute = Number(daily[2]);
    if (hour > 23 || minute > 59) throw new CadenceError(input, input, 'no such time of day');
    return { kind: 'daily', hour, minute };
  }
  const every = /^every_(\d{1,4})_minutes$/.exec(input);
  if (every) {
    const minutes = Number(every[1]);
    if (minutes < 1 || minutes > 1440) throw new CadenceError(input, every[1]!, 'minutes must be 1 to 1440');
    return { kind: 'every', minutes };
  }
  const fields = input.split(/\s+/);
  if (fields.length >= 5 && fields.length <= 7 && fields.every((field) => CRON_FIELD.test(field))) {
    try {
      if (cronOf(input, timezone).nextRun(new Date(0)) === null)
        throw new CadenceError(input, input, 'the expression never fires');
    } catch (error) {
      if (error instanceof CadenceError) throw error;
      throw new CadenceError(input, input, (error as Error).message);
    }
    return { kind: 'cron', expression: fields.join(' ') };
  }
  throw new CadenceError(input, input, 'not manual, daily@HH:MM, every_N_minutes or a cron expression');
}

/** The stored text of a cadence, which {@link parseCadence} reads back. */
export function formatCadence(cadence: Cadence): string {
  switch (cadence.kind) {
    case 'manual':
      return 'manual';
    case 'daily':
      return `daily@${pad(cadence.hour)}:${pad(cadence.minute)}`;
    case 'every':
      return `every_${cadence.minutes}_minutes`;
    case 'cron':
      return cadence.expression;
  }
}

function asCron(cadence: Cadence): string | undefined {
  if (cadence.kind === 'cron') return cadence.expression;
  if (cadence.kind === 'daily') return `${cadence.minute} ${cadence.hour} * * *`;
  return undefined;
}

/**
 * The latest slot at or before `now` and at or after `anchor`, in ms; undefined
 * when there is none (a manual cadence, or nothing since the anchor).
 */
export function slotAtOrBefore(
  cadence: Cadence,
  timezone: string,
  anchor: number,
  now: number,
): number | undefined {
  if (now < anchor) return undefined;
  if (cadence.kind === 'manual') return undefined;
  if (cadence.kind === 'every') {
    const period = cadence.minutes * 60_000;
    return anchor + Math.floor((now - anchor) / period) * period;
  }
  const [previous] = cronOf(asCron(cadence)!, timezone).previousRuns(1, new Date(now + 1));
  const slot = previous?.getTime();
  return slot !== undefined && slot <= now && slot >= anchor ? slot : undefined;
}

/** The first slot strictly after `after` (and at or after `anchor`), in ms; undefined for manual. */
export function slotAfter(
  cadence: Cadence,
  timezone: string,
  anchor: number,
  after: number,
): number | undefined {
  if (cadence.kind === 'manual') return undefined;
  if (cadence.kind === 'every') {
    if (after < anchor) return anchor;
    const period = cadence.minutes * 60_000;
    return anchor + (Math.floor((after - anchor) / period) + 1) * period;
  }
  const from = Math.max(after, anchor - 1);
  return cronOf(asCron(cadence)!, timezone).nextRun(new Date(from))?.getTime();
}

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** A sentence for the user to confirm, e.g. `every day at 08:00 (Europe/Rome)`. */
export function describeCadence(cadence: Cadence, timezone: string): string {
  switch (cadence.kind) {
    case 'manual':
      return 'only when run by hand';
    case 'every':
      return cadence.minutes === 1 ? 'every minute' : `every ${cadence.minutes} minutes`;
    case 'daily':
      return `every day at ${pad(cadence.hour)}:${pad(cadence.minute)} (${timezone})`;
    case 'cron': {
      const fields = cadence.expression.split(' ');
      if (fields.length === 5) {
        const [minute, hour, day, month, weekday] = fields as [string, string, string, string, string];
        const simple = /^\d{1,2}$/;
        if (simple.test(minute) && simple.test(hour) && day === '*' && month === '*') {
          const at = `${pad(Number(hour))}:${pad(Number(minute))} (${timezone})`;
          if (weekday === '*') return `every day at ${at}`;
          if (weekday === '1-5') return `every weekday at ${at}`;
          if (/^[0-6]$/.test(weekday)) return `every ${DAY_NAMES[Number(weekday)]} at ${at}`;
        }
        if (minute === '0' && hour === '*' && day === '*' && month === '*' && weekday === '*')
          return 'every hour, on the hour';
        const hours = /^\*\/(\d+)$/.exec(hour);
        if (minute === '0' && hours && day === '*' && month === '*' && weekday === '*')
          return `every ${hours[1]} hours, on the hour (${timezone})`;
      }
      return `cron "${cadence.expression}" (${timezone})`;
    }
  }
}

// ---------------------------------------------------------------------------
// Natural language: a small deterministic grammar, English and Italian.
//   <every> <period> [<at> <time>]
// every:  every | each | ogni | tutti i | tutte le | tutti gli | daily
// period: N minutes | minute | N hours | hour | day | morning | afternoon |
//         evening | night | weekday | <weekday name>   (and the Italian words)
// time:   8 | 8:30 | 8.30 | 8am | 8 pm | noon | midnight | mezzogiorno | mezzanotte

const WEEKDAYS: Record<string, number> = {
  sunday: 0,
  monday: 1,
  tuesday: 2,
  wednesday: 3,
  thursday: 4,
  friday: 5,
  saturday: 6,
  domenica: 0,
  lunedi: 1,
  martedi: 2,
  mercoledi: 3,
  giovedi: 4,
  venerdi: 5,
  sabato: 6,
};

type Part = 'day' | 'morning' | 'afternoon' | 'evening' | 'weekdays' | { weekday: number };

function normalise(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[,;!?]+/g, ' ')
    .replace(/\.\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** What natural-language text became: the cadence to store and a sentence to confirm. */
export interface NaturalCadence {
  cadence: string;
  description: string;
}

/**
 * Turns a sentence such as "every morning at 8" or "ogni lunedì alle 9" into a
 * cadence (cron or `every_N_minutes`) and a description to confirm. The same
 * text always gives the same cadence. Throws {@link CadenceError} naming the
 * words that were not understood.
 *
 * @example
 * parseNaturalCadence('every day at 18:30', 'Europe/Rome');
 * // { cadence: '30 18 * * *', description: 'every day at 18:30 (Europe/Rome)' }
 */
export function parseNaturalCadence(text: string, timezone = 'UTC'): NaturalCadence {
  const input = text.trim();
  if (input.length > MAX_CADENCE_LENGTH) throw new CadenceError(input.slice(0, 40), input, 'too long');
  let rest = normalise(input);
  const fail = (reason: string, unparsed = rest): never => {
    throw new CadenceError(input, unparsed, `${reason} (not understood: "${unparsed}")`);
  };
  const take = (pattern: RegExp): RegExpExecArray | undefined => {
    const match = pattern.exec(rest);
    if (!match) return undefined;
    rest = rest.slice(match[0].length).trim();
    return match;
  };
  const done = (cadence: Cadence): NaturalCadence => {
    if (rest !== '') fail('unexpected words after the cadence');
    return { cadence: formatCadence(cadence), description: describeCadence(cadence, timezone) };
  };

  let part: Part | undefined;
  if (take(/^(daily|every day|ogni giorno|tutti i giorni|quotidianamente)\b/)) part = 'day';
  else if (!take(/^(every|each|ogni|tutti i|tutte le|tutti gli)\b/))
    fail('expected "every …" or "ogni …" at the start');

  if (!part) {
    const minutes = take(/^(\d{1,4}) ?(minutes|minute|mins|min|minuti|minuto)\b/);
    if (minutes) {
      const count = Number(minutes[1]);
      if (count < 1 || count > 1440) fail('minutes must be 1 to 1440');
      return done({ kind: 'every', minutes: count });
    }
    if (take(/^(minute|minuto)\b/)) return done({ kind: 'every', minutes: 1 });
    const hours = take(/^(\d{1,2}) ?(hours|hour|ore|ora)\b/);
    if (hours) {
      const count = Number(hours[1]);
      if (count < 1 || count > 23) fail('hours must be 1 to 23');
      return done({ kind: 'cron', expression: count === 1 ? '0 * * * *' : `0 */${count} * * *` });
    }
    if (take(/^(hour|ora)\b/)) return done({ kind: 'cron', expression: '0 * * * *' });
    if (take(/^(day|days|giorno|giorni)\b/)) part = 'day';
    else if (take(/^(morning|mornings|mattina|mattine|mattino)\b/)) part = 'morning';
    else if (take(/^(afternoon|afternoons|pomeriggio|pomeriggi)\b/)) part = 'afternoon';
    else if (take(/^(evening|evenings|night|nights|sera|sere|notte)\b/)) part = 'evening';
    else if (take(/^(weekdays|weekday|working days|working day|giorni feriali|giorno feriale)\b/))
      part = 'weekdays';
    else {
      const day = take(/^([a-z]+?)s?\b/);
      const weekday = day ? (WEEKDAYS[day[1]!] ?? WEEKDAYS[day[0]]) : undefined;
      if (weekday === undefined) {
        if (day) rest = `${day[0]} ${rest}`.trim();
        fail('expected minutes, hours, a day or a weekday after "every"');
      }
      part = { weekday: weekday! };
    }
  }

  if (rest === '') fail('expected a time of day ("at 8", "alle 18:30")');
  take(/^(at|alle ore|alle|all'|a|verso le|@)\b ?/);
  let hour: number;
  let minute = 0;
  if (take(/^(noon|midday|mezzogiorno)\b/)) hour = 12;
  else if (take(/^(midnight|mezzanotte)\b/)) hour = 0;
  else {
    const time = take(/^(\d{1,2})(?:[:.h](\d{2}))? ?(am|pm)?(?=\s|$)/);
    if (!time) return fail('expected a time of day ("at 8", "alle 18:30")');
    hour = Number(time[1]);
    minute = time[2] === undefined ? 0 : Number(time[2]);
    const meridiem = time[3];
    const spoken = time[0].trim();
    if (minute > 59) fail('minutes past the hour must be 0 to 59', spoken);
    if (meridiem) {
      if (hour < 1 || hour > 12) fail('a 12-hour clock time must be 1 to 12', spoken);
      hour = (hour % 12) + (meridiem === 'pm' ? 12 : 0);
    } else if ((part === 'evening' || part === 'afternoon') && hour >= 1 && hour < 12) hour += 12;
    if (hour > 23) fail('hours must be 0 to 23', spoken);
    if (part === 'morning' && hour >= 12) fail('a morning time must be before noon', spoken);
  }
  const weekday = typeof part === 'object' ? String(part.weekday) : part === 'weekdays' ? '1-5' : '*';
  return done({ kind: 'cron', expression: `${minute} ${hour} * * ${weekday}` });
}

/** Whether text reads as a formal cadence rather than a sentence. */
function looksFormal(text: string): boolean {
  return /^(manual$|daily@|every_\d)/.test(text) || /^[\d*?]/.test(text);
}

/** A cadence as given at creation, read whichever way it was written. */
export interface ResolvedCadence {
  cadence: Cadence;
  /** The stored text (formal). */
  text: string;
  description: string;
  /** Whether the text was a sentence, translated here. */
  fromNaturalLanguage: boolean;
}

/**
 * Reads a cadence written either formally or as a sentence; sentences are
 * translated once, here, and the formal text is what the schedule keeps.
 *
 * @example
 * resolveCadence('every 15 minutes').text; // 'every_15_minutes'
 */
export function resolveCadence(text: string, timezone = 'UTC'): ResolvedCadence {
  const input = text.trim();
  if (looksFormal(input)) {
    const cadence = parseCadence(input, timezone);
    return {
      cadence,
      text: formatCadence(cadence),
      description: describeCadence(cadence, timezone),
      fromNaturalLanguage: false,
    };
  }
  const natural = parseNaturalCadence(input, timezone);
  const cadence = parseCadence(natural.cadence, timezone);
  return { cadence, text: natural.cadence, description: natural.description, fromNaturalLanguage: true };
}
