import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { describe, expect, it } from 'vitest';

const executor = birth(join(import.meta.dirname, '..'));

describe('time_now birth', () => {
  it('converts an instant to a zone across a daylight-saving offset', async () => {
    const summer = await executor.invoke({ timezone: 'Europe/Rome', at: '2026-07-03T10:15:30Z' });
    expect(summer).toMatchObject({
      ok: true,
      content: {
        iso: '2026-07-03T12:15:30+02:00',
        date: '2026-07-03',
        time: '12:15:30',
        weekday: 'Friday',
        iso_weekday: 5,
        utc_offset: '+02:00',
        epoch_seconds: 1783073730,
      },
    });
    const winter = await executor.invoke({ timezone: 'Europe/Rome', at: '2026-01-15T23:30:00Z' });
    expect(winter).toMatchObject({
      ok: true,
      content: { iso: '2026-01-16T00:30:00+01:00', weekday: 'Friday', iso_week: 3 },
    });
  });

  it('tells the current time, in the configured zone by default', async () => {
    const before = Date.now();
    const result = await executor.invoke({}, { config: { timezone: 'Asia/Kolkata' } });
    expect(result).toMatchObject({ ok: true, content: { timezone: 'Asia/Kolkata', utc_offset: '+05:30' } });
    const epoch = (result as { content: { epoch_ms: number } }).content.epoch_ms;
    expect(epoch).toBeGreaterThanOrEqual(before - 1000);
    expect(epoch).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('renders a custom format in a locale', async () => {
    const result = await executor.invoke({
      timezone: 'America/New_York',
      at: '2026-12-25T17:00:00Z',
      locale: 'it-IT',
      format: 'dddd DD MMMM YYYY [alle] HH:mm Z',
    });
    expect(result).toMatchObject({
      ok: true,
      content: {
        weekday: 'Friday',
        weekday_local: 'venerdì',
        formatted: 'venerdì 25 dicembre 2026 alle 12:00 -05:00',
      },
    });
  });

  it('fails with UnknownTimezone and BadInstant', async () => {
    expect(await executor.invoke({ timezone: 'Mars/Olympus' })).toMatchObject({
      ok: false,
      error: { class: 'UnknownTimezone' },
    });
    expect(await executor.invoke({ at: 'yesterday-ish' })).toMatchObject({
      ok: false,
      error: { class: 'BadInstant' },
    });
  });
});
