import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { defineExecutor, type ExecutorContext, ExecutorFailure, ok } from '@metnos/executor-sdk/define';

type Format = 'markdown' | 'text' | 'html';

interface Args {
  url: string;
  format?: Format;
  whole_page?: boolean;
  max_bytes?: number;
  timeout_ms?: number;
}

interface Output {
  url: string;
  final_url: string;
  status: number;
  content_type: string;
  format: Format | 'raw';
  title?: string;
  content: string;
  bytes: number;
  redirects: number;
}

const MAX_REDIRECTS = 5;
/** Time kept back from the call's deadline so a timeout is reported by us, not by a kill. */
const DEADLINE_MARGIN_MS = 750;
const PROXY_REFUSAL = 'metnos egress proxy:';
const USER_AGENT = 'Metnos-web_fetch/1.0 (+https://metnos.dev)';

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
 * A URL is reachable when its host is on the profile's allow-list and, if the
 * instance configures `allowed_domains`, on that narrower list too.
 */
function checkAllowed(url: URL, ctx: ExecutorContext): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ExecutorFailure('Forbidden', `${url.protocol} URLs are not fetched; use http or https`);
  }
  if (url.username || url.password) {
    throw new ExecutorFailure('Forbidden', 'URLs with credentials are not fetched');
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
    throw new ExecutorFailure(
      'Forbidden',
      `${host} is an IP address; only allow-listed domain names are reachable`,
    );
  }
  const port = defaultPort(url);
  const rules = (ctx.profile.network.mode === 'allowlist' ? ctx.profile.network.domains : [])
    .map(parseRule)
    .filter((rule): rule is DomainRule => rule !== undefined);
  if (!rules.some((rule) => ruleMatches(rule, host, port))) {
    throw new ExecutorFailure('Forbidden', `${host}:${port} is not on this executor's allow-list`);
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
  maxBytes: number;
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
  if (/does not resolve/.test(reason)) {
    return new ExecutorFailure('DnsError', `${host} does not resolve (${reason})`);
  }
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
  if (!secure) {
    return connected(netConnect({ host: proxy.hostname, port: Number(proxy.port || 80) }), 'connect');
  }

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
  if (encoding === 'br') return response.pipe(createBrotliDecompress());
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
        reject(
          new ExecutorFailure(
            'Timeout',
            `${url.host} did not answer within ${Math.max(0, plan.deadline - Date.now())} ms`,
          ),
        );
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
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
          'accept-language': 'en, it;q=0.9, *;q=0.5',
          connection: 'close',
        },
        createConnection: () => socket,
      });
      outgoing.once('response', resolve);
      outgoing.once('error', (error) => reject(classifySocketError(error, url.hostname)));
      outgoing.end();
    });
    const declared = Number(response.headers['content-length'] ?? Number.NaN);
    const encoded = response.headers['content-encoding'] !== undefined;
    if (
      !encoded &&
      Number.isFinite(declared) &&
      declared > plan.maxBytes &&
      !(response.statusCode! >= 300 && response.statusCode! < 400)
    ) {
      response.destroy();
      throw new ExecutorFailure(
        'TooLarge',
        `${url.href} is ${declared} bytes, above max_bytes ${plan.maxBytes}`,
      );
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const stream = decoded(response);
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > plan.maxBytes) {
          response.destroy();
          reject(
            new ExecutorFailure('TooLarge', `${url.href} sends more than max_bytes ${plan.maxBytes} bytes`),
          );
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

// ---------------------------------------------------------------------------
// Decoding and HTML conversion

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  deg: '°',
  middot: '·',
  bull: '•',
  times: '×',
  divide: '÷',
  sect: '§',
  para: '¶',
  shy: '',
  zwj: '',
  zwnj: '',
  iexcl: '¡',
  iquest: '¿',
  szlig: 'ß',
  agrave: 'à',
  aacute: 'á',
  acirc: 'â',
  auml: 'ä',
  atilde: 'ã',
  aring: 'å',
  ccedil: 'ç',
  egrave: 'è',
  eacute: 'é',
  ecirc: 'ê',
  euml: 'ë',
  igrave: 'ì',
  iacute: 'í',
  icirc: 'î',
  iuml: 'ï',
  ntilde: 'ñ',
  ograve: 'ò',
  oacute: 'ó',
  ocirc: 'ô',
  ouml: 'ö',
  otilde: 'õ',
  oslash: 'ø',
  ugrave: 'ù',
  uacute: 'ú',
  ucirc: 'û',
  uuml: 'ü',
  yacute: 'ý',
  Agrave: 'À',
  Aacute: 'Á',
  Egrave: 'È',
  Eacute: 'É',
  Igrave: 'Ì',
  Ograve: 'Ò',
  Ugrave: 'Ù',
  Ccedil: 'Ç',
  Ntilde: 'Ñ',
  Auml: 'Ä',
  Ouml: 'Ö',
  Uuml: 'Ü',
  rarr: '→',
  larr: '←',
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z][a-z0-9]{1,31});?/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code =
        body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
        ? String.fromCodePoint(code)
        : '\uFFFD';
    }
    return ENTITIES[body] ?? ENTITIES[body.toLowerCase()] ?? whole;
  });
}

function charsetOf(contentType: string, body: Buffer): string {
  const declared = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (declared) return declared;
  const head = body.subarray(0, 2048).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] ?? 'utf-8';
}

function decodeBody(body: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset, { fatal: false }).decode(body);
  } catch {
    return new TextDecoder('utf-8', { fatal: false }).decode(body);
  }
}

const DROPPED = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'iframe',
  'object',
  'canvas',
  'select',
  'button',
];
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'nav',
  'address',
  'figure',
  'figcaption',
  'form',
  'fieldset',
  'details',
  'summary',
  'dl',
  'dt',
  'dd',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'caption',
  'center',
  'body',
  'html',
]);

function attribute(attributes: string, name: string): string | undefined {
  const pattern = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'=<>\`]+))`, 'i');
  const match = pattern.exec(attributes);
  if (!match) return undefined;
  return decodeEntities(match[1] ?? match[2] ?? match[3] ?? '');
}

function absoluteUrl(href: string, base: URL): string | undefined {
  const trimmed = href.trim();
  if (trimmed === '' || /^(javascript|data|vbscript):/i.test(trimmed)) return undefined;
  if (trimmed.startsWith('#')) return undefined;
  try {
    return new URL(trimmed, base).href;
  } catch {
    return undefined;
  }
}

/** The inner HTML of the first element named `tag`, when the page has one. */
function innerOf(html: string, tag: string): string | undefined {
  const open = new RegExp(`<${tag}\\b[^>]*>`, 'i').exec(html);
  if (!open) return undefined;
  const start = open.index + open[0].length;
  const close = html.toLowerCase().lastIndexOf(`</${tag}`);
  return close > start ? html.slice(start, close) : html.slice(start);
}

/**
 * Turns HTML into markdown (or plain text): headings, paragraphs, links,
 * lists, quotes, code, emphasis and simple tables survive; scripts, styles
 * and markup do not.
 */
function htmlToDocument(
  html: string,
  base: URL,
  style: 'markdown' | 'text',
  wholePage: boolean,
): { title?: string; content: string } {
  const titleMatch = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = titleMatch ? decodeEntities(titleMatch[1]!.replace(/\s+/g, ' ').trim()) : undefined;
  let source = html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '')
    .replace(/<head\b[\s\S]*?<\/head\s*>/i, '');
  for (const tag of DROPPED)
    source = source.replace(new RegExp(`<${tag}\\b[\\s\\S]*?<\\/${tag}\\s*>`, 'gi'), ' ');
  if (!wholePage) source = innerOf(source, 'main') ?? innerOf(source, 'article') ?? source;

  const markdown = style === 'markdown';
  const out: string[] = [];
  const lists: Array<{ ordered: boolean; next: number }> = [];
  const links: Array<string | undefined> = [];
  let pre = 0;
  let quote = 0;
  let cellIndex = 0;
  let headerRowDone = false;
  let rowHasHeader = false;
  let cellsInRow = 0;

  const quotePrefix = () => (quote > 0 ? `${'> '.repeat(quote)}` : '');
  // Line breaks are collected and written once, before the next content, so nested blocks never stack blank lines.
  let pendingBreaks = 0;
  const newline = (count: 1 | 2) => {
    pendingBreaks = Math.max(pendingBreaks, count);
  };
  const emit = (piece: string) => {
    if (pendingBreaks > 0 && out.length > 0) out.push(`${'\n'.repeat(pendingBreaks)}${quotePrefix()}`);
    pendingBreaks = 0;
    out.push(piece);
  };
  const tokens =
    /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*(\/?)>|([^<]+|<)/g;
  for (let match = tokens.exec(source); match !== null; match = tokens.exec(source)) {
    const [, closing, rawName, attributes = '', , text] = match;
    if (text !== undefined) {
      const decodedText = decodeEntities(text);
      if (pre > 0) {
        emit(decodedText);
        continue;
      }
      let collapsed = decodedText.replace(/\s+/g, ' ');
      // After a line break, an indent or a space, leading whitespace would only add noise.
      const previous = out.at(-1)?.at(-1);
      if (pendingBreaks > 0 || previous === undefined || /\s/.test(previous)) {
        collapsed = collapsed.trimStart();
      }
      if (collapsed !== '') emit(collapsed);
      continue;
    }
    const name = rawName!.toLowerCase();
    const isClose = closing === '/';
    if (/^h[1-6]$/.test(name)) {
      newline(2);
      if (!isClose && markdown) emit(`${'#'.repeat(Number(name[1]))} `);
      continue;
    }
    switch (name) {
      case 'br':
        newline(1);
        break;
      case 'hr':
        newline(2);
        if (markdown) emit('---');
        newline(2);
        break;
      case 'ul':
      case 'ol':
        if (isClose) lists.pop();
        else lists.push({ ordered: name === 'ol', next: Number(attribute(attributes, 'start') ?? 1) || 1 });
        newline(lists.length === 0 ? 2 : 1);
        break;
      case 'li': {
        if (isClose) break;
        newline(1);
        const list = lists.at(-1);
        const indent = '  '.repeat(Math.max(0, lists.length - 1));
        emit(list?.ordered ? `${indent}${list.next++}. ` : `${indent}${markdown ? '-' : '•'} `);
        break;
      }
      case 'blockquote':
        quote = Math.max(0, quote + (isClose ? -1 : 1));
        newline(2);
        break;
      case 'pre':
        newline(2);
        if (markdown) emit(isClose ? '```' : '```\n');
        pre = Math.max(0, pre + (isClose ? -1 : 1));
        if (isClose) newline(2);
        break;
      case 'code':
        if (pre === 0 && markdown) emit('`');
        break;
      case 'strong':
      case 'b':
        if (markdown) emit('**');
        break;
      case 'em':
      case 'i':
        if (markdown) emit('_');
        break;
      case 'a': {
        if (isClose) {
          const href = links.pop();
          if (href !== undefined && markdown) emit(`](${href})`);
        } else {
          const href = absoluteUrl(attribute(attributes, 'href') ?? '', base);
          links.push(href);
          if (href !== undefined && markdown) emit('[');
        }
        break;
      }
      case 'img': {
        const alt = attribute(attributes, 'alt')?.trim();
        const src = absoluteUrl(attribute(attributes, 'src') ?? '', base);
        if (alt) emit(markdown && src ? `![${alt}](${src})` : `[${alt}]`);
        break;
      }
      case 'tr':
        if (isClose) {
          if (cellsInRow > 0 && markdown) {
            emit(' |');
            if (!headerRowDone && rowHasHeader) {
              emit(`\n${quotePrefix()}|${' --- |'.repeat(cellsInRow)}`);
              headerRowDone = true;
            }
          }
        } else {
          newline(1);
          cellIndex = 0;
          cellsInRow = 0;
          rowHasHeader = false;
        }
        break;
      case 'td':
      case 'th':
        if (isClose) break;
        if (name === 'th') rowHasHeader = true;
        emit(markdown ? (cellIndex === 0 ? '| ' : ' | ') : cellIndex === 0 ? '' : '\t');
        cellIndex++;
        cellsInRow++;
        break;
      case 'table':
        headerRowDone = false;
        newline(2);
        break;
      default:
        if (BLOCKS.has(name)) newline(2);
    }
  }
  const content = out
    .join('')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/\*\*\s*\*\*/g, '')
    .trim();
  return { title, content };
}

// ---------------------------------------------------------------------------

function mediaType(headers: IncomingHttpHeaders): string {
  return String(headers['content-type'] ?? 'application/octet-stream')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

function isTextual(type: string): boolean {
  return (
    type.startsWith('text/') ||
    /^application\/([\w.+-]+\+)?(json|xml|javascript|ecmascript|x-ndjson|csv|yaml|x-yaml|toml|rss\+xml|atom\+xml)$/.test(
      type,
    ) ||
    type.endsWith('+json') ||
    type.endsWith('+xml')
  );
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    let url: URL;
    try {
      url = new URL(args.url);
    } catch {
      throw new ExecutorFailure('Forbidden', `${args.url} is not a valid URL`);
    }
    checkAllowed(url, ctx);
    const remaining = ctx.deadline - Date.now() - DEADLINE_MARGIN_MS;
    const deadline = Date.now() + Math.max(100, Math.min(args.timeout_ms ?? 10_000, remaining));
    const maxBytes = args.max_bytes ?? 1_000_000;
    const overrides =
      ctx.config.host_overrides !== null && typeof ctx.config.host_overrides === 'object'
        ? (ctx.config.host_overrides as Record<string, string>)
        : {};

    let response: Fetched | undefined;
    let redirects = 0;
    for (;;) {
      response = await get({ url, deadline, maxBytes, overrides });
      const location = response.headers.location;
      if (response.status >= 300 && response.status < 400 && location) {
        if (redirects >= MAX_REDIRECTS) {
          throw new ExecutorFailure('HttpError', `more than ${MAX_REDIRECTS} redirects from ${args.url}`);
        }
        url = new URL(location, url);
        checkAllowed(url, ctx);
        redirects++;
        continue;
      }
      break;
    }
    const type = mediaType(response.headers);
    const text = () =>
      decodeBody(response.body, charsetOf(String(response.headers['content-type'] ?? ''), response.body));
    if (response.status === 403 && type === 'text/plain') {
      const refusal = proxyRefusal(403, text(), url.hostname);
      if (refusal) throw refusal;
    }
    if (response.status >= 400) {
      const excerpt = isTextual(type) ? text().replace(/\s+/g, ' ').slice(0, 300) : '';
      throw new ExecutorFailure(
        'HttpError',
        `${url.href} answered HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`,
      );
    }
    const base = {
      url: args.url,
      final_url: url.href,
      status: response.status,
      content_type: type,
      bytes: response.body.length,
      redirects,
    };
    if (type === 'text/html' || type === 'application/xhtml+xml') {
      const html = text();
      const format = args.format ?? 'markdown';
      if (format === 'html') {
        const title = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html)?.[1];
        return ok({
          ...base,
          format,
          content: html,
          ...(title ? { title: decodeEntities(title.trim()) } : {}),
        });
      }
      const document = htmlToDocument(html, url, format, args.whole_page ?? false);
      return ok({
        ...base,
        format,
        content: document.content,
        ...(document.title ? { title: document.title } : {}),
      });
    }
    if (!isTextual(type)) {
      throw new ExecutorFailure(
        'UnsupportedContent',
        `${url.href} is ${type} (${response.body.length} bytes), not text`,
      );
    }
    return ok({ ...base, format: 'raw', content: text() });
  },
});
