import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import {
  defineExecutor,
  displayPath,
  type ExecutorContext,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

interface Args {
  summary: string;
  start: string;
  end?: string;
  duration_minutes?: number;
  timezone?: string;
  location?: string;
  description?: string;
  rrule?: string;
  alarm_minutes?: number;
  file?: string;
  source?: 'auto' | 'file' | 'caldav';
}

interface Output {
  source: 'file' | 'caldav';
  calendar: string;
  uid: string;
  summary: string;
  start: string;
  end: string;
  all_day: boolean;
  timezone: string;
  rrule?: string;
  created_file?: boolean;
}

const DEFAULT_FILE = 'calendar.ics';
const CREDENTIAL = 'calendar';
const MAX_CALENDAR_BYTES = 8 * 1024 * 1024;
const MAX_RESPONSE_BYTES = 256 * 1024;
const MAX_REQUEST_MS = 15_000;
const DEADLINE_MARGIN_MS = 750;
const DAY_MS = 86_400_000;
const PRODID = '-//Metnos//calendar_add 1.0//EN';
const PROXY_REFUSAL = 'metnos egress proxy:';
const RESERVED = ['.audit'];

// ---------------------------------------------------------------------------
// Time zones through Intl

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function zoneFormatter(timezone: string): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw new ExecutorFailure(
      'UnknownTimezone',
      `"${timezone.slice(0, 64)}" is not an IANA time zone (e.g. "Europe/Rome" or "UTC")`,
    );
  }
}

/** Minutes east of UTC that the zone shows at `instant`. */
function offsetAt(formatter: Intl.DateTimeFormat, instant: number): number {
  const parts = new Map(
    formatter.formatToParts(new Date(instant)).map((part) => [part.type, Number(part.value)]),
  );
  const asUtc = Date.UTC(
    parts.get('year')!,
    parts.get('month')! - 1,
    parts.get('day')!,
    parts.get('hour')!,
    parts.get('minute')!,
    parts.get('second')!,
  );
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/** The instant of a wall-clock time: the earlier one in an overlap, as if the clocks had not moved in a gap. */
function toInstant(wall: WallTime, formatter: Intl.DateTimeFormat): number {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  const before = offsetAt(formatter, asUtc - DAY_MS);
  const after = offsetAt(formatter, asUtc + DAY_MS);
  const valid = [before, after]
    .map((offset) => ({ offset, instant: asUtc - offset * 60_000 }))
    .filter(({ offset, instant }) => offsetAt(formatter, instant) === offset)
    .map(({ instant }) => instant);
  return valid.length > 0 ? Math.min(...valid) : asUtc - before * 60_000;
}

function wallAt(instant: number, offsetMinutes: number): WallTime {
  const shifted = new Date(instant + offsetMinutes * 60_000);
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth() + 1,
    day: shifted.getUTCDate(),
    hour: shifted.getUTCHours(),
    minute: shifted.getUTCMinutes(),
    second: shifted.getUTCSeconds(),
  };
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

function icsDate(wall: WallTime): string {
  return `${pad(wall.year, 4)}${pad(wall.month)}${pad(wall.day)}`;
}

function icsDateTime(wall: WallTime): string {
  return `${icsDate(wall)}T${pad(wall.hour)}${pad(wall.minute)}${pad(wall.second)}`;
}

function isoDate(wall: WallTime): string {
  return `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`;
}

function isoInZone(instant: number, formatter: Intl.DateTimeFormat): string {
  const offset = offsetAt(formatter, instant);
  const wall = wallAt(instant, offset);
  const sign = offset < 0 ? '-' : '+';
  const absolute = Math.abs(offset);
  return `${isoDate(wall)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}${sign}${pad(Math.floor(absolute / 60))}:${pad(absolute % 60)}`;
}

function icsOffset(minutes: number): string {
  const absolute = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(absolute / 60))}${pad(absolute % 60)}`;
}

const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

/** The day of `month` in `year` that is the `n`th (or, for -1, the last) `weekday`. */
function nthWeekday(year: number, month: number, weekday: number, n: number): number {
  const length = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (n > 0) {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
    return 1 + ((weekday - first + 7) % 7) + (n - 1) * 7;
  }
  const last = new Date(Date.UTC(year, month - 1, length)).getUTCDay();
  return length - ((last - weekday + 7) % 7);
}

/**
 * A VTIMEZONE for an IANA zone, written from what Intl knows of the event's
 * year: each change of offset becomes a yearly rule (`BYMONTH=3;BYDAY=-1SU`)
 * starting in 1970, so readers know the offset of every date the event has.
 */
function vtimezone(name: string, formatter: Intl.DateTimeFormat, year: number): string[] {
  const begin = Date.UTC(year, 0, 1);
  const changes: Array<{ instant: number; from: number; to: number }> = [];
  let previous = offsetAt(formatter, begin);
  for (let day = 1; day <= 366; day++) {
    const at = begin + day * DAY_MS;
    const offset = offsetAt(formatter, at);
    if (offset === previous) continue;
    let low = at - DAY_MS;
    let high = at;
    while (high - low > 60_000) {
      const middle = low + Math.max(1, Math.floor((high - low) / 120_000)) * 60_000;
      if (offsetAt(formatter, middle) === previous) low = middle;
      else high = middle;
    }
    changes.push({ instant: high, from: previous, to: offset });
    previous = offset;
  }
  const lines = ['BEGIN:VTIMEZONE', `TZID:${name}`];
  if (changes.length === 0) {
    lines.push(
      'BEGIN:STANDARD',
      'DTSTART:19700101T000000',
      `TZOFFSETFROM:${icsOffset(previous)}`,
      `TZOFFSETTO:${icsOffset(previous)}`,
      'END:STANDARD',
    );
  }
  for (const change of changes) {
    const local = wallAt(change.instant, change.from);
    const weekday = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
    const length = new Date(Date.UTC(local.year, local.month, 0)).getUTCDate();
    const n = local.day + 7 > length ? -1 : Math.ceil(local.day / 7);
    const kind = change.to > change.from ? 'DAYLIGHT' : 'STANDARD';
    const onset = { ...local, year: 1970, day: nthWeekday(1970, local.month, weekday, n) };
    lines.push(
      `BEGIN:${kind}`,
      `DTSTART:${icsDateTime(onset)}`,
      `RRULE:FREQ=YEARLY;BYMONTH=${local.month};BYDAY=${n}${WEEKDAYS[weekday]}`,
      `TZOFFSETFROM:${icsOffset(change.from)}`,
      `TZOFFSETTO:${icsOffset(change.to)}`,
      `END:${kind}`,
    );
  }
  lines.push('END:VTIMEZONE');
  return lines;
}

// ---------------------------------------------------------------------------
// What the caller gave

interface Moment {
  allDay: boolean;
  wall: WallTime;
  instant: number;
}

function realDay(wall: Pick<WallTime, 'year' | 'month' | 'day'>): boolean {
  const check = new Date(Date.UTC(wall.year, wall.month - 1, wall.day));
  return (
    check.getUTCFullYear() === wall.year &&
    check.getUTCMonth() === wall.month - 1 &&
    check.getUTCDate() === wall.day
  );
}

/** `2026-05-04` (all day), `2026-05-04T09:00` (in the zone) or with `Z` / an offset (moved into the zone). */
function parseMoment(value: string, formatter: Intl.DateTimeFormat, what: string): Moment {
  const match =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(
      value.trim(),
    );
  const wall = match && {
    year: Number(match[1]),
    month: Number(match[2]),
    day: Number(match[3]),
    hour: Number(match[4] ?? 0),
    minute: Number(match[5] ?? 0),
    second: Number(match[6] ?? 0),
  };
  if (!match || !wall || !realDay(wall) || wall.hour > 23 || wall.minute > 59 || wall.second > 59) {
    throw new ExecutorFailure(
      'BadDate',
      `${what} "${value.slice(0, 40)}" is not a date like 2026-05-04 or a time like 2026-05-04T09:00`,
    );
  }
  if (wall.year < 1900 || wall.year > 2200) throw new ExecutorFailure('BadDate', `${what} is out of range`);
  if (match[4] === undefined)
    return { allDay: true, wall, instant: Date.UTC(wall.year, wall.month - 1, wall.day) };
  const offset = match[7];
  if (offset === undefined) return { allDay: false, wall, instant: toInstant(wall, formatter) };
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.replace(/[^\d]/g, '');
  const minutes =
    offset.toUpperCase() === 'Z' ? 0 : sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
  const instant =
    Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) - minutes * 60_000;
  return { allDay: false, wall: wallAt(instant, offsetAt(formatter, instant)), instant };
}

const RULE_PARTS: Record<string, RegExp> = {
  FREQ: /^(DAILY|WEEKLY|MONTHLY|YEARLY)$/,
  INTERVAL: /^[1-9]\d{0,2}$/,
  COUNT: /^[1-9]\d{0,3}$/,
  UNTIL: /^\d{8}(T\d{6}Z)?$/,
  BYDAY: /^([+-]?\d{0,2}(MO|TU|WE|TH|FR|SA|SU))(,[+-]?\d{0,2}(MO|TU|WE|TH|FR|SA|SU))*$/,
  BYMONTHDAY: /^-?\d{1,2}(,-?\d{1,2})*$/,
  BYMONTH: /^\d{1,2}(,\d{1,2})*$/,
  BYSETPOS: /^-?\d{1,3}(,-?\d{1,3})*$/,
  WKST: /^(MO|TU|WE|TH|FR|SA|SU)$/,
};

/** Checks an RRULE against the parts readers agree on, and writes it back upper case. */
function checkedRule(value: string): string {
  const text = value
    .trim()
    .replace(/^RRULE:/i, '')
    .toUpperCase();
  const parts = new Map<string, string>();
  for (const part of text.split(';')) {
    const [key = '', setting = '', ...rest] = part.split('=');
    const pattern = Object.hasOwn(RULE_PARTS, key) ? RULE_PARTS[key] : undefined;
    if (!pattern || rest.length > 0 || !pattern.test(setting) || parts.has(key)) {
      throw new ExecutorFailure(
        'BadRule',
        `"${part.slice(0, 60)}" is not a part this rule can have (FREQ, INTERVAL, COUNT, UNTIL, BYDAY, BYMONTHDAY, BYMONTH, BYSETPOS, WKST)`,
      );
    }
    parts.set(key, setting);
  }
  if (!parts.has('FREQ'))
    throw new ExecutorFailure('BadRule', 'a rule needs FREQ (DAILY, WEEKLY, MONTHLY or YEARLY)');
  if (parts.has('COUNT') && parts.has('UNTIL'))
    throw new ExecutorFailure('BadRule', 'a rule has COUNT or UNTIL, not both');
  return [...parts].map(([key, setting]) => `${key}=${setting}`).join(';');
}

// ---------------------------------------------------------------------------
// Writing iCalendar text

function escapeText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\\;,]/g, (char) => `\\${char}`)
    .replace(/\n/g, '\\n')
    .replace(/\p{Cc}/gu, '');
}

/** Folds a content line at 75 octets, never inside a UTF-8 character. */
function fold(line: string): string {
  const out: string[] = [];
  let current = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char);
    const limit = out.length === 0 ? 75 : 74;
    if (octets + size > limit) {
      out.push(current);
      current = '';
      octets = 0;
    }
    current += char;
    octets += size;
  }
  out.push(current);
  return out.join('\r\n ');
}

interface Planned {
  uid: string;
  event: string[];
  timezone: string[] | undefined;
  start: Moment;
  endInstant: number;
  endWall: WallTime;
  rrule?: string;
}

function planEvent(args: Args, timezone: string, formatter: Intl.DateTimeFormat): Planned {
  const start = parseMoment(args.start, formatter, 'start');
  const utc = timezone === 'UTC' || timezone === 'Etc/UTC';
  let end: Moment;
  if (args.end !== undefined) {
    end = parseMoment(args.end, formatter, 'end');
    if (end.allDay !== start.allDay) {
      throw new ExecutorFailure('BadDate', 'start and end must both be dates, or both dates with a time');
    }
    // For all-day events the caller names the last day; iCalendar's DTEND is the day after it.
    if (end.allDay) end = { ...end, instant: end.instant + DAY_MS, wall: wallAt(end.instant + DAY_MS, 0) };
    if (end.instant <= start.instant) throw new ExecutorFailure('BadDate', 'end must come after start');
  } else if (start.allDay) {
    const days = Math.max(1, Math.ceil((args.duration_minutes ?? 1440) / 1440));
    const instant = start.instant + days * DAY_MS;
    end = { allDay: true, instant, wall: wallAt(instant, 0) };
  } else {
    const instant = start.instant + (args.duration_minutes ?? 60) * 60_000;
    end = { allDay: false, instant, wall: wallAt(instant, offsetAt(formatter, instant)) };
  }
  const when = (name: string, moment: Moment) => {
    if (moment.allDay) return `${name};VALUE=DATE:${icsDate(moment.wall)}`;
    if (utc) return `${name}:${icsDateTime(wallAt(moment.instant, 0))}Z`;
    return `${name};TZID=${timezone}:${icsDateTime(moment.wall)}`;
  };
  const uid = `${randomUUID()}@metnos`;
  const stamp = `${icsDateTime(wallAt(Date.now(), 0))}Z`;
  const rrule = args.rrule === undefined ? undefined : checkedRule(args.rrule);
  const summary = args.summary.replace(/\s+/g, ' ').trim();
  const event = [
    'BEGIN:VEVENT',
    `UID:${uid}`,
    `DTSTAMP:${stamp}`,
    `CREATED:${stamp}`,
    when('DTSTART', start),
    when('DTEND', end),
    `SUMMARY:${escapeText(summary)}`,
    ...(args.location ? [`LOCATION:${escapeText(args.location.trim())}`] : []),
    ...(args.description ? [`DESCRIPTION:${escapeText(args.description)}`] : []),
    ...(rrule ? [`RRULE:${rrule}`] : []),
    ...(args.alarm_minutes !== undefined
      ? [
          'BEGIN:VALARM',
          'ACTION:DISPLAY',
          `DESCRIPTION:${escapeText(summary)}`,
          `TRIGGER:-PT${args.alarm_minutes}M`,
          'END:VALARM',
        ]
      : []),
    'END:VEVENT',
  ];
  const timezoneLines = start.allDay || utc ? undefined : vtimezone(timezone, formatter, start.wall.year);
  return {
    uid,
    event,
    timezone: timezoneLines,
    start,
    endInstant: end.instant,
    endWall: end.wall,
    ...(rrule ? { rrule } : {}),
  };
}

// ---------------------------------------------------------------------------
// Into an .ics file

/** True when the calendar already defines a VTIMEZONE with this TZID. */
function definesZone(text: string, tzid: string): boolean {
  let inside = false;
  for (const line of text.replace(/\r?\n[ \t]/g, '').split(/\r?\n/)) {
    const upper = line.trim().toUpperCase();
    if (upper === 'BEGIN:VTIMEZONE') inside = true;
    else if (upper === 'END:VTIMEZONE') inside = false;
    else if (inside && /^TZID[:;]/i.test(line) && line.slice(line.indexOf(':') + 1).trim() === tzid)
      return true;
  }
  return false;
}

async function addToFile(
  planned: Planned,
  timezone: string,
  args: Args,
  ctx: ExecutorContext,
): Promise<{ shown: string; created: boolean }> {
  const configured = typeof ctx.config.calendar_file === 'string' ? ctx.config.calendar_file : undefined;
  const path = await resolveAllowedPath(args.file ?? configured ?? DEFAULT_FILE, ctx, {
    roots: ctx.profile.fs.write,
    verb: 'write',
    reserved: RESERVED,
  });
  const shown = displayPath(path, ctx);
  const info = await stat(path).catch(() => undefined);
  if (info && !info.isFile()) throw new ExecutorFailure('NotFound', `${shown} is not a file`);
  if (info && info.size > MAX_CALENDAR_BYTES) {
    throw new ExecutorFailure(
      'TooLarge',
      `${shown} is ${info.size} bytes; calendars up to ${MAX_CALENDAR_BYTES} bytes are changed`,
    );
  }
  const parent = await stat(dirname(path)).catch(() => undefined);
  if (!parent?.isDirectory()) throw new ExecutorFailure('NotFound', `the folder of ${shown} does not exist`);

  let text: string;
  if (info) {
    const existing = await readFile(path, 'utf8');
    const newline = existing.includes('\r\n') ? '\r\n' : '\n';
    const close = /(^|\r?\n)END:VCALENDAR[ \t]*(\r?\n)?\s*$/i.exec(existing);
    const firstLine = (existing.split(/\r?\n/, 1)[0] ?? '').replace(/^\uFEFF/, '').trim();
    if (!/^BEGIN:VCALENDAR$/i.test(firstLine) || !close) {
      throw new ExecutorFailure(
        'Corrupt',
        `${shown} is not an iCalendar file (BEGIN:VCALENDAR … END:VCALENDAR)`,
      );
    }
    const lines = [
      ...(planned.timezone && !definesZone(existing, timezone) ? planned.timezone : []),
      ...planned.event,
    ].map((line) => fold(line).split('\r\n').join(newline));
    const head = existing.slice(0, close.index + close[1]!.length);
    text = `${head}${lines.join(newline)}${newline}END:VCALENDAR${newline}`;
  } else {
    const lines = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      `PRODID:${PRODID}`,
      'CALSCALE:GREGORIAN',
      ...(planned.timezone ?? []),
      ...planned.event,
      'END:VCALENDAR',
    ].map(fold);
    text = `${lines.join('\r\n')}\r\n`;
  }
  // Written beside the calendar and renamed over it: a reader never sees half a file.
  const temp = join(dirname(path), `.${basename(path).slice(0, 200)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temp, text, { flag: 'wx', mode: info ? info.mode & 0o777 : 0o644 });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ERR_ACCESS_DENIED') {
      throw new ExecutorFailure('PermissionDenied', `${shown} cannot be written (${code})`);
    }
    throw error;
  }
  return { shown, created: info === undefined };
}

// ---------------------------------------------------------------------------
// Onto a CalDAV server: a PUT through the egress proxy, logged in by the host

function proxyUrl(): URL | undefined {
  const value = process.env.HTTP_PROXY ?? process.env.http_proxy;
  if (!value) return undefined;
  try {
    return new URL(value.includes('://') ? value : `http://${value}`);
  } catch {
    return undefined;
  }
}

async function davPut(
  url: URL,
  body: string,
  ctx: ExecutorContext,
): Promise<{ status: number; body: string }> {
  const proxy = proxyUrl();
  if (!proxy) {
    throw new ExecutorFailure(
      'NotConfigured',
      'CalDAV goes through the sandbox egress proxy, and this call has none',
    );
  }
  const configured = typeof ctx.config.timeout_ms === 'number' ? ctx.config.timeout_ms : MAX_REQUEST_MS;
  const budget = Math.max(100, Math.min(configured, MAX_REQUEST_MS, ctx.remainingMs() - DEADLINE_MARGIN_MS));
  const sockets: Socket[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      for (const socket of sockets) socket.destroy();
      reject(new ExecutorFailure('Timeout', `the calendar server did not answer within ${budget} ms`));
    }, budget);
  });
  const exchange = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const payload = Buffer.from(body, 'utf8');
    const outgoing = httpRequest({
      method: 'PUT',
      path: url.href,
      headers: {
        host: url.host,
        'user-agent': 'Metnos-calendar_add/1.0',
        'metnos-credential': CREDENTIAL,
        'content-type': 'text/calendar; charset=utf-8',
        'if-none-match': '*',
        'content-length': String(payload.length),
        connection: 'close',
      },
      createConnection: () => {
        const socket = netConnect({ host: proxy.hostname, port: Number(proxy.port || 80) });
        sockets.push(socket);
        return socket;
      },
    });
    outgoing.once('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
      });
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.once('error', (error: Error) =>
        reject(new ExecutorFailure('Network', `the calendar server's answer broke off: ${error.message}`)),
      );
    });
    outgoing.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new ExecutorFailure('Network', `could not reach the calendar server: ${error.code ?? error.message}`),
      ),
    );
    outgoing.end(payload);
  });
  try {
    return await Promise.race([exchange, timeout]);
  } finally {
    clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
    exchange.catch(() => undefined);
  }
}

async function addToServer(planned: Planned, ctx: ExecutorContext): Promise<string> {
  const credential = ctx.credentials[CREDENTIAL];
  if (credential?.kind !== 'http') {
    throw new ExecutorFailure(
      'NotConfigured',
      `no "${CREDENTIAL}" credential is configured for CalDAV; add to an .ics file instead`,
    );
  }
  const collection = new URL(credential.url);
  if (!collection.pathname.endsWith('/')) collection.pathname = `${collection.pathname}/`;
  const target = new URL(`${planned.uid.replace(/@.*$/, '')}.ics`, collection);
  const body = `${['BEGIN:VCALENDAR', 'VERSION:2.0', `PRODID:${PRODID}`, ...(planned.timezone ?? []), ...planned.event, 'END:VCALENDAR'].map(fold).join('\r\n')}\r\n`;
  const response = await davPut(target, body, ctx);
  if (response.status === 201 || response.status === 204) return `${collection.origin}${collection.pathname}`;
  const text = response.body.replace(/\s+/g, ' ').trim().slice(0, 200);
  if (text.startsWith(PROXY_REFUSAL)) {
    const reason = text.slice(PROXY_REFUSAL.length).trim();
    if (response.status === 401)
      throw new ExecutorFailure('AuthFailed', `the calendar server refused the login: ${reason}`);
    if (response.status === 403)
      throw new ExecutorFailure('Forbidden', `the egress proxy refused: ${reason}`);
    throw new ExecutorFailure('Network', `the egress proxy could not reach the calendar server: ${reason}`);
  }
  if (response.status === 401)
    throw new ExecutorFailure('AuthFailed', 'the calendar server refused the login (HTTP 401)');
  if (response.status === 403)
    throw new ExecutorFailure('Forbidden', 'the calendar server forbids adding events there (HTTP 403)');
  if (response.status === 404 || response.status === 409) {
    throw new ExecutorFailure(
      'NotFound',
      `the calendar server has no calendar at the configured URL (HTTP ${response.status})`,
    );
  }
  if (response.status === 412)
    throw new ExecutorFailure('Exists', 'an event with this name is already on the server');
  throw new ExecutorFailure(
    'HttpError',
    `the calendar server answered HTTP ${response.status} to the new event`,
  );
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const configured = typeof ctx.config.timezone === 'string' ? ctx.config.timezone : undefined;
    const timezone = args.timezone ?? configured ?? 'UTC';
    const formatter = zoneFormatter(timezone);
    const planned = planEvent(args, timezone, formatter);
    const source = args.file !== undefined ? 'file' : (args.source ?? 'auto');
    const useDav = source === 'caldav' || (source === 'auto' && ctx.credentials[CREDENTIAL] !== undefined);
    const common = {
      uid: planned.uid,
      summary: args.summary.replace(/\s+/g, ' ').trim(),
      start: planned.start.allDay ? isoDate(planned.start.wall) : isoInZone(planned.start.instant, formatter),
      end: planned.start.allDay ? isoDate(planned.endWall) : isoInZone(planned.endInstant, formatter),
      all_day: planned.start.allDay,
      timezone,
      ...(planned.rrule ? { rrule: planned.rrule } : {}),
    };
    if (useDav) {
      const calendar = await addToServer(planned, ctx);
      return ok({ source: 'caldav', calendar, ...common });
    }
    const { shown, created } = await addToFile(planned, timezone, args, ctx);
    return ok({ source: 'file', calendar: shown, ...common, created_file: created });
  },
});
