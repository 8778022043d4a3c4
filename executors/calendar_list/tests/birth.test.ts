import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CredentialSet, loadCredentials } from '@metnos/executor-sdk';
import { birth } from '@metnos/sandbox/birth';
import {
  type CalendarServer,
  calendarAccount,
  calendarServerUnavailable,
  startCalendarServer,
} from '@metnos/tooling/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..');
const crlf = (text: string) => `${text.trim().split('\n').join('\r\n')}\r\n`;

const ROME = `BEGIN:VTIMEZONE
TZID:Europe/Rome
X-LIC-LOCATION:Europe/Rome
BEGIN:DAYLIGHT
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE`;

const STANDUP = `BEGIN:VEVENT
UID:standup@example.com
DTSTAMP:20260301T000000Z
DTSTART;TZID=Europe/Rome:20260316T093000
DTEND;TZID=Europe/Rome:20260316T094500
RRULE:FREQ=WEEKLY;BYDAY=MO,WE
EXDATE;TZID=Europe/Rome:20260330T093000
SUMMARY:Stand-up
END:VEVENT
BEGIN:VEVENT
UID:standup@example.com
DTSTAMP:20260301T000000Z
RECURRENCE-ID;TZID=Europe/Rome:20260401T093000
DTSTART;TZID=Europe/Rome:20260401T110000
DTEND;TZID=Europe/Rome:20260401T111500
SUMMARY:Stand-up (moved)
END:VEVENT`;

const DENTIST = `BEGIN:VEVENT
UID:dentist@example.com
DTSTAMP:20260301T000000Z
DTSTART:20260331T140000Z
DTEND:20260331T150000Z
SUMMARY:Dentist
LOCATION:Via Roma 1\\, Bologna
DESCRIPTION:Bring the X-ray\\, and the card.\\nA second line long enough to be fo
 lded by the writer\\; RFC 5545 folds at seventy-five octets.
END:VEVENT`;

const CALENDAR = crlf(`BEGIN:VCALENDAR
PRODID:-//Google Inc//Google Calendar 70.9054//EN
VERSION:2.0
CALSCALE:GREGORIAN
${ROME}
${STANDUP}
${DENTIST}
BEGIN:VEVENT
UID:holiday@example.com
DTSTART;VALUE=DATE:20260402
DTEND;VALUE=DATE:20260404
SUMMARY:Easter trip
CATEGORIES:travel,family
END:VEVENT
BEGIN:VEVENT
UID:board@example.com
DTSTART;TZID=W. Europe Standard Time:20260402T160000
DURATION:PT2H
SUMMARY:Board meeting
END:VEVENT
BEGIN:VEVENT
UID:bookclub@example.com
DTSTART;TZID=Europe/Rome:20260106T180000
DTEND;TZID=Europe/Rome:20260106T190000
RRULE:FREQ=MONTHLY;BYDAY=1TU
SUMMARY:Book club
END:VEVENT
BEGIN:VEVENT
UID:broken@example.com
DTSTART:2026-04-01
SUMMARY:Broken date
END:VEVENT
BEGIN:VEVENT
UID:floating@example.com
DTSTART:20260401T080000
DTEND:20260401T083000
SUMMARY:Floating breakfast
END:VEVENT
BEGIN:VEVENT
UID:proto@example.com
__PROTO__;__proto__=x:y
DTSTART:20260403T100000Z
SUMMARY;__proto__=1;constructor=2:Proto party
END:VEVENT
END:VCALENDAR`);

const RECURRING = crlf(`BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Metnos tests//EN
BEGIN:VEVENT
UID:walk
DTSTART;TZID=Europe/Rome:20150101T070000
DURATION:PT30M
RRULE:FREQ=DAILY
SUMMARY:Walk
END:VEVENT
BEGIN:VEVENT
UID:pills
DTSTART;TZID=Europe/Rome:20260326T200000
RRULE:FREQ=DAILY;COUNT=3
SUMMARY:Pills
END:VEVENT
BEGIN:VEVENT
UID:gym
DTSTART;TZID=Europe/Rome:20260303T183000
DTEND;TZID=Europe/Rome:20260303T193000
RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20260402T000000Z
SUMMARY:Gym
END:VEVENT
BEGIN:VEVENT
UID:rent
DTSTART;VALUE=DATE:20260131
RRULE:FREQ=MONTHLY
SUMMARY:Rent
END:VEVENT
BEGIN:VEVENT
UID:leap
DTSTART;VALUE=DATE:20000229
RRULE:FREQ=YEARLY
SUMMARY:Leap birthday
END:VEVENT
END:VCALENDAR`);

let workspace: string;
const executor = birth(dir);

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-calendar-list-'));
  await writeFile(join(workspace, 'calendar.ics'), CALENDAR);
  await writeFile(join(workspace, 'recurring.ics'), RECURRING);
  await writeFile(
    join(workspace, 'deep.ics'),
    crlf(`${'BEGIN:VCALENDAR\n'.repeat(40)}${'END:VCALENDAR\n'.repeat(40)}`),
  );
  await writeFile(join(workspace, 'unclosed.ics'), crlf('BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x'));
  await writeFile(
    join(workspace, 'crowded.ics'),
    crlf(`BEGIN:VCALENDAR\n${'BEGIN:VEVENT\nEND:VEVENT\n'.repeat(50_001)}END:VCALENDAR`),
  );
  await writeFile(
    join(workspace, 'huge.ics'),
    `BEGIN:VCALENDAR\r\nX-PAD:${'x'.repeat(9 * 1024 * 1024)}\r\nEND:VCALENDAR\r\n`,
  );
});

afterAll(() => rm(workspace, { recursive: true, force: true }));

type Listed = { content: { events: Array<Record<string, unknown>>; skipped: number; count: number } };
const list = (
  args: Record<string, unknown>,
  options: { config?: Record<string, unknown>; credentials?: CredentialSet } = {},
) => executor.invoke(args, { workspace, ...options });
const titles = (result: unknown) =>
  (result as Listed).content.events.map((event) => `${event.start} ${event.summary}`);

/** What the week of 30 March 2026 holds in the fixture, in Rome time: the same from the file and the server. */
const WEEK = [
  '2026-01-06T18:00:00+01:00 Book club',
  '2026-03-31T16:00:00+02:00 Dentist',
  '2026-04-01T08:00:00+02:00 Floating breakfast',
  '2026-04-01T11:00:00+02:00 Stand-up (moved)',
  '2026-04-02 Easter trip',
  '2026-04-02T16:00:00+02:00 Board meeting',
  '2026-04-03T12:00:00+02:00 Proto party',
];

describe('calendar_list birth: an .ics file', () => {
  it('lists a week in its time zone: series expanded with exceptions and a moved instance, all-day, UTC, floating, Windows zones', async () => {
    const result = await list({ start: '2026-03-30', end: '2026-04-06', timezone: 'Europe/Rome' });
    expect(result).toMatchObject({
      ok: true,
      content: {
        source: 'file',
        calendar: 'calendar.ics',
        timezone: 'Europe/Rome',
        start: '2026-03-30T00:00:00+02:00',
        end: '2026-04-06T00:00:00+02:00',
        skipped: 1,
      },
    });
    expect(titles(result)).toEqual(WEEK);
    const events = (result as Listed).content.events;
    expect(events[0]).toMatchObject({
      recurring: true,
      rrule: 'FREQ=MONTHLY;BYDAY=1TU',
      recurrence_expanded: false,
    });
    expect(events[1]).toMatchObject({
      uid: 'dentist@example.com',
      end: '2026-03-31T17:00:00+02:00',
      timezone: 'UTC',
      location: 'Via Roma 1, Bologna',
      description:
        'Bring the X-ray, and the card.\nA second line long enough to be folded by the writer; RFC 5545 folds at seventy-five octets.',
      recurring: false,
    });
    expect(events[3]).toMatchObject({
      uid: 'standup@example.com',
      recurring: true,
      end: '2026-04-01T11:15:00+02:00',
    });
    expect(events[4]).toMatchObject({ all_day: true, end: '2026-04-04', categories: ['travel', 'family'] });
    expect(events[5]).toMatchObject({ timezone: 'Europe/Berlin', end: '2026-04-02T18:00:00+02:00' });
  });

  it('keeps a series at its local time across the change to summer time, and shows another zone on request', async () => {
    const result = await list({
      start: '2026-03-23',
      end: '2026-03-26',
      timezone: 'Europe/Rome',
      query: 'stand-up',
    });
    expect(titles(result)).toEqual([
      '2026-03-23T09:30:00+01:00 Stand-up',
      '2026-03-25T09:30:00+01:00 Stand-up',
    ]);
    const spring = await list({
      start: '2026-03-30',
      end: '2026-04-02',
      timezone: 'Europe/Rome',
      query: 'stand-up',
    });
    expect(titles(spring)).toEqual(['2026-04-01T11:00:00+02:00 Stand-up (moved)']);
    const newYork = await list({
      start: '2026-03-31',
      end: '2026-04-01',
      timezone: 'America/New_York',
      query: 'dentist',
    });
    expect(titles(newYork)).toEqual(['2026-03-31T10:00:00-04:00 Dentist']);
  });

  it('expands daily, counted, fortnightly, monthly and yearly rules', async () => {
    const week = await list({
      file: 'recurring.ics',
      start: '2026-03-26',
      end: '2026-04-02',
      timezone: 'Europe/Rome',
    });
    expect(titles(week)).toEqual([
      '2026-03-26T07:00:00+01:00 Walk',
      '2026-03-26T20:00:00+01:00 Pills',
      '2026-03-27T07:00:00+01:00 Walk',
      '2026-03-27T20:00:00+01:00 Pills',
      '2026-03-28T07:00:00+01:00 Walk',
      '2026-03-28T20:00:00+01:00 Pills',
      '2026-03-29T07:00:00+02:00 Walk',
      '2026-03-30T07:00:00+02:00 Walk',
      '2026-03-31 Rent',
      '2026-03-31T07:00:00+02:00 Walk',
      '2026-03-31T18:30:00+02:00 Gym',
      '2026-04-01T07:00:00+02:00 Walk',
    ]);
    const gym = await list({
      file: 'recurring.ics',
      start: '2026-03-01',
      end: '2026-05-01',
      query: 'gym',
      timezone: 'Europe/Rome',
    });
    expect(titles(gym)).toEqual([
      '2026-03-03T18:30:00+01:00 Gym',
      '2026-03-05T18:30:00+01:00 Gym',
      '2026-03-17T18:30:00+01:00 Gym',
      '2026-03-19T18:30:00+01:00 Gym',
      '2026-03-31T18:30:00+02:00 Gym',
    ]);
    const rent = await list({ file: 'recurring.ics', start: '2026-02-01', end: '2026-06-01', query: 'rent' });
    expect(titles(rent)).toEqual(['2026-03-31 Rent', '2026-05-31 Rent']);
    const leap = await list({
      file: 'recurring.ics',
      start: '2026-01-01',
      end: '2030-01-01',
      query: 'leap',
      limit: 10,
    });
    expect(titles(leap)).toEqual(['2028-02-29 Leap birthday']);
  });

  it("defaults to today's week in the instance's time zone and honours limit", async () => {
    const result = await executor.invoke(
      { limit: 2 },
      {
        workspace,
        config: { timezone: 'Europe/Rome', calendar_file: 'recurring.ics' },
        asOf: '2026-03-30T10:00:00Z',
      },
    );
    expect(result).toMatchObject({
      ok: true,
      content: {
        start: '2026-03-30T00:00:00+02:00',
        end: '2026-04-06T00:00:00+02:00',
        count: 9,
        truncated: true,
      },
    });
    expect(titles(result)).toEqual(['2026-03-30T07:00:00+02:00 Walk', '2026-03-31 Rent']);
  });

  it('fails with typed errors on hostile calendars and arguments', async () => {
    expect(await list({ file: 'deep.ics' })).toMatchObject({ ok: false, error: { class: 'Corrupt' } });
    expect(await list({ file: 'unclosed.ics' })).toMatchObject({ ok: false, error: { class: 'Corrupt' } });
    expect(await list({ file: 'crowded.ics' })).toMatchObject({ ok: false, error: { class: 'TooLarge' } });
    expect(await list({ file: 'huge.ics' })).toMatchObject({ ok: false, error: { class: 'TooLarge' } });
    expect(await list({ file: 'missing.ics' })).toMatchObject({ ok: false, error: { class: 'NotFound' } });
    expect(await list({ start: 'next monday' })).toMatchObject({ ok: false, error: { class: 'BadDate' } });
    expect(await list({ start: '2026-02-30' })).toMatchObject({ ok: false, error: { class: 'BadDate' } });
    expect(await list({ start: '2026-04-02', end: '2026-04-01' })).toMatchObject({
      ok: false,
      error: { class: 'BadDate' },
    });
    expect(await list({ timezone: 'Mars/Olympus' })).toMatchObject({
      ok: false,
      error: { class: 'UnknownTimezone' },
    });
    expect(await list({ source: 'caldav' })).toMatchObject({ ok: false, error: { class: 'NotConfigured' } });
    for (const file of ['/etc/passwd', '../outside.ics']) {
      expect(await list({ file }), file).toMatchObject({
        ok: false,
        error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
      });
    }
    const hostile = JSON.parse('{"start": "2026-04-01", "__proto__": {"source": "caldav"}}') as Record<
      string,
      unknown
    >;
    expect(await list(hostile)).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
  });
});

const unavailable = calendarServerUnavailable();
if (unavailable) console.warn(`skipping the CalDAV birth tests of calendar_list: ${unavailable}`);

describe.skipIf(unavailable)('calendar_list birth: CalDAV on a real Radicale', () => {
  let server: CalendarServer;
  let credentials: CredentialSet;
  let wrongPassword: CredentialSet;
  let dav: ReturnType<typeof birth>;

  beforeAll(async () => {
    server = await startCalendarServer();
    const vcalendar = (body: string) =>
      crlf(`BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Metnos tests//EN\n${body}\nEND:VCALENDAR`);
    await server.put('standup', vcalendar(`${ROME}\n${STANDUP}`));
    await server.put('dentist', vcalendar(DENTIST));
    await server.put(
      'later',
      vcalendar(
        'BEGIN:VEVENT\nUID:later\nDTSTAMP:20260301T000000Z\nDTSTART:20260601T100000Z\nSUMMARY:Later\nEND:VEVENT',
      ),
    );
    const account = calendarAccount(server);
    const configDir = await mkdtemp(join(tmpdir(), 'metnos-calendar-config-'));
    await writeFile(join(configDir, 'credentials.toml'), account.toml, { mode: 0o600 });
    credentials = await loadCredentials({ configDir, env: account.env });
    wrongPassword = await loadCredentials({
      configDir,
      env: { METNOS_TEST_CALENDAR_PASSWORD: 'not-the-password' },
    });
    dav = birth(dir, { hostOverrides: account.hostOverrides });
  });

  afterAll(() => server?.stop());

  it('lists the range from the server with a calendar-query REPORT, logged in by the host', async () => {
    const result = await dav.invoke(
      { start: '2026-03-30', end: '2026-04-06', timezone: 'Europe/Rome' },
      { workspace, credentials },
    );
    expect(result).toMatchObject({
      ok: true,
      content: { source: 'caldav', calendar: 'http://dav.metnos.test:5232/me/calendar/' },
    });
    expect(titles(result)).toEqual([
      '2026-03-31T16:00:00+02:00 Dentist',
      '2026-04-01T11:00:00+02:00 Stand-up (moved)',
    ]);
    expect(JSON.stringify(result)).not.toContain(server.password);
  });

  it('reads the file when asked to, even with a server configured', async () => {
    const result = await dav.invoke(
      { source: 'file', start: '2026-03-30', end: '2026-04-06' },
      { workspace, credentials },
    );
    expect(result).toMatchObject({ ok: true, content: { source: 'file' } });
  });

  it('is AuthFailed with a wrong password, and never shows it', async () => {
    const refused = await dav.invoke({ start: '2026-03-30' }, { workspace, credentials: wrongPassword });
    expect(refused).toMatchObject({ ok: false, error: { class: 'AuthFailed' } });
    expect(JSON.stringify(refused)).not.toContain('not-the-password');
  });
});
