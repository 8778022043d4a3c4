import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { createGunzip, createInflate } from 'node:zlib';
import { defineExecutor, type ExecutorContext, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

type Units = 'metric' | 'imperial';

interface Args {
  place?: string;
  latitude?: number;
  longitude?: number;
  days?: number;
  units?: Units;
  language?: string;
}

interface Place {
  name: string;
  country?: string;
  region?: string;
  latitude: number;
  longitude: number;
  elevation?: number;
  timezone: string;
}

interface Current {
  time: string;
  conditions: string;
  weather_code: number;
  temperature?: number;
  apparent_temperature?: number;
  humidity?: number;
  precipitation?: number;
  wind_speed?: number;
  wind_direction?: number;
  is_day?: boolean;
}

interface Day {
  date: string;
  conditions: string;
  weather_code: number;
  temperature_max?: number;
  temperature_min?: number;
  precipitation_sum?: number;
  precipitation_probability_max?: number;
  wind_speed_max?: number;
  sunrise?: string;
  sunset?: string;
}

interface Output {
  place: Place;
  units: { temperature: string; precipitation: string; wind_speed: string };
  current: Current;
  daily: Day[];
}

const DEFAULT_BASE_URL = 'https://api.open-meteo.com';
const DEFAULT_GEOCODING_URL = 'https://geocoding-api.open-meteo.com';
const MAX_BODY_BYTES = 2 * 1024 * 1024;
const MAX_REQUEST_MS = 10_000;
/** Time kept back from the call's deadline so a timeout is reported by us, not by a kill. */
const DEADLINE_MARGIN_MS = 750;
const PROXY_REFUSAL = 'metnos egress proxy:';
const USER_AGENT = 'Metnos-weather_get/1.0 (+https://metnos.dev)';

const CURRENT_FIELDS = {
  temperature: 'temperature_2m',
  apparent_temperature: 'apparent_temperature',
  humidity: 'relative_humidity_2m',
  precipitation: 'precipitation',
  wind_speed: 'wind_speed_10m',
  wind_direction: 'wind_direction_10m',
} as const;

const DAILY_FIELDS = {
  temperature_max: 'temperature_2m_max',
  temperature_min: 'temperature_2m_min',
  precipitation_sum: 'precipitation_sum',
  precipitation_probability_max: 'precipitation_probability_max',
  wind_speed_max: 'wind_speed_10m_max',
} as const;

/** WMO weather interpretation codes, as the Open-Meteo API documents them. */
const CONDITIONS = new Map<number, string>([
  [0, 'clear sky'],
  [1, 'mainly clear'],
  [2, 'partly cloudy'],
  [3, 'overcast'],
  [45, 'fog'],
  [48, 'depositing rime fog'],
  [51, 'light drizzle'],
  [53, 'moderate drizzle'],
  [55, 'dense drizzle'],
  [56, 'light freezing drizzle'],
  [57, 'dense freezing drizzle'],
  [61, 'slight rain'],
  [63, 'moderate rain'],
  [65, 'heavy rain'],
  [66, 'light freezing rain'],
  [67, 'heavy freezing rain'],
  [71, 'slight snow fall'],
  [73, 'moderate snow fall'],
  [75, 'heavy snow fall'],
  [77, 'snow grains'],
  [80, 'slight rain showers'],
  [81, 'moderate rain showers'],
  [82, 'violent rain showers'],
  [85, 'slight snow showers'],
  [86, 'heavy snow showers'],
  [95, 'thunderstorm'],
  [96, 'thunderstorm with slight hail'],
  [99, 'thunderstorm with heavy hail'],
]);

// ---------------------------------------------------------------------------
// Allow-list

interface DomainRule {
  host: string;
  wildcard: boolean;
  port: number | undefined;
}

function parseRule(entry: string): DomainRule | undefined {
  const match = /^(\*\.)?([a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(entry.trim().toLowerCase());
  if (!match) return undefined;
  return { host: match[2]!, wildcard: match[1] !== undefined, port: match[3] ? Number(match[3]) : undefined };
}

function ruleMatches(rule: DomainRule, host: string, port: number): boolean {
  const nameMatches = rule.wildcard ? host.endsWith(`.${rule.host}`) : host === rule.host;
  const portMatches = rule.port === undefined ? port === 80 || port === 443 : port === rule.port;
  return nameMatches && portMatches;
}

function defaultPort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/**
 * A configured base URL is usable when it is plain http(s) without
 * credentials, query or fragment, and its host is on the profile's
 * allow-list (and on the instance's narrower `allowed_domains`, if set).
 */
function baseUrl(ctx: ExecutorContext, key: 'base_url' | 'geocoding_url', fallback: string): URL {
  const configured = ctx.config[key];
  const text = typeof configured === 'string' && configured !== '' ? configured : fallback;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ExecutorFailure('Forbidden', `the configured ${key} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ExecutorFailure(
      'Forbidden',
      `the configured ${key} must be http or https, not ${url.protocol}`,
    );
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ExecutorFailure(
      'Forbidden',
      `the configured ${key} may not carry credentials, a query or a fragment`,
    );
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
    throw new ExecutorFailure(
      'Forbidden',
      `the configured ${key} names an IP address; only allow-listed domains`,
    );
  }
  const port = defaultPort(url);
  const rules = (ctx.profile.network.mode === 'allowlist' ? ctx.profile.network.domains : [])
    .map(parseRule)
    .filter((rule): rule is DomainRule => rule !== undefined);
  if (!rules.some((rule) => ruleMatches(rule, host, port))) {
    throw new ExecutorFailure(
      'Forbidden',
      `the configured ${key} host ${host}:${port} is not on this executor's allow-list`,
    );
  }
  const narrowed = ctx.config.allowed_domains;
  if (Array.isArray(narrowed)) {
    const instanceRules = narrowed
      .filter((entry): entry is string => typeof entry === 'string')
      .map(parseRule)
      .filter((rule): rule is DomainRule => rule !== undefined);
    if (!instanceRules.some((rule) => ruleMatches(rule, host, port))) {
      throw new ExecutorFailure('Forbidden', `${host} is not among the domains this instance allows`);
    }
  }
  return url;
}

// ---------------------------------------------------------------------------
// HTTP client: direct, or through the sandbox's egress proxy (HTTP_PROXY / HTTPS_PROXY)

interface Fetched {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface RequestPlan {
  url: URL;
  deadline: number;
  /** Operator mapping of host names to `host:port`, used only for direct connections. */
  overrides: Record<string, string>;
}

function proxyFor(url: URL): URL | undefined {
  const env = process.env;
  const value =
    url.protocol === 'https:'
      ? (env.HTTPS_PROXY ?? env.https_proxy ?? env.ALL_PROXY ?? env.all_proxy)
      : (env.HTTP_PROXY ?? env.http_proxy ?? env.ALL_PROXY ?? env.all_proxy);
  if (!value) return undefined;
  try {
    return new URL(value.includes('://') ? value : `http://${value}`);
  } catch {
    return undefined;
  }
}

function classifySocketError(error: NodeJS.ErrnoException, host: string): ExecutorFailure {
  if (error instanceof ExecutorFailure) return error;
  const code = error.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA' || code === 'EAI_NONAME') {
    return new ExecutorFailure('DnsError', `${host} does not resolve (${code})`);
  }
  return new ExecutorFailure(
    'Network',
    `could not reach ${host}: ${error.message}${code ? ` (${code})` : ''}`,
  );
}

function proxyRefusal(status: number, text: string, host: string): ExecutorFailure | undefined {
  if (!text.startsWith(PROXY_REFUSAL)) return undefined;
  const reason = text.slice(PROXY_REFUSAL.length).trim();
  if (/does not resolve/.test(reason))
    return new ExecutorFailure('DnsError', `${host} does not resolve (${reason})`);
  if (status === 403) return new ExecutorFailure('Forbidden', `the egress proxy refused ${host}: ${reason}`);
  return new ExecutorFailure('Network', `the egress proxy failed for ${host}: ${reason}`);
}

/** Opens a TCP (and, for https, TLS) connection to the target, tunnelling through the proxy when there is one. */
async function openSocket(plan: RequestPlan, proxy: URL | undefined): Promise<Socket> {
  const { url } = plan;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = defaultPort(url);
  const secure = url.protocol === 'https:';
  const connected = (socket: Socket, event: 'connect' | 'secureConnect') =>
    new Promise<Socket>((resolve, reject) => {
      socket.once(event, () => resolve(socket));
      socket.once('error', (error) => reject(classifySocketError(error, host)));
    });

  if (!proxy) {
    const override = plan.overrides[host.toLowerCase()];
    const [targetHost, targetPort] = override
      ? [override.replace(/:\d+$/, ''), Number(override.split(':').at(-1))]
      : [host, port];
    if (secure) {
      return connected(
        tlsConnect({ host: targetHost, port: targetPort, servername: host, ALPNProtocols: ['http/1.1'] }),
        'secureConnect',
      );
    }
    return connected(netConnect({ host: targetHost, port: targetPort }), 'connect');
  }
  if (!secure)
    return connected(netConnect({ host: proxy.hostname, port: Number(proxy.port || 80) }), 'connect');

  const tunnel = await new Promise<Socket>((resolve, reject) => {
    const connectRequest = httpRequest({
      host: proxy.hostname,
      port: Number(proxy.port || 80),
      method: 'CONNECT',
      path: `${host}:${port}`,
      headers: { host: `${host}:${port}` },
      agent: false,
    });
    connectRequest.once('connect', (response, socket, head) => {
      if (response.statusCode === 200) {
        resolve(socket);
        return;
      }
      const chunks: Buffer[] = [head];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.once('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        reject(
          proxyRefusal(response.statusCode ?? 0, text, host) ??
            new ExecutorFailure('Network', `the egress proxy answered ${response.statusCode} for ${host}`),
        );
      });
    });
    connectRequest.once('error', (error) => reject(classifySocketError(error, host)));
    connectRequest.end();
  });
  return connected(
    tlsConnect({ socket: tunnel, servername: host, ALPNProtocols: ['http/1.1'] }),
    'secureConnect',
  );
}

function decoded(response: IncomingMessage): NodeJS.ReadableStream {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .toLowerCase()
    .trim();
  if (encoding === 'gzip' || encoding === 'x-gzip') return response.pipe(createGunzip());
  if (encoding === 'deflate') return response.pipe(createInflate());
  return response;
}

/** One GET, with a byte cap on the decompressed body and a deadline on the whole exchange. */
async function get(plan: RequestPlan): Promise<Fetched> {
  const { url } = plan;
  const proxy = proxyFor(url);
  const viaProxy = proxy !== undefined && url.protocol === 'http:';
  const sockets: Socket[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        for (const socket of sockets) socket.destroy();
        reject(new ExecutorFailure('Timeout', `${url.host} did not answer in time`));
      },
      Math.max(0, plan.deadline - Date.now()),
    );
  });
  const exchange = (async (): Promise<Fetched> => {
    const socket = await openSocket(plan, proxy);
    sockets.push(socket);
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = httpRequest({
        method: 'GET',
        path: viaProxy ? url.href : `${url.pathname}${url.search}`,
        headers: {
          host: url.host,
          'user-agent': USER_AGENT,
          accept: 'application/json',
          'accept-encoding': 'gzip, deflate',
          connection: 'close',
        },
        createConnection: () => socket,
      });
      outgoing.once('response', resolve);
      outgoing.once('error', (error) => reject(classifySocketError(error, url.hostname)));
      outgoing.end();
    });
    const chunks: Buffer[] = [];
    let size = 0;
    const stream = decoded(response);
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          response.destroy();
          reject(new ExecutorFailure('TooLarge', `${url.host} sent more than ${MAX_BODY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      stream.once('end', resolve);
      stream.once('error', (error: Error) =>
        reject(new ExecutorFailure('Network', `the response from ${url.host} broke off: ${error.message}`)),
      );
    });
    return { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) };
  })();
  try {
    return await Promise.race([exchange, timeout]);
  } finally {
    clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
    exchange.catch(() => undefined);
  }
}

/** GETs a JSON document and returns it parsed, with the API's own error reason when it refuses. */
async function getJson(url: URL, ctx: ExecutorContext): Promise<Record<string, unknown>> {
  const configured = numberOf(ctx.config.timeout_ms);
  const limit =
    configured !== undefined && configured > 0 ? Math.min(configured, MAX_REQUEST_MS) : MAX_REQUEST_MS;
  const remaining = ctx.remainingMs() - DEADLINE_MARGIN_MS;
  const deadline = Date.now() + Math.max(100, Math.min(limit, remaining));
  const overrides =
    ctx.config.host_overrides !== null && typeof ctx.config.host_overrides === 'object'
      ? (ctx.config.host_overrides as Record<string, string>)
      : {};
  const response = await get({ url, deadline, overrides });
  const text = response.body.toString('utf8');
  if (response.status === 403) {
    const refusal = proxyRefusal(403, text, url.hostname);
    if (refusal) throw refusal;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const reason =
    body !== null && typeof body === 'object' && typeof (body as { reason?: unknown }).reason === 'string'
      ? (body as { reason: string }).reason.slice(0, 300)
      : text.replace(/\s+/g, ' ').slice(0, 200);
  if (response.status === 429) {
    throw new ExecutorFailure('RateLimited', `${url.host} asks to slow down (HTTP 429): ${reason}`);
  }
  if (response.status >= 400) {
    throw new ExecutorFailure('HttpError', `${url.host} answered HTTP ${response.status}: ${reason}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ExecutorFailure('BadResponse', `${url.host} did not answer with a JSON object`);
  }
  return body as Record<string, unknown>;
}

// ---------------------------------------------------------------------------
// Reading the answers: own properties only, numbers that are numbers, strings kept short

function own(record: unknown, key: string): unknown {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  return Object.hasOwn(record, key) ? (record as Record<string, unknown>)[key] : undefined;
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function shortText(value: unknown, max = 120): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, max) : undefined;
}

function conditionsOf(code: number): string {
  return CONDITIONS.get(code) ?? `weather code ${code}`;
}

/** Geocoding: the first result, or the first whose country or region matches the words after a comma. */
async function findPlace(name: string, language: string, ctx: ExecutorContext): Promise<Place> {
  const [city = '', ...qualifiers] = name.split(',').map((part) => part.trim());
  if (city.length < 2)
    throw new ExecutorFailure('PlaceNotFound', `"${name.slice(0, 80)}" is too short to look up`);
  const url = baseUrl(ctx, 'geocoding_url', DEFAULT_GEOCODING_URL);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/search`;
  url.search = new URLSearchParams({ name: city, count: '10', language, format: 'json' }).toString();
  const answer = await getJson(url, ctx);
  const results = own(answer, 'results');
  const candidates = (Array.isArray(results) ? results.slice(0, 10) : [])
    .map((entry): { place: Place; code?: string } | undefined => {
      const latitude = numberOf(own(entry, 'latitude'));
      const longitude = numberOf(own(entry, 'longitude'));
      const placeName = shortText(own(entry, 'name'));
      if (latitude === undefined || longitude === undefined || placeName === undefined) return undefined;
      if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return undefined;
      const country = shortText(own(entry, 'country'));
      const region = shortText(own(entry, 'admin1'));
      const elevation = numberOf(own(entry, 'elevation'));
      const place: Place = {
        name: placeName,
        ...(country ? { country } : {}),
        ...(region ? { region } : {}),
        latitude,
        longitude,
        ...(elevation !== undefined ? { elevation } : {}),
        timezone: shortText(own(entry, 'timezone'), 64) ?? 'auto',
      };
      return { place, code: shortText(own(entry, 'country_code'), 8)?.toLowerCase() };
    })
    .filter((candidate) => candidate !== undefined);
  const wanted = qualifiers.map((part) => part.toLowerCase()).filter(Boolean);
  const match = candidates.find(({ place, code }) =>
    wanted.every(
      (word) =>
        place.country?.toLowerCase() === word || place.region?.toLowerCase() === word || code === word,
    ),
  )?.place;
  if (!match) {
    throw new ExecutorFailure(
      'PlaceNotFound',
      `no place called "${name.slice(0, 80)}" was found; try another spelling or give latitude and longitude`,
    );
  }
  return match;
}

function series(daily: unknown, key: string, length: number): unknown[] {
  const values = own(daily, key);
  return Array.isArray(values) ? values.slice(0, length) : [];
}

async function forecast(place: Place, args: Args, ctx: ExecutorContext): Promise<Output> {
  const imperial = args.units === 'imperial';
  const days = args.days ?? 3;
  const url = baseUrl(ctx, 'base_url', DEFAULT_BASE_URL);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/forecast`;
  const parameters = new URLSearchParams({
    latitude: String(place.latitude),
    longitude: String(place.longitude),
    current: ['weather_code', 'is_day', ...Object.values(CURRENT_FIELDS)].join(','),
    daily: ['weather_code', 'sunrise', 'sunset', ...Object.values(DAILY_FIELDS)].join(','),
    timezone: place.timezone,
    forecast_days: String(days),
  });
  if (imperial) {
    parameters.set('temperature_unit', 'fahrenheit');
    parameters.set('wind_speed_unit', 'mph');
    parameters.set('precipitation_unit', 'inch');
  }
  url.search = parameters.toString();
  const answer = await getJson(url, ctx);

  const current = own(answer, 'current');
  const currentCode = numberOf(own(current, 'weather_code'));
  const currentTime = shortText(own(current, 'time'), 40);
  if (currentCode === undefined || currentTime === undefined) {
    throw new ExecutorFailure('BadResponse', `${url.host} sent no current conditions`);
  }
  const now: Current = {
    time: currentTime,
    conditions: conditionsOf(currentCode),
    weather_code: currentCode,
  };
  for (const [name, field] of Object.entries(CURRENT_FIELDS)) {
    const value = numberOf(own(current, field));
    if (value !== undefined) (now as unknown as Record<string, number>)[name] = value;
  }
  const isDay = own(current, 'is_day');
  if (isDay === 0 || isDay === 1) now.is_day = isDay === 1;

  const daily = own(answer, 'daily');
  const dates = series(daily, 'time', days);
  const codes = series(daily, 'weather_code', days);
  const sunrise = series(daily, 'sunrise', days);
  const sunset = series(daily, 'sunset', days);
  const columns = Object.entries(DAILY_FIELDS).map(
    ([name, field]) => [name, series(daily, field, days)] as const,
  );
  const forecastDays: Day[] = [];
  for (let index = 0; index < dates.length; index++) {
    const date = shortText(dates[index], 40);
    const code = numberOf(codes[index]);
    if (date === undefined || code === undefined) {
      throw new ExecutorFailure(
        'BadResponse',
        `${url.host} sent a daily forecast without dates or weather codes`,
      );
    }
    const day: Day = { date, conditions: conditionsOf(code), weather_code: code };
    for (const [name, values] of columns) {
      const value = numberOf(values[index]);
      if (value !== undefined) (day as unknown as Record<string, number>)[name] = value;
    }
    const rise = shortText(sunrise[index], 40);
    const set = shortText(sunset[index], 40);
    if (rise) day.sunrise = rise;
    if (set) day.sunset = set;
    forecastDays.push(day);
  }
  const timezone = shortText(own(answer, 'timezone'), 64);
  return {
    place: { ...place, timezone: timezone ?? (place.timezone === 'auto' ? 'UTC' : place.timezone) },
    units: imperial
      ? { temperature: '°F', precipitation: 'inch', wind_speed: 'mph' }
      : { temperature: '°C', precipitation: 'mm', wind_speed: 'km/h' },
    current: now,
    daily: forecastDays,
  };
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const hasCoordinates = args.latitude !== undefined || args.longitude !== undefined;
    if (hasCoordinates && (args.latitude === undefined || args.longitude === undefined)) {
      throw new ExecutorFailure('NoPlace', 'give both latitude and longitude, or a place name');
    }
    let place: Place;
    if (args.latitude !== undefined && args.longitude !== undefined) {
      place = {
        name: args.place?.trim() || `${args.latitude}, ${args.longitude}`,
        latitude: args.latitude,
        longitude: args.longitude,
        timezone: 'auto',
      };
    } else if (args.place !== undefined && args.place.trim() !== '') {
      place = await findPlace(args.place, args.language ?? 'en', ctx);
    } else {
      throw new ExecutorFailure('NoPlace', 'name a place (e.g. "Bologna") or give latitude and longitude');
    }
    return ok(await forecast(place, args, ctx));
  },
});
