import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CredentialSet, loadCredentials } from '@metnos/executor-sdk';
import { birth } from '@metnos/sandbox/birth';
import {
  type CalendarServer,
  calendarAccount,
  calendarServerUnavailable,
  RADICALE_PYTHON,
  startCalendarServer,
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..');
const executor = birth(dir);
const lister = birth(join(dir, '..', 'calendar_list'));

/**
 * Reads a calendar with python3-vobject (a Radicale dependency): every VEVENT's
 * summary, description, location, start and end in UTC, and its occurrences
 * (at most 10) as dateutil expands its rule.
 */
const READ_WITH_VOBJECT = `
import datetime, json, sys, vobject
calendar = vobject.readOne(open(sys.argv[1], encoding='utf-8').read())
def utc(value):
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
    return value.isoformat()
events = []
for event in calendar.vevent_list:
    found = {'summary': event.summary.value, 'start': utc(event.dtstart.value), 'end': utc(event.dtend.value)}
    for name in ('description', 'location'):
        if hasattr(event, name): found[name] = getattr(event, name).value
    if hasattr(event, 'rrule'):
        found['occurrences'] = [utc(moment) for moment in list(event.getrruleset())[:10]]
    if hasattr(event, 'valarm'): found['alarm'] = str(event.valarm.trigger.value)
    events.append(found)
print(json.dumps(events))
`;

const EXISTING = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Someone else//EN
BEGIN:VTIMEZONE
TZID:Europe/Rome
BEGIN:STANDARD
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
END:DAYLIGHT
END:VTIMEZONE
BEGIN:VEVENT
UID:old@example.com
DTSTAMP:20260101T000000Z
DTSTART;TZID=Europe/Rome:20260505T120000
DTEND;TZID=Europe/Rome:20260505T130000
SUMMARY:Lunch with Ada
END:VEVENT
END:VCALENDAR
`;

let workspace: string;

beforeAll(async () => {
  if (!existsSync(RADICALE_PYTHON))
    throw new Error(`${RADICALE_PYTHON} (Debian's python3) is needed to read calendars back`);
  workspace = await mkdtemp(join(tmpdir(), 'metnos-calendar-add-'));
  await writeFile(join(workspace, 'existing.ics'), EXISTING);
  await writeFile(join(workspace, 'notes.txt'), 'not a calendar\n');
});

afterAll(() => rm(workspace, { recursive: true, force: true }));

const add = (
  args: Record<string, unknown>,
  options: { config?: Record<string, unknown>; credentials?: CredentialSet } = {},
) => executor.invoke(args, { workspace, asOf: '2026-04-20T08:00:00Z', ...options });
const readBack = (relative: string) =>
  JSON.parse(
    execFileSync(RADICALE_PYTHON, ['-c', READ_WITH_VOBJECT, join(workspace, relative)], { encoding: 'utf8' }),
  ) as Array<Record<string, unknown>>;
const titles = (result: unknown) =>
  (result as { content: { events: Array<{ start: string; summary: string }> } }).content.events.map(
    (event) => `${event.start} ${event.summary}`,
  );

describe('calendar_add birth: an .ics file', () => {
  it('creates the calendar with a timed event in its zone: VTIMEZONE, escapes, folding, alarm', async () => {
    const description = 'Bring the X-ray, the card; and the form.\nSecond line: é'.padEnd(200, ' ·');
    const result = await add(
      {
        summary: 'Dentist',
        start: '2026-05-04T09:00',
        location: 'Via Roma 1, Bologna',
        description,
        alarm_minutes: 30,
      },
      { config: { timezone: 'Europe/Rome' } },
    );
    expect(result).toMatchObject({
      ok: true,
      content: {
        source: 'file',
        calendar: 'calendar.ics',
        summary: 'Dentist',
        start: '2026-05-04T09:00:00+02:00',
        end: '2026-05-04T10:00:00+02:00',
        all_day: false,
        timezone: 'Europe/Rome',
        created_file: true,
        uid: expect.stringMatching(/^[0-9a-f-]{36}@metnos$/),
      },
    });
    const text = await readFile(join(workspace, 'calendar.ics'), 'utf8');
    expect(text.endsWith('END:VCALENDAR\r\n')).toBe(true);
    expect(text.split('\r\n').every((line) => Buffer.byteLength(line) <= 75)).toBe(true);
    expect(text).toContain('DTSTART;TZID=Europe/Rome:20260504T090000\r\n');
    expect(text).toContain('DTSTAMP:20260420T080000Z\r\n');
    expect(text).toContain(
      'BEGIN:DAYLIGHT\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nEND:DAYLIGHT',
    );
    expect(text).toContain(
      'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100',
    );
    expect(readBack('calendar.ics')).toEqual([
      {
        summary: 'Dentist',
        start: '2026-05-04T07:00:00Z',
        end: '2026-05-04T08:00:00Z',
        description,
        location: 'Via Roma 1, Bologna',
        alarm: '-1 day, 23:30:00',
      },
    ]);
  });

  it('adds to an existing calendar without repeating its VTIMEZONE, keeping its line endings', async () => {
    const result = await add({
      file: 'existing.ics',
      summary: 'Call Bob',
      start: '2026-05-05T15:00',
      timezone: 'Europe/Rome',
    });
    expect(result).toMatchObject({ ok: true, content: { calendar: 'existing.ics', created_file: false } });
    const text = await readFile(join(workspace, 'existing.ics'), 'utf8');
    expect(text.match(/BEGIN:VTIMEZONE/g)).toHaveLength(1);
    expect(text).not.toContain('\r');
    expect(text.startsWith(EXISTING.replace('END:VCALENDAR\n', ''))).toBe(true);
    const listed = await lister.invoke(
      { file: 'existing.ics', start: '2026-05-05', end: '2026-05-06', timezone: 'Europe/Rome' },
      { workspace },
    );
    expect(titles(listed)).toEqual([
      '2026-05-05T12:00:00+02:00 Lunch with Ada',
      '2026-05-05T15:00:00+02:00 Call Bob',
    ]);
  });

  it('writes all-day events with the day after as DTEND, UTC events with Z, and moves an instant into the zone', async () => {
    expect(
      await add({ file: 'more.ics', summary: 'Trip', start: '2026-05-04', end: '2026-05-06' }),
    ).toMatchObject({
      ok: true,
      content: { all_day: true, start: '2026-05-04', end: '2026-05-07', created_file: true },
    });
    expect(
      await add({
        file: 'more.ics',
        summary: 'Standup',
        start: '2026-05-04T07:30',
        timezone: 'UTC',
        duration_minutes: 15,
      }),
    ).toMatchObject({
      ok: true,
      content: { start: '2026-05-04T07:30:00+00:00', end: '2026-05-04T07:45:00+00:00' },
    });
    expect(
      await add({
        file: 'more.ics',
        summary: 'New York call',
        start: '2026-05-04T13:00:00Z',
        timezone: 'America/New_York',
      }),
    ).toMatchObject({ ok: true, content: { start: '2026-05-04T09:00:00-04:00' } });
    const text = await readFile(join(workspace, 'more.ics'), 'utf8');
    expect(text).toContain('DTSTART;VALUE=DATE:20260504\r\nDTEND;VALUE=DATE:20260507\r\n');
    expect(text).toContain('DTSTART:20260504T073000Z\r\nDTEND:20260504T074500Z\r\n');
    expect(text).toContain('DTSTART;TZID=America/New_York:20260504T090000\r\n');
    expect(text).toContain('DTSTART:19700308T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU');
    expect(text).toContain('DTSTART:19701101T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU');
    expect(readBack('more.ics').map((event) => `${event.start} ${event.end} ${event.summary}`)).toEqual([
      '2026-05-04 2026-05-07 Trip',
      '2026-05-04T07:30:00Z 2026-05-04T07:45:00Z Standup',
      '2026-05-04T13:00:00Z 2026-05-04T14:00:00Z New York call',
    ]);
  });

  it('writes a repeating event that keeps its local time across daylight saving, as readers expand it', async () => {
    const result = await add({
      file: 'weekly.ics',
      summary: 'Yoga',
      start: '2026-03-16T19:00',
      timezone: 'Europe/Rome',
      rrule: 'freq=weekly;byday=MO;count=4',
    });
    expect(result).toMatchObject({ ok: true, content: { rrule: 'FREQ=WEEKLY;BYDAY=MO;COUNT=4' } });
    expect(readBack('weekly.ics')[0]!.occurrences).toEqual([
      '2026-03-16T18:00:00Z',
      '2026-03-23T18:00:00Z',
      '2026-03-30T17:00:00Z',
      '2026-04-06T17:00:00Z',
    ]);
    const listed = await lister.invoke(
      { file: 'weekly.ics', start: '2026-03-01', end: '2026-05-01', timezone: 'Europe/Rome' },
      { workspace },
    );
    expect(titles(listed)).toEqual([
      '2026-03-16T19:00:00+01:00 Yoga',
      '2026-03-23T19:00:00+01:00 Yoga',
      '2026-03-30T19:00:00+02:00 Yoga',
      '2026-04-06T19:00:00+02:00 Yoga',
    ]);
  });

  it('never lets text break out of its property', async () => {
    const result = await add({
      file: 'inject.ics',
      summary: 'Lunch\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:Injected',
      description: 'ok\r\nEND:VCALENDAR\r\nBEGIN:VCALENDAR',
      location: 'a;b,c\\d',
      start: '2026-05-04T12:00',
    });
    expect(result).toMatchObject({ ok: true });
    const events = readBack('inject.ics');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      summary: 'Lunch END:VEVENT BEGIN:VEVENT SUMMARY:Injected',
      description: 'ok\nEND:VCALENDAR\nBEGIN:VCALENDAR',
      location: 'a;b,c\\d',
    });
  });

  it('fails with typed errors on bad dates, rules, zones, files and hostile arguments, writing nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ summary: 'x', start: 'tomorrow 9am' }, 'BadDate'],
      [{ summary: 'x', start: '2026-02-30T10:00' }, 'BadDate'],
      [{ summary: 'x', start: '2026-05-04T10:00', end: '2026-05-04T09:00' }, 'BadDate'],
      [{ summary: 'x', start: '2026-05-04', end: '2026-05-05T10:00' }, 'BadDate'],
      [{ summary: 'x', start: '2026-05-04T10:00', rrule: 'FREQ=HOURLY' }, 'BadRule'],
      [{ summary: 'x', start: '2026-05-04T10:00', rrule: 'FREQ=DAILY;COUNT=2;UNTIL=20260601' }, 'BadRule'],
      [{ summary: 'x', start: '2026-05-04T10:00', rrule: 'FREQ=DAILY;BYHOUR=9' }, 'BadRule'],
      [{ summary: 'x', start: '2026-05-04T10:00', rrule: 'FREQ=DAILY;constructor=1' }, 'BadRule'],
      [{ summary: 'x', start: '2026-05-04T10:00', rrule: 'FREQ=DAILY;__proto__=1' }, 'InvalidInput'],
      [{ summary: 'x', start: '2026-05-04T10:00', timezone: 'Mars/Olympus' }, 'UnknownTimezone'],
      [{ summary: 'x', start: '2026-05-04T10:00', file: 'notes.txt' }, 'Corrupt'],
      [{ summary: 'x', start: '2026-05-04T10:00', file: 'no/such/folder.ics' }, 'NotFound'],
      [{ summary: 'x', start: '2026-05-04T10:00', source: 'caldav' }, 'NotConfigured'],
      [{ summary: 'x', start: '2026-05-04T10:00', rrule: 'FREQ=DAILY;COUNT=1\r\nX:1' }, 'InvalidInput'],
    ];
    for (const [args, errorClass] of cases) {
      expect(await add(args), JSON.stringify(args)).toMatchObject({
        ok: false,
        error: { class: errorClass },
      });
    }
    expect(await readFile(join(workspace, 'notes.txt'), 'utf8')).toBe('not a calendar\n');
    for (const file of ['/etc/cron.d/evil.ics', '../outside.ics', '.audit/x.ics']) {
      expect(await add({ summary: 'x', start: '2026-05-04T10:00', file }), file).toMatchObject({
        ok: false,
        error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
      });
    }
    const hostile = JSON.parse(
      '{"summary": "x", "start": "2026-05-04", "__proto__": {"file": "../x.ics"}}',
    ) as Record<string, unknown>;
    expect(await add(hostile)).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
  });
});

const unavailable = calendarServerUnavailable();
if (unavailable) console.warn(`skipping the CalDAV birth tests of calendar_add: ${unavailable}`);

describe.skipIf(unavailable)('calendar_add birth: CalDAV on a real Radicale', () => {
  let server: CalendarServer;
  let credentials: CredentialSet;
  let wrongPassword: CredentialSet;
  let dav: ReturnType<typeof birth>;
  let davLister: ReturnType<typeof birth>;

  beforeAll(async () => {
    server = await startCalendarServer();
    const account = calendarAccount(server);
    const configDir = await mkdtemp(join(tmpdir(), 'metnos-calendar-config-'));
    await writeFile(join(configDir, 'credentials.toml'), account.toml, { mode: 0o600 });
    credentials = await loadCredentials({ configDir, env: account.env });
    wrongPassword = await loadCredentials({
      configDir,
      env: { METNOS_TEST_CALENDAR_PASSWORD: 'not-the-password' },
    });
    dav = birth(dir, { hostOverrides: account.hostOverrides });
    davLister = birth(join(dir, '..', 'calendar_list'), { hostOverrides: account.hostOverrides });
  });

  afterAll(() => server?.stop());

  it('PUTs the event to the server, logged in by the host, and calendar_list finds it there', async () => {
    const result = await dav.invoke(
      { summary: 'Team dinner', start: '2026-05-08T20:00', timezone: 'Europe/Rome', location: 'Trattoria' },
      { workspace, credentials },
    );
    expect(result).toMatchObject({
      ok: true,
      content: {
        source: 'caldav',
        calendar: 'http://dav.metnos.test:5232/me/calendar/',
        start: '2026-05-08T20:00:00+02:00',
      },
    });
    expect(JSON.stringify(result)).not.toContain(server.password);
    const uid = (result as { content: { uid: string } }).content.uid;
    const stored = await server.objects();
    expect(Object.keys(stored)).toEqual([uid.replace(/@metnos$/, '')]);
    expect(Object.values(stored)[0]).toContain('DTSTART;TZID=Europe/Rome:20260508T200000');
    const listed = await davLister.invoke(
      { start: '2026-05-08', end: '2026-05-09', timezone: 'Europe/Rome' },
      { workspace, credentials },
    );
    expect(titles(listed)).toEqual(['2026-05-08T20:00:00+02:00 Team dinner']);
  });

  it('is AuthFailed with a wrong password, adds nothing and never shows it', async () => {
    const before = Object.keys(await server.objects());
    const refused = await dav.invoke(
      { summary: 'x', start: '2026-05-09T10:00' },
      { workspace, credentials: wrongPassword },
    );
    expect(refused).toMatchObject({ ok: false, error: { class: 'AuthFailed' } });
    expect(JSON.stringify(refused)).not.toContain('not-the-password');
    expect(Object.keys(await server.objects())).toEqual(before);
  });
});
