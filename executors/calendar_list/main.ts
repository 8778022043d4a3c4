import { readFile, stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import {
  defineExecutor,
  displayPath,
  type ExecutorContext,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

type Source = 'auto' | 'file' | 'caldav';

interface Args {
  start?: string;
  end?: string;
  query?: string;
  file?: string;
  source?: Source;
  timezone?: string;
  limit?: number;
}

interface Event {
  uid: string;
  summary: string;
  start: string;
  end: string;
  all_day: boolean;
  timezone?: string;
  location?: string;
  description?: string;
  status?: string;
  categories?: string[];
  recurring: boolean;
  rrule?: string;
  recurrence_expanded?: boolean;
}

interface Output {
  source: 'file' | 'caldav';
  calendar: string;
  timezone: string;
  start: string;
  end: string;
  events: Event[];
  count: number;
  truncated: boolean;
  skipped: number;
}

const DEFAULT_FILE = 'calendar.ics';
const CREDENTIAL = 'calendar';
const MAX_CALENDAR_BYTES = 8 * 1024 * 1024;
const MAX_DEPTH = 8;
const MAX_COMPONENTS = 50_000;
const MAX_OCCURRENCES = 5_000;
const MAX_PERIODS = 100_000;
const MAX_TEXT = 2_000;
const DAY_MS = 86_400_000;
const MAX_REQUEST_MS = 15_000;
const DEADLINE_MARGIN_MS = 750;
const PROXY_REFUSAL = 'metnos egress proxy:';

// ---------------------------------------------------------------------------
// RFC 5545 content lines and components

interface Property {
  name: string;
  params: Map<string, string>;
  value: string;
}

interface Component {
  name: string;
  properties: Property[];
  children: Component[];
}

/** Splits `NAME;PARAM="a;b":value` at the first colon outside quotes. */
function parseLine(line: string): Property | undefined {
  let index = 0;
  let quoted = false;
  for (; index < line.length; index++) {
    const char = line[index];
    if (char === '"') quoted = !quoted;
    else if (char === ':' && !quoted) break;
  }
  if (index >= line.length) return undefined;
  const head = line.slice(0, index);
  const value = line.slice(index + 1);
  const parts: string[] = [];
  let current = '';
  quoted = false;
  for (const char of head) {
    if (char === '"') quoted = !quoted;
    if (char === ';' && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  const name = parts[0]!.trim().toUpperCase();
  if (!/^[A-Z0-9-]+$/.test(name)) return undefined;
  const params = new Map<string, string>();
  for (const part of parts.slice(1)) {
    const equals = part.indexOf('=');
    if (equals <= 0) continue;
    params.set(part.slice(0, equals).trim().toUpperCase(), part.slice(equals + 1).replace(/^"|"$/g, ''));
  }
  return { name, params, value };
}

/** Unfolds and parses a calendar into components; nesting, size and count are bounded. */
function parseCalendar(text: string): Component[] {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .replace(/\n[ \t]/g, '')
    .split('\n');
  const root: Component = { name: '', properties: [], children: [] };
  const stack: Component[] = [root];
  let components = 0;
  for (const line of lines) {
    if (line.trim() === '') continue;
    const property = parseLine(line);
    if (!property) continue;
    const top = stack.at(-1)!;
    if (property.name === 'BEGIN') {
      if (stack.length > MAX_DEPTH) {
        throw new ExecutorFailure('Corrupt', `the calendar nests components deeper than ${MAX_DEPTH} levels`);
      }
      if (++components > MAX_COMPONENTS) {
        throw new ExecutorFailure('TooLarge', `the calendar has more than ${MAX_COMPONENTS} components`);
      }
      const child: Component = { name: property.value.trim().toUpperCase(), properties: [], children: [] };
      top.children.push(child);
      stack.push(child);
    } else if (property.name === 'END') {
      if (stack.length === 1 || top.name !== property.value.trim().toUpperCase()) {
        throw new ExecutorFailure(
          'Corrupt',
          `END:${property.value.trim().slice(0, 40)} does not close ${top.name ? `BEGIN:${top.name}` : 'anything'}`,
        );
      }
      stack.pop();
    } else {
      top.properties.push(property);
    }
  }
  if (stack.length > 1) throw new ExecutorFailure('Corrupt', `BEGIN:${stack.at(-1)!.name} is never closed`);
  return root.children;
}

function first(component: Component, name: string): Property | undefined {
  return component.properties.find((property) => property.name === name);
}

function unescapeText(value: string): string {
  return value.replace(/\\([\\;,nN])/g, (_, char: string) => (char === 'n' || char === 'N' ? '\n' : char));
}

function shortText(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = unescapeText(value).trim();
  if (text === '') return undefined;
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

// ---------------------------------------------------------------------------
// Time zones: IANA names through Intl, fixed offsets, floating times

type Zone = { kind: 'iana'; name: string } | { kind: 'fixed'; minutes: number };

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat | undefined>();

function formatterFor(name: string): Intl.DateTimeFormat | undefined {
  if (formatters.has(name)) return formatters.get(name);
  let formatter: Intl.DateTimeFormat | undefined;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    formatter = undefined;
  }
  formatters.set(name, formatter);
  return formatter;
}

function ianaZone(name: string): Zone | undefined {
  return formatterFor(name) ? { kind: 'iana', name } : undefined;
}

/** Minutes east of UTC that `zone` shows at `instant`. */
function offsetAt(zone: Zone, instant: number): number {
  if (zone.kind === 'fixed') return zone.minutes;
  const parts = new Map(
    formatterFor(zone.name)!
      .formatToParts(new Date(instant))
      .map((part) => [part.type, Number(part.value)]),
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

/**
 * The instant a wall-clock time in `zone` stands for: in an overlap (clocks
 * turned back) the earlier one, in a gap (clocks turned forward) the time as
 * if the clocks had not moved yet (02:30 in a 02:00→03:00 gap is 03:30).
 */
function toInstant(wall: WallTime, zone: Zone): number {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  const before = offsetAt(zone, asUtc - DAY_MS);
  const after = offsetAt(zone, asUtc + DAY_MS);
  const valid = [before, after]
    .map((offset) => ({ offset, instant: asUtc - offset * 60_000 }))
    .filter(({ offset, instant }) => offsetAt(zone, instant) === offset)
    .map(({ instant }) => instant);
  return valid.length > 0 ? Math.min(...valid) : asUtc - before * 60_000;
}

function wallOf(instant: number, zone: Zone): WallTime {
  const shifted = new Date(instant + offsetAt(zone, instant) * 60_000);
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

function isoDate(wall: Pick<WallTime, 'year' | 'month' | 'day'>): string {
  return `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`;
}

/** `2026-05-04T09:00:00+02:00`: the instant as the clock in `zone` reads it. */
function isoInZone(instant: number, zone: Zone): string {
  const wall = wallOf(instant, zone);
  const offset = offsetAt(zone, instant);
  const sign = offset < 0 ? '-' : '+';
  const absolute = Math.abs(offset);
  return `${isoDate(wall)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}${sign}${pad(Math.floor(absolute / 60))}:${pad(absolute % 60)}`;
}

/** The Windows names Outlook and Exchange write as TZID, for the zones people meet most. */
const WINDOWS_ZONES: Record<string, string> = {
  'W. Europe Standard Time': 'Europe/Berlin',
  'Romance Standard Time': 'Europe/Paris',
  'Central Europe Standard Time': 'Europe/Budapest',
  'Central European Standard Time': 'Europe/Warsaw',
  'GMT Standard Time': 'Europe/London',
  'Greenwich Standard Time': 'Atlantic/Reykjavik',
  'E. Europe Standard Time': 'Europe/Chisinau',
  'FLE Standard Time': 'Europe/Kiev',
  'GTB Standard Time': 'Europe/Bucharest',
  'Russian Standard Time': 'Europe/Moscow',
  'Eastern Standard Time': 'America/New_York',
  'Central Standard Time': 'America/Chicago',
  'Mountain Standard Time': 'America/Denver',
  'Pacific Standard Time': 'America/Los_Angeles',
  'Tokyo Standard Time': 'Asia/Tokyo',
  'China Standard Time': 'Asia/Shanghai',
  'India Standard Time': 'Asia/Kolkata',
  'AUS Eastern Standard Time': 'Australia/Sydney',
  UTC: 'UTC',
};

function parseOffset(value: string | undefined): number | undefined {
  const match = /^([+-])(\d{2})(\d{2})(\d{2})?$/.exec(value?.trim() ?? '');
  if (!match) return undefined;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return match[1] === '-' ? -minutes : minutes;
}

/**
 * What a TZID means: an IANA name; the IANA tail of a prefixed one
 * (`/mozilla.org/…/Europe/Rome`); the VTIMEZONE's X-LIC-LOCATION; a Windows
 * name; else the VTIMEZONE's standard offset, fixed.
 */
function zoneResolver(calendars: Component[]): (tzid: string) => Zone | undefined {
  const definitions = new Map<string, Component>();
  for (const calendar of calendars) {
    for (const child of calendar.children) {
      const id = child.name === 'VTIMEZONE' ? first(child, 'TZID')?.value : undefined;
      if (id !== undefined) definitions.set(id, child);
    }
  }
  const cache = new Map<string, Zone | undefined>();
  return (tzid) => {
    if (cache.has(tzid)) return cache.get(tzid);
    const definition = definitions.get(tzid);
    const location = definition ? first(definition, 'X-LIC-LOCATION')?.value : undefined;
    const tail = /([A-Za-z_]+\/[A-Za-z_+-]+(?:\/[A-Za-z_+-]+)?)$/.exec(tzid)?.[1];
    let zone =
      ianaZone(tzid) ??
      (tail ? ianaZone(tail) : undefined) ??
      (location ? ianaZone(location) : undefined) ??
      (WINDOWS_ZONES[tzid] ? ianaZone(WINDOWS_ZONES[tzid]!) : undefined);
    if (!zone && definition) {
      const standard =
        definition.children.find((child) => child.name === 'STANDARD') ?? definition.children[0];
      const minutes = standard ? parseOffset(first(standard, 'TZOFFSETTO')?.value) : undefined;
      if (minutes !== undefined) zone = { kind: 'fixed', minutes };
    }
    cache.set(tzid, zone);
    return zone;
  };
}

// ---------------------------------------------------------------------------
// Dates of events

/** A DTSTART-like value: a date (all day) or a date-time in a zone (floating ones take the display zone). */
interface Moment {
  allDay: boolean;
  wall: WallTime;
  zone: Zone;
  /** The zone named by TZID or Z, for the output. */
  zoneName?: string;
}

function parseMoment(property: Property, resolve: (tzid: string) => Zone | undefined, display: Zone): Moment {
  const value = property.value.trim().split(',')[0]!;
  const date = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  const bad = () => new ExecutorFailure('Corrupt', `${property.name} "${value.slice(0, 40)}" is not a date`);
  if (date) {
    const wall = {
      year: Number(date[1]),
      month: Number(date[2]),
      day: Number(date[3]),
      hour: 0,
      minute: 0,
      second: 0,
    };
    if (!realDay(wall)) throw bad();
    return { allDay: true, wall, zone: { kind: 'fixed', minutes: 0 } };
  }
  const time = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/i.exec(value);
  if (!time) throw bad();
  const wall = {
    year: Number(time[1]),
    month: Number(time[2]),
    day: Number(time[3]),
    hour: Number(time[4]),
    minute: Number(time[5]),
    second: Math.min(59, Number(time[6])),
  };
  if (!realDay(wall) || wall.hour > 23 || wall.minute > 59) throw bad();
  if (time[7]) return { allDay: false, wall, zone: { kind: 'fixed', minutes: 0 }, zoneName: 'UTC' };
  const tzid = property.params.get('TZID');
  if (tzid !== undefined) {
    const zone = resolve(tzid);
    if (zone)
      return { allDay: false, wall, zone, zoneName: zone.kind === 'iana' ? zone.name : tzid.slice(0, 64) };
  }
  return { allDay: false, wall, zone: display };
}

function realDay(wall: Pick<WallTime, 'year' | 'month' | 'day'>): boolean {
  const check = new Date(Date.UTC(wall.year, wall.month - 1, wall.day));
  return (
    check.getUTCFullYear() === wall.year &&
    check.getUTCMonth() === wall.month - 1 &&
    check.getUTCDate() === wall.day
  );
}

/** `P1DT2H30M`, `-PT15M`, `P2W` in milliseconds. */
function parseDuration(value: string): number | undefined {
  const match = /^([+-])?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(value.trim());
  if (!match) return undefined;
  const [, sign, weeks, days, hours, minutes, seconds] = match;
  const total =
    Number(weeks ?? 0) * 7 * DAY_MS +
    Number(days ?? 0) * DAY_MS +
    Number(hours ?? 0) * 3_600_000 +
    Number(minutes ?? 0) * 60_000 +
    Number(seconds ?? 0) * 1000;
  return sign === '-' ? -total : total;
}

function addDays(wall: WallTime, days: number): WallTime {
  const moved = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + days));
  return { ...wall, year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

// ---------------------------------------------------------------------------
// Recurrence: DAILY, WEEKLY (with plain BYDAY), MONTHLY and YEARLY on the start's day; others listed as is

const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

interface Rule {
  freq: 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY';
  interval: number;
  count?: number;
  until?: number;
  byDay?: number[];
}

/** The rule when this executor can expand it, else undefined (the series is then listed once, as is). */
function parseRule(value: string, resolveUntil: (text: string) => number | undefined): Rule | undefined {
  const parts = new Map<string, string>();
  for (const part of value.split(';')) {
    const equals = part.indexOf('=');
    if (equals > 0) parts.set(part.slice(0, equals).toUpperCase(), part.slice(equals + 1).toUpperCase());
  }
  const freq = parts.get('FREQ');
  if (freq !== 'DAILY' && freq !== 'WEEKLY' && freq !== 'MONTHLY' && freq !== 'YEARLY') return undefined;
  for (const key of parts.keys()) {
    if (!['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'WKST', 'BYDAY'].includes(key)) return undefined;
  }
  const rule: Rule = { freq, interval: 1 };
  const interval = parts.get('INTERVAL');
  if (interval !== undefined) {
    if (!/^\d{1,4}$/.test(interval) || Number(interval) === 0) return undefined;
    rule.interval = Number(interval);
  }
  const count = parts.get('COUNT');
  if (count !== undefined) {
    if (!/^\d{1,6}$/.test(count)) return undefined;
    rule.count = Number(count);
  }
  const until = parts.get('UNTIL');
  if (until !== undefined) {
    rule.until = resolveUntil(until);
    if (rule.until === undefined) return undefined;
  }
  const byDay = parts.get('BYDAY');
  if (byDay !== undefined) {
    if (freq !== 'WEEKLY') return undefined;
    const days = byDay.split(',').map((day) => WEEKDAYS.indexOf(day));
    if (days.some((day) => day === -1)) return undefined;
    rule.byDay = [...new Set(days)].sort((a, b) => a - b);
  }
  return rule;
}

/**
 * Whole periods of a series that end before the range starts, so a daily
 * series begun years ago is not walked day by day. Only without COUNT, which
 * needs every occurrence counted from the first. Periods are taken at their
 * longest (31-day months, leap years), so none in the range is skipped.
 */
function skipPeriods(startInstant: number, rule: Rule, range: Range): number {
  const span = range.start - startInstant;
  const length = { DAILY: 1, WEEKLY: 7, MONTHLY: 31, YEARLY: 366 }[rule.freq] * rule.interval * DAY_MS;
  return Math.max(0, Math.floor(span / length) - 2);
}

function weekday(wall: WallTime): number {
  return new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay();
}

/** Start wall times of a series, in order, from period `from` (0: the first), for at most MAX_PERIODS periods. */
function* occurrences(start: WallTime, rule: Rule, from: number): Generator<WallTime> {
  for (let period = from; period < from + MAX_PERIODS; period++) {
    if (rule.freq === 'DAILY') {
      yield addDays(start, period * rule.interval);
    } else if (rule.freq === 'WEEKLY') {
      const days = rule.byDay ?? [weekday(start)];
      // Weeks start on Monday here (the default WKST); the week of the start first.
      const monday = addDays(start, -((weekday(start) + 6) % 7) + period * 7 * rule.interval);
      for (const day of days.map((value) => (value + 6) % 7).sort((a, b) => a - b)) {
        const candidate = addDays(monday, day);
        if (
          period === 0 &&
          Date.UTC(candidate.year, candidate.month - 1, candidate.day) <
            Date.UTC(start.year, start.month - 1, start.day)
        ) {
          continue;
        }
        yield candidate;
      }
    } else {
      const months = rule.freq === 'MONTHLY' ? period * rule.interval : period * rule.interval * 12;
      const target = new Date(Date.UTC(start.year, start.month - 1 + months, 1));
      const candidate = { ...start, year: target.getUTCFullYear(), month: target.getUTCMonth() + 1 };
      // A month without the start's day (the 31st, 29 February) has no occurrence.
      if (realDay(candidate)) yield candidate;
    }
  }
}

// ---------------------------------------------------------------------------
// From components to the events of a range

interface Range {
  start: number;
  end: number;
}

interface Listed {
  event: Event;
  sortKey: number;
}

function instantOf(moment: Moment, display: Zone): number {
  return moment.allDay ? toInstant(moment.wall, display) : toInstant(moment.wall, moment.zone);
}

function showMoment(instant: number, moment: Moment, display: Zone, wall?: WallTime): string {
  return moment.allDay ? isoDate(wall ?? moment.wall) : isoInZone(instant, display);
}

function baseEvent(component: Component): Omit<Event, 'start' | 'end' | 'all_day' | 'recurring'> {
  const categories = component.properties
    .filter((property) => property.name === 'CATEGORIES')
    .flatMap((property) => property.value.split(/(?<!\\),/).map((category) => unescapeText(category).trim()))
    .filter(Boolean)
    .slice(0, 20);
  const optional = (key: string, name: string) => {
    const text = shortText(first(component, name)?.value);
    return text === undefined ? {} : { [key]: text };
  };
  return {
    uid: (first(component, 'UID')?.value.trim() || '(no uid)').slice(0, 255),
    summary: shortText(first(component, 'SUMMARY')?.value) ?? '(no title)',
    ...optional('location', 'LOCATION'),
    ...optional('description', 'DESCRIPTION'),
    ...(first(component, 'STATUS')
      ? { status: first(component, 'STATUS')!.value.trim().toLowerCase().slice(0, 20) }
      : {}),
    ...(categories.length > 0 ? { categories } : {}),
  };
}

/** The events of all VEVENTs that overlap the range: series expanded, overrides and exceptions applied. */
function eventsIn(
  calendars: Component[],
  range: Range,
  display: Zone,
): { listed: Listed[]; skipped: number } {
  const resolve = zoneResolver(calendars);
  const listed: Listed[] = [];
  let skipped = 0;
  const vevents = calendars.flatMap((calendar) =>
    calendar.children.filter((child) => child.name === 'VEVENT'),
  );
  // Instances moved or changed by a RECURRENCE-ID: the series skips them, they stand alone.
  const overridden = new Set<string>();
  for (const component of vevents) {
    const recurrenceId = first(component, 'RECURRENCE-ID');
    const uid = first(component, 'UID')?.value.trim() ?? '';
    if (!recurrenceId) continue;
    try {
      overridden.add(`${uid}\n${instantOf(parseMoment(recurrenceId, resolve, display), display)}`);
    } catch {
      skipped++;
    }
  }
  for (const component of vevents) {
    try {
      const startProperty = first(component, 'DTSTART');
      if (!startProperty) {
        skipped++;
        continue;
      }
      const start = parseMoment(startProperty, resolve, display);
      const startInstant = instantOf(start, display);
      const endProperty = first(component, 'DTEND');
      const durationProperty = first(component, 'DURATION');
      let length: number;
      if (endProperty) {
        length = Math.max(0, instantOf(parseMoment(endProperty, resolve, display), display) - startInstant);
      } else if (durationProperty) {
        length = Math.max(0, parseDuration(durationProperty.value) ?? 0);
      } else {
        length = start.allDay ? DAY_MS : 0;
      }
      const lengthDays = Math.max(1, Math.round(length / DAY_MS));
      const base = baseEvent(component);
      const ruleProperty = first(component, 'RRULE');
      const isOverride = first(component, 'RECURRENCE-ID') !== undefined;
      const emit = (wall: WallTime, instant: number, extra: Partial<Event>) => {
        const endInstant = start.allDay ? toInstant(addDays(wall, lengthDays), display) : instant + length;
        const overlaps =
          (endInstant > range.start && instant < range.end) ||
          (endInstant === instant && instant >= range.start && instant < range.end);
        if (!overlaps) return;
        listed.push({
          sortKey: instant,
          event: {
            ...base,
            start: showMoment(instant, start, display, wall),
            end: start.allDay ? isoDate(addDays(wall, lengthDays)) : isoInZone(endInstant, display),
            all_day: start.allDay,
            ...(start.zoneName ? { timezone: start.zoneName } : {}),
            recurring: ruleProperty !== undefined || isOverride,
            ...extra,
          },
        });
      };
      if (!ruleProperty || isOverride) {
        emit(start.wall, startInstant, {});
        continue;
      }
      const rrule = ruleProperty.value.trim().slice(0, 500);
      const rule = parseRule(rrule, (text) => {
        try {
          const until = parseMoment({ name: 'UNTIL', params: new Map(), value: text }, resolve, display);
          // A date alone includes its whole day.
          return instantOf(until, display) + (until.allDay ? DAY_MS - 1 : 0);
        } catch {
          return undefined;
        }
      });
      if (!rule) {
        // Listed once, as the series, when it may touch the range: the caller sees the rule as is.
        if (startInstant < range.end) {
          listed.push({
            sortKey: startInstant,
            event: {
              ...base,
              start: showMoment(startInstant, start, display),
              end: start.allDay
                ? isoDate(addDays(start.wall, lengthDays))
                : isoInZone(startInstant + length, display),
              all_day: start.allDay,
              ...(start.zoneName ? { timezone: start.zoneName } : {}),
              recurring: true,
              rrule,
              recurrence_expanded: false,
            },
          });
        }
        continue;
      }
      const excluded = new Set<number>();
      for (const property of component.properties.filter((entry) => entry.name === 'EXDATE')) {
        for (const value of property.value.split(',')) {
          try {
            excluded.add(instantOf(parseMoment({ ...property, value }, resolve, display), display));
          } catch {
            // an unreadable exception date excludes nothing
          }
        }
      }
      const uid = first(component, 'UID')?.value.trim() ?? '';
      let emitted = 0;
      let index = 0;
      for (const wall of occurrences(
        start.wall,
        rule,
        rule.count === undefined ? skipPeriods(startInstant, rule, range) : 0,
      )) {
        const instant = instantOf({ ...start, wall }, display);
        if (rule.until !== undefined && instant > rule.until) break;
        if (rule.count !== undefined && index >= rule.count) break;
        index++;
        if (instant >= range.end) break;
        if (excluded.has(instant) || overridden.has(`${uid}\n${instant}`)) continue;
        const before = listed.length;
        emit(wall, instant, { rrule, recurrence_expanded: true });
        if (listed.length > before && ++emitted >= MAX_OCCURRENCES) break;
      }
    } catch (error) {
      if (!(error instanceof ExecutorFailure) || error.errorClass !== 'Corrupt') throw error;
      skipped++;
    }
  }
  return { listed, skipped };
}

// ---------------------------------------------------------------------------
// The range asked for

function displayZone(args: Args, ctx: ExecutorContext): { zone: Zone; name: string } {
  const configured = typeof ctx.config.timezone === 'string' ? ctx.config.timezone : undefined;
  const name = args.timezone ?? configured ?? 'UTC';
  const zone = ianaZone(name);
  if (!zone) {
    throw new ExecutorFailure(
      'UnknownTimezone',
      `"${name.slice(0, 64)}" is not an IANA time zone (e.g. "Europe/Rome" or "UTC")`,
    );
  }
  return { zone, name };
}

/** `2026-05-04`, `2026-05-04T09:00` (in the display zone) or with `Z` / an offset. */
function parseBound(value: string, zone: Zone, what: string): number {
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
      `${what} "${value.slice(0, 40)}" is not a date like 2026-05-04 or 2026-05-04T09:00`,
    );
  }
  const offset = match[7];
  if (offset === undefined) return toInstant(wall, zone);
  const minutes = offset.toUpperCase() === 'Z' ? 0 : (parseOffset(offset.replace(':', '')) ?? 0);
  return (
    Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) - minutes * 60_000
  );
}

function rangeOf(args: Args, zone: Zone): Range {
  const today = wallOf(Date.now(), zone);
  const start =
    args.start !== undefined
      ? parseBound(args.start, zone, 'start')
      : toInstant({ ...today, hour: 0, minute: 0, second: 0 }, zone);
  const end =
    args.end !== undefined
      ? parseBound(args.end, zone, 'end')
      : toInstant({ ...addDays(wallOf(start, zone), 7), hour: 0, minute: 0, second: 0 }, zone);
  if (end <= start) throw new ExecutorFailure('BadDate', 'end must come after start');
  if (end - start > 3660 * DAY_MS)
    throw new ExecutorFailure('BadDate', 'the range may span at most ten years');
  return { start, end };
}

// ---------------------------------------------------------------------------
// CalDAV: a calendar-query REPORT through the egress proxy, logged in by the host

interface Response {
  status: number;
  body: string;
}

function proxyUrl(): URL | undefined {
  const value = process.env.HTTP_PROXY ?? process.env.http_proxy;
  if (!value) return undefined;
  try {
    return new URL(value.includes('://') ? value : `http://${value}`);
  } catch {
    return undefined;
  }
}

/** One request to the calendar server: absolute-form through the proxy, which adds the person's login. */
async function davRequest(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string,
  ctx: ExecutorContext,
): Promise<Response> {
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
  const exchange = new Promise<Response>((resolve, reject) => {
    const payload = Buffer.from(body, 'utf8');
    const outgoing = httpRequest({
      method,
      path: url.href,
      headers: {
        host: url.host,
        'user-agent': 'Metnos-calendar_list/1.0',
        'metnos-credential': CREDENTIAL,
        'content-length': String(payload.length),
        connection: 'close',
        ...headers,
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
        if (size > MAX_CALENDAR_BYTES) {
          response.destroy();
          reject(
            new ExecutorFailure('TooLarge', `the calendar server sent more than ${MAX_CALENDAR_BYTES} bytes`),
          );
          return;
        }
        chunks.push(chunk);
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

/** Turns a refusal of the proxy or the server into a typed failure; the reason never carries a secret. */
function davFailure(response: Response, what: string): ExecutorFailure {
  const text = response.body.replace(/\s+/g, ' ').trim().slice(0, 200);
  if (text.startsWith(PROXY_REFUSAL)) {
    const reason = text.slice(PROXY_REFUSAL.length).trim();
    if (response.status === 401)
      return new ExecutorFailure('AuthFailed', `the calendar server refused the login: ${reason}`);
    if (response.status === 403)
      return new ExecutorFailure('Forbidden', `the egress proxy refused: ${reason}`);
    return new ExecutorFailure('Network', `the egress proxy could not reach the calendar server: ${reason}`);
  }
  if (response.status === 401)
    return new ExecutorFailure('AuthFailed', 'the calendar server refused the login (HTTP 401)');
  if (response.status === 403)
    return new ExecutorFailure('Forbidden', `the calendar server forbids ${what} (HTTP 403)`);
  if (response.status === 404)
    return new ExecutorFailure(
      'NotFound',
      'the calendar server has no calendar at the configured URL (HTTP 404)',
    );
  return new ExecutorFailure('HttpError', `the calendar server answered HTTP ${response.status} to ${what}`);
}

function decodeXml(text: string): string {
  const cdata = /^\s*<!\[CDATA\[([\s\S]*)\]\]>\s*$/.exec(text);
  if (cdata) return cdata[1]!;
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|lt|gt|amp|quot|apos);/gi, (whole, entity: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
    if (entity[0] !== '#') return named[entity.toLowerCase()] ?? whole;
    const code =
      entity[1] === 'x' || entity[1] === 'X' ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
      ? String.fromCodePoint(code)
      : '\uFFFD';
  });
}

function davStamp(instant: number): string {
  return new Date(instant)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

async function caldavCalendars(
  ctx: ExecutorContext,
  range: Range,
): Promise<{ calendars: Component[]; shown: string }> {
  const credential = ctx.credentials[CREDENTIAL];
  if (credential?.kind !== 'http') {
    throw new ExecutorFailure(
      'NotConfigured',
      `no "${CREDENTIAL}" credential is configured for CalDAV; list an .ics file instead`,
    );
  }
  const url = new URL(credential.url);
  const query = `<?xml version="1.0" encoding="utf-8"?>
<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
  <D:prop><D:getetag/><C:calendar-data/></D:prop>
  <C:filter>
    <C:comp-filter name="VCALENDAR">
      <C:comp-filter name="VEVENT">
        <C:time-range start="${davStamp(range.start)}" end="${davStamp(range.end)}"/>
      </C:comp-filter>
    </C:comp-filter>
  </C:filter>
</C:calendar-query>`;
  const response = await davRequest(
    url,
    'REPORT',
    { depth: '1', 'content-type': 'application/xml; charset=utf-8', accept: 'application/xml' },
    query,
    ctx,
  );
  if (response.status !== 207) throw davFailure(response, 'listing events');
  const calendars: Component[] = [];
  const data = /<(?:[\w.-]+:)?calendar-data\b[^>]*>([\s\S]*?)<\/(?:[\w.-]+:)?calendar-data\s*>/g;
  for (let match = data.exec(response.body); match !== null; match = data.exec(response.body)) {
    calendars.push(
      ...parseCalendar(decodeXml(match[1]!)).filter((component) => component.name === 'VCALENDAR'),
    );
  }
  return { calendars, shown: `${url.origin}${url.pathname}` };
}

// ---------------------------------------------------------------------------

async function fileCalendars(
  args: Args,
  ctx: ExecutorContext,
): Promise<{ calendars: Component[]; shown: string }> {
  const configured = typeof ctx.config.calendar_file === 'string' ? ctx.config.calendar_file : undefined;
  const path = await resolveAllowedPath(args.file ?? configured ?? DEFAULT_FILE, ctx, {
    roots: ctx.profile.fs.read,
    verb: 'read',
  });
  const shown = displayPath(path, ctx);
  const info = await stat(path).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ExecutorFailure('NotFound', `${shown} does not exist`);
    if (code === 'EACCES' || code === 'EPERM')
      throw new ExecutorFailure('PermissionDenied', `${shown} cannot be read`);
    throw error;
  });
  if (!info.isFile()) throw new ExecutorFailure('NotFound', `${shown} is not a file`);
  if (info.size > MAX_CALENDAR_BYTES) {
    throw new ExecutorFailure(
      'TooLarge',
      `${shown} is ${info.size} bytes; calendars up to ${MAX_CALENDAR_BYTES} bytes are read`,
    );
  }
  const calendars = parseCalendar(await readFile(path, 'utf8')).filter(
    (component) => component.name === 'VCALENDAR',
  );
  if (calendars.length === 0) throw new ExecutorFailure('Corrupt', `${shown} holds no VCALENDAR`);
  return { calendars, shown };
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const display = displayZone(args, ctx);
    const range = rangeOf(args, display.zone);
    const source = args.file !== undefined ? 'file' : (args.source ?? 'auto');
    const useDav = source === 'caldav' || (source === 'auto' && ctx.credentials[CREDENTIAL] !== undefined);
    const { calendars, shown } = useDav ? await caldavCalendars(ctx, range) : await fileCalendars(args, ctx);
    const { listed, skipped } = eventsIn(calendars, range, display.zone);
    const words = (args.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const matching = listed
      .filter(({ event }) => {
        if (words.length === 0) return true;
        const text =
          `${event.summary} ${event.location ?? ''} ${event.description ?? ''} ${(event.categories ?? []).join(' ')}`.toLowerCase();
        return words.every((word) => text.includes(word));
      })
      .sort((a, b) => a.sortKey - b.sortKey || a.event.summary.localeCompare(b.event.summary));
    const limit = args.limit ?? 100;
    return ok({
      source: useDav ? 'caldav' : 'file',
      calendar: shown,
      timezone: display.name,
      start: isoInZone(range.start, display.zone),
      end: isoInZone(range.end, display.zone),
      events: matching.slice(0, limit).map(({ event }) => event),
      count: matching.length,
      truncated: matching.length > limit,
      skipped,
    });
  },
});
