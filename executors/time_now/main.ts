import { defineExecutor, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

interface Args {
  timezone?: string;
  at?: string;
  locale?: string;
  format?: string;
}

interface Output {
  timezone: string;
  iso: string;
  utc: string;
  epoch_ms: number;
  epoch_seconds: number;
  date: string;
  time: string;
  weekday: string;
  weekday_local: string;
  iso_weekday: number;
  iso_week: number;
  utc_offset: string;
  long: string;
  formatted?: string;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const TOKENS = /\[([^\]]*)\]|YYYY|MMMM|MMM|MM|DD|dddd|ddd|HH|mm|ss|Z/g;

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

function parseInstant(at: string | undefined): Date {
  if (at === undefined) return new Date();
  const date = /^\d{1,16}$/.test(at) ? new Date(Number(at)) : new Date(at);
  if (Number.isNaN(date.getTime())) {
    throw new ExecutorFailure(
      'BadInstant',
      `"${at}" is neither an ISO 8601 timestamp nor epoch milliseconds`,
    );
  }
  return date;
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
      `"${timezone}" is not an IANA time zone (try e.g. "Europe/Rome" or "UTC")`,
    );
  }
}

function wallClock(formatter: Intl.DateTimeFormat, date: Date): WallClock {
  const parts = Object.fromEntries(
    formatter.formatToParts(date).map((part) => [part.type, Number(part.value)]),
  );
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

function offsetText(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const absolute = Math.abs(minutes);
  return `${sign}${pad(Math.floor(absolute / 60))}:${pad(absolute % 60)}`;
}

/** ISO 8601 week number of a calendar date. */
function isoWeek(year: number, month: number, day: number): number {
  const date = new Date(Date.UTC(year, month - 1, day));
  const weekday = date.getUTCDay() || 7;
  date.setUTCDate(date.getUTCDate() + 4 - weekday);
  const yearStart = Date.UTC(date.getUTCFullYear(), 0, 1);
  return Math.ceil(((date.getTime() - yearStart) / 86_400_000 + 1) / 7);
}

function checkedLocale(locale: string): string {
  try {
    return Intl.getCanonicalLocales(locale)[0] ?? 'en-GB';
  } catch {
    throw new ExecutorFailure('BadLocale', `"${locale}" is not a BCP 47 locale such as "it-IT" or "en-US"`);
  }
}

export default defineExecutor<Args, Output>({
  run(args, ctx) {
    const configured = typeof ctx.config.timezone === 'string' ? ctx.config.timezone : undefined;
    const requested = args.timezone ?? configured ?? 'UTC';
    const locale = checkedLocale(args.locale ?? 'en-GB');
    const formatter = zoneFormatter(requested);
    // ICU may answer with a legacy alias (Asia/Kolkata -> Asia/Calcutta); keep the caller's name, in canonical case.
    const resolved = formatter.resolvedOptions().timeZone;
    const timezone = resolved.toLowerCase() === requested.toLowerCase() ? resolved : requested;
    const date = parseInstant(args.at);
    const epochMs = date.getTime();

    const local = wallClock(formatter, date);
    const wallMs = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
    const offsetMinutes = Math.round((wallMs - Math.floor(epochMs / 1000) * 1000) / 60_000);
    const offset = offsetText(offsetMinutes);
    const weekdayIndex = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
    const dateText = `${pad(local.year, 4)}-${pad(local.month)}-${pad(local.day)}`;
    const timeText = `${pad(local.hour)}:${pad(local.minute)}:${pad(local.second)}`;

    const named = (options: Intl.DateTimeFormatOptions) =>
      new Intl.DateTimeFormat(locale, { timeZone: timezone, ...options }).format(date);
    const output: Output = {
      timezone,
      iso: `${dateText}T${timeText}${offset}`,
      utc: date.toISOString(),
      epoch_ms: epochMs,
      epoch_seconds: Math.floor(epochMs / 1000),
      date: dateText,
      time: timeText,
      weekday: WEEKDAYS[weekdayIndex]!,
      weekday_local: named({ weekday: 'long' }),
      iso_weekday: weekdayIndex === 0 ? 7 : weekdayIndex,
      iso_week: isoWeek(local.year, local.month, local.day),
      utc_offset: offset,
      long: named({ dateStyle: 'full', timeStyle: 'long' }),
    };
    if (args.format !== undefined) {
      const values: Record<string, () => string> = {
        YYYY: () => pad(local.year, 4),
        MMMM: () => named({ month: 'long' }),
        MMM: () => named({ month: 'short' }),
        MM: () => pad(local.month),
        DD: () => pad(local.day),
        dddd: () => output.weekday_local,
        ddd: () => named({ weekday: 'short' }),
        HH: () => pad(local.hour),
        mm: () => pad(local.minute),
        ss: () => pad(local.second),
        Z: () => offset,
      };
      output.formatted = args.format.replace(TOKENS, (token, literal: string | undefined) =>
        literal !== undefined ? literal : (values[token]?.() ?? token),
      );
    }
    return ok(output);
  },
});
