import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, '..');

const PLACES: Record<string, unknown[]> = {
  Bologna: [
    {
      id: 3181928,
      name: 'Bologna',
      latitude: 44.49381,
      longitude: 11.33875,
      elevation: 54,
      country_code: 'IT',
      country: 'Italy',
      admin1: 'Emilia-Romagna',
      timezone: 'Europe/Rome',
    },
  ],
  Paris: [
    {
      name: 'Paris',
      latitude: 48.85341,
      longitude: 2.3488,
      country_code: 'FR',
      country: 'France',
      admin1: 'Île-de-France',
      timezone: 'Europe/Paris',
    },
    {
      name: 'Paris',
      latitude: 33.66094,
      longitude: -95.55551,
      country_code: 'US',
      country: 'United States',
      admin1: 'Texas',
      timezone: 'America/Chicago',
    },
  ],
};

/** What the loopback server received: path, query and Host header of each request. */
let received: Array<{ host: string; path: string; query: URLSearchParams }> = [];

/** A loopback server speaking the parts of the Open-Meteo forecast and geocoding APIs weather_get uses. */
function openMeteo(request: { url?: string; headers: { host?: string } }): {
  status: number;
  body: string | Buffer;
  headers?: Record<string, string>;
  delay?: number;
} {
  const url = new URL(request.url ?? '/', 'http://loopback');
  received.push({ host: request.headers.host ?? '', path: url.pathname, query: url.searchParams });
  const json = (status: number, value: unknown) => ({ status, body: JSON.stringify(value) });
  if (url.pathname === '/v1/search') {
    const results = PLACES[url.searchParams.get('name') ?? ''];
    return json(200, results ? { results, generationtime_ms: 0.4 } : { generationtime_ms: 0.2 });
  }
  if (url.pathname !== '/v1/forecast') return json(404, { error: true, reason: 'Not Found' });
  const latitude = Number(url.searchParams.get('latitude'));
  const days = Number(url.searchParams.get('forecast_days'));
  if (latitude === 0) return json(400, { error: true, reason: 'Parameter current has an invalid value' });
  if (latitude === 1) return json(429, { error: true, reason: 'Minutely API request limit exceeded' });
  if (latitude === 2) return { status: 200, body: '{"current": ' };
  if (latitude === 3) return { ...json(200, {}), delay: 20_000 };
  const imperial = url.searchParams.get('temperature_unit') === 'fahrenheit';
  const dates = Array.from({ length: days }, (_, index) => `2026-05-${String(index + 1).padStart(2, '0')}`);
  const answer = {
    latitude,
    longitude: Number(url.searchParams.get('longitude')),
    timezone: url.searchParams.get('timezone') === 'auto' ? 'Europe/Rome' : url.searchParams.get('timezone'),
    current: {
      time: '2026-05-01T14:15',
      interval: 900,
      weather_code: 2,
      is_day: 1,
      temperature_2m: imperial ? 70.3 : 21.3,
      apparent_temperature: imperial ? 69.1 : 20.6,
      relative_humidity_2m: 48,
      precipitation: 0,
      wind_speed_10m: imperial ? 6.5 : 10.4,
      wind_direction_10m: 225,
    },
    daily: {
      time: dates,
      weather_code: dates.map((_, index) => [2, 61, 95][index % 3]),
      temperature_2m_max: dates.map((_, index) => 22 + index),
      temperature_2m_min: dates.map((_, index) => 11 + index),
      precipitation_sum: dates.map((_, index) => index * 1.5),
      precipitation_probability_max: dates.map((_, index) => index * 30),
      wind_speed_10m_max: dates.map(() => 18.2),
      sunrise: dates.map((date) => `${date}T06:02`),
      sunset: dates.map((date) => `${date}T20:24`),
    },
  };
  if (latitude === 4) {
    // Hostile: a prototype key, a string where a number belongs, a huge series and a huge string.
    const hostile = JSON.parse(JSON.stringify(answer)) as {
      current: Record<string, unknown>;
      daily: Record<string, unknown>;
    };
    hostile.current.temperature_2m = '1e999';
    hostile.daily.time = Array.from({ length: 100_000 }, () => 'x'.repeat(10));
    hostile.daily.weather_code = Array.from({ length: 100_000 }, () => 3);
    hostile.daily.sunrise = ['s'.repeat(10_000)];
    const text = JSON.stringify(hostile).replace(
      '"current":{',
      '"current":{"__proto__":{"temperature_2m":-99},',
    );
    return { status: 200, body: text };
  }
  if (latitude === 5) {
    return { status: 200, body: gzipSync(JSON.stringify(answer)), headers: { 'content-encoding': 'gzip' } };
  }
  return json(200, answer);
}

let server: Server;
let executor: ReturnType<typeof birth>;
let unreachable: ReturnType<typeof birth>;
let config: Record<string, unknown>;
let deadConfig: Record<string, unknown>;

beforeAll(async () => {
  server = createServer((request, response) => {
    const answer = openMeteo(request);
    const send = () =>
      response
        .writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
        .end(answer.body);
    if (answer.delay) setTimeout(send, answer.delay).unref();
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port: deadPort } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));

  // Both Open-Meteo hosts are on the profile's allow-list; the operator maps them to the loopback server.
  const hostOverrides = {
    'api.open-meteo.com': `127.0.0.1:${port}`,
    'geocoding-api.open-meteo.com': `127.0.0.1:${port}`,
  };
  const deadOverrides = {
    'api.open-meteo.com': `127.0.0.1:${deadPort}`,
    'geocoding-api.open-meteo.com': `127.0.0.1:${deadPort}`,
  };
  executor = birth(dir, { hostOverrides });
  unreachable = birth(dir, { hostOverrides: deadOverrides });
  const base = {
    base_url: 'http://api.open-meteo.com',
    geocoding_url: 'http://geocoding-api.open-meteo.com',
  };
  // No host_overrides in the instance settings: a call that reaches the loopback server went through the proxy.
  config = base;
  deadConfig = base;
});

beforeEach(() => {
  received = [];
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const weather = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  executor.invoke(args, { config: { ...config, ...extra } });

describe('weather_get birth', () => {
  it('looks a place up, then returns current conditions and a daily forecast in metric units', async () => {
    const result = await weather({ place: 'Bologna' });
    expect(result).toMatchObject({
      ok: true,
      content: {
        place: {
          name: 'Bologna',
          country: 'Italy',
          region: 'Emilia-Romagna',
          latitude: 44.49381,
          longitude: 11.33875,
          elevation: 54,
          timezone: 'Europe/Rome',
        },
        units: { temperature: '°C', precipitation: 'mm', wind_speed: 'km/h' },
        current: {
          time: '2026-05-01T14:15',
          conditions: 'partly cloudy',
          weather_code: 2,
          temperature: 21.3,
          apparent_temperature: 20.6,
          humidity: 48,
          wind_speed: 10.4,
          wind_direction: 225,
          is_day: true,
        },
      },
    });
    const daily = (result as { content: { daily: unknown[] } }).content.daily;
    expect(daily).toEqual([
      {
        date: '2026-05-01',
        conditions: 'partly cloudy',
        weather_code: 2,
        temperature_max: 22,
        temperature_min: 11,
        precipitation_sum: 0,
        precipitation_probability_max: 0,
        wind_speed_max: 18.2,
        sunrise: '2026-05-01T06:02',
        sunset: '2026-05-01T20:24',
      },
      expect.objectContaining({ date: '2026-05-02', conditions: 'slight rain', precipitation_sum: 1.5 }),
      expect.objectContaining({ date: '2026-05-03', conditions: 'thunderstorm', temperature_max: 24 }),
    ]);
    expect(received.map((entry) => `${entry.host} ${entry.path}`)).toEqual([
      'geocoding-api.open-meteo.com /v1/search',
      'api.open-meteo.com /v1/forecast',
    ]);
    const query = received[1]!.query;
    expect(Object.fromEntries(query)).toMatchObject({
      latitude: '44.49381',
      longitude: '11.33875',
      timezone: 'Europe/Rome',
      forecast_days: '3',
    });
    expect(query.get('current')).toContain('temperature_2m');
    expect(query.has('temperature_unit')).toBe(false);
  });

  it('picks the place whose country or region follows the comma, and asks for imperial units', async () => {
    const result = await weather({ place: 'Paris, Texas', units: 'imperial', days: 1 });
    expect(result).toMatchObject({
      ok: true,
      content: {
        place: { name: 'Paris', region: 'Texas', timezone: 'America/Chicago' },
        units: { temperature: '°F', precipitation: 'inch', wind_speed: 'mph' },
        current: { temperature: 70.3 },
        daily: [{ date: '2026-05-01' }],
      },
    });
    expect(Object.fromEntries(received[1]!.query)).toMatchObject({
      temperature_unit: 'fahrenheit',
      wind_speed_unit: 'mph',
      precipitation_unit: 'inch',
      forecast_days: '1',
    });
    expect(await weather({ place: 'Paris, FR' })).toMatchObject({
      ok: true,
      content: { place: { country: 'France' } },
    });
  });

  it('takes coordinates without looking anything up, and reads a gzip answer', async () => {
    const result = await weather({ latitude: 5, longitude: 11.5, place: 'the cabin' });
    expect(result).toMatchObject({
      ok: true,
      content: { place: { name: 'the cabin', latitude: 5, longitude: 11.5, timezone: 'Europe/Rome' } },
    });
    expect(received.map((entry) => entry.path)).toEqual(['/v1/forecast']);
    expect(received[0]!.query.get('timezone')).toBe('auto');
  });

  it('fails with NoPlace, PlaceNotFound, HttpError with the reason, RateLimited, BadResponse and Timeout', async () => {
    expect(await weather({})).toMatchObject({ ok: false, error: { class: 'NoPlace' } });
    expect(await weather({ latitude: 10 })).toMatchObject({ ok: false, error: { class: 'NoPlace' } });
    expect(await weather({ place: 'Nowhere' })).toMatchObject({
      ok: false,
      error: { class: 'PlaceNotFound' },
    });
    expect(await weather({ place: 'Paris, Japan' })).toMatchObject({
      ok: false,
      error: { class: 'PlaceNotFound' },
    });
    expect(await weather({ latitude: 0, longitude: 0 })).toMatchObject({
      ok: false,
      error: {
        class: 'HttpError',
        message: expect.stringContaining('Parameter current has an invalid value'),
      },
    });
    expect(await weather({ latitude: 1, longitude: 0 })).toMatchObject({
      ok: false,
      error: { class: 'RateLimited' },
    });
    expect(await weather({ latitude: 2, longitude: 0 })).toMatchObject({
      ok: false,
      error: { class: 'BadResponse' },
    });
    expect(await weather({ latitude: 3, longitude: 0 }, { timeout_ms: 1000 })).toMatchObject({
      ok: false,
      error: { class: 'Timeout' },
    });
    expect(await unreachable.invoke({ latitude: 44, longitude: 11 }, { config: deadConfig })).toMatchObject({
      ok: false,
      error: { class: 'Network' },
    });
  });

  it('keeps a hostile answer in bounds: no prototype keys, no strings for numbers, the days asked for', async () => {
    const result = await weather({ latitude: 4, longitude: 0, days: 2 });
    expect(result).toMatchObject({ ok: true });
    const content = (
      result as { content: { current: Record<string, unknown>; daily: Array<Record<string, unknown>> } }
    ).content;
    expect(content.current.temperature).toBeUndefined();
    expect(content.daily).toHaveLength(2);
    expect(String(content.daily[0]!.sunrise).length).toBeLessThanOrEqual(40);
  });

  it('uses only configured base URLs on the allow-list, and the instance can narrow it', async () => {
    const refusals = [
      { base_url: 'http://evil.example.net' },
      { base_url: 'http://127.0.0.1:8080' },
      { base_url: 'http://user:secret@api.open-meteo.com' },
      { base_url: 'http://api.open-meteo.com:8080' },
      { base_url: 'file:///etc/passwd' },
      { geocoding_url: 'http://geocoding.example.org' },
    ];
    for (const extra of refusals) {
      const result = await weather({ place: 'Bologna' }, extra);
      expect(result, JSON.stringify(extra)).toMatchObject({
        ok: false,
        error: { class: 'Forbidden', message: expect.not.stringContaining('egress proxy') },
      });
      expect(JSON.stringify(result)).not.toContain('secret');
    }
    expect(received.filter((entry) => entry.path === '/v1/forecast')).toEqual([]);
    expect(
      await weather({ latitude: 44, longitude: 11 }, { allowed_domains: ['geocoding-api.open-meteo.com'] }),
    ).toMatchObject({ ok: false, error: { class: 'Forbidden' } });
  });

  it('refuses hostile arguments with typed failures', async () => {
    const hostile = JSON.parse('{"place": "Bologna", "__proto__": {"units": "imperial"}}') as Record<
      string,
      unknown
    >;
    expect(await weather(hostile)).toMatchObject({ ok: false, error: { class: 'InvalidInput' } });
    expect(await weather({ latitude: 91, longitude: 0 })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    expect(await weather({ place: 'x'.repeat(201) })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    expect(await weather({ place: 'Bologna', days: 17 })).toMatchObject({
      ok: false,
      error: { class: 'InvalidInput' },
    });
    expect(await weather({ place: 'Bologna', url: 'http://evil.example.net/' })).toMatchObject({
      ok: false,
      error: { class: expect.stringMatching(/^(InvalidInput|PolicyViolation)$/) },
    });
  });
});
