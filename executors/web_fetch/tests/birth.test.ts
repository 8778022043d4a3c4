import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { birth } from '@metnos/sandbox/birth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ARTICLE = `<!doctype html>
<html><head><title>Trains &amp; Timetables</title><style>body { color: red }</style>
<script>document.write('tracking')</script></head>
<body>
  <nav><a href="/">Home</a> | <a href="/about">About</a></nav>
  <main>
    <h1>Rome &ndash; Milan</h1>
    <p>The <strong>fast</strong> train takes <em>three hours</em>. See the <a href="/timetable?day=mon">timetable</a>.</p>
    <ul><li>Frecciarossa</li><li>Italo
      <ol><li>first class</li><li>second class</li></ol></li></ul>
    <script>alert('x')</script>
    <table><tr><th>Train</th><th>Time</th></tr><tr><td>FR 9521</td><td>08:00</td></tr></table>
  </main>
  <footer>© 2026 Rail</footer>
</body></html>`;

let server: Server;
let executor: ReturnType<typeof birth>;
let config: Record<string, unknown>;

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    if (path === '/article') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
    } else if (path === '/data.json') {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"temperature": 21.5, "unit": "C"}');
    } else if (path === '/old') {
      response.writeHead(301, { location: '/article' }).end();
    } else if (path === '/away') {
      response.writeHead(302, { location: 'http://evil.example.net/steal' }).end();
    } else if (path === '/big') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000));
    } else if (path === '/slow') {
      setTimeout(() => response.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 3000);
    } else if (path === '/gzip') {
      response
        .writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' })
        .end(gzipSync('<p>Squeezed <b>page</b></p>'));
    } else if (path === '/latin1') {
      response
        .writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' })
        .end(Buffer.from('Caffè così', 'latin1'));
    } else if (path === '/photo.jpg') {
      response.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.from([0xff, 0xd8, 0xff]));
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // example.com and example.org are on the profile's allow-list; the operator maps them to this server.
  const hostOverrides = { 'example.com': `127.0.0.1:${port}`, 'example.org': `127.0.0.1:${port}` };
  executor = birth(join(import.meta.dirname, '..'), { hostOverrides });
  config = { host_overrides: hostOverrides };
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const fetchPage = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  executor.invoke(args, { config: { ...config, ...extra } });

describe('web_fetch birth', () => {
  it('turns an HTML page into markdown: main content, headings, links, lists, tables; no scripts or styles', async () => {
    const result = await fetchPage({ url: 'http://example.com/article' });
    expect(result).toMatchObject({
      ok: true,
      content: { status: 200, content_type: 'text/html', title: 'Trains & Timetables' },
    });
    const content = (result as { content: { content: string } }).content.content;
    expect(content).toContain('# Rome – Milan');
    expect(content).toContain(
      'The **fast** train takes _three hours_. See the [timetable](http://example.com/timetable?day=mon).',
    );
    expect(content).toContain('- Frecciarossa\n- Italo\n  1. first class\n  2. second class');
    expect(content).toContain('| Train | Time |\n| --- | --- |\n| FR 9521 | 08:00 |');
    expect(content).not.toMatch(/alert|tracking|color: red|About|© 2026/);
  });

  it('returns plain text, the whole page on request, and non-HTML text as is', async () => {
    const text = await fetchPage({ url: 'http://example.com/article', format: 'text', whole_page: true });
    const content = (text as { content: { content: string } }).content.content;
    expect(content).toContain('The fast train takes three hours. See the timetable.');
    expect(content).toContain('© 2026 Rail');
    expect(await fetchPage({ url: 'http://example.org/data.json' })).toMatchObject({
      ok: true,
      content: {
        format: 'raw',
        content: '{"temperature": 21.5, "unit": "C"}',
        content_type: 'application/json',
      },
    });
  });

  it('follows allowed redirects, decompresses gzip and decodes declared charsets', async () => {
    expect(await fetchPage({ url: 'http://example.com/old' })).toMatchObject({
      ok: true,
      content: { final_url: 'http://example.com/article', redirects: 1, title: 'Trains & Timetables' },
    });
    expect(await fetchPage({ url: 'http://example.com/gzip' })).toMatchObject({
      ok: true,
      content: { content: 'Squeezed **page**' },
    });
    expect(await fetchPage({ url: 'http://example.com/latin1' })).toMatchObject({
      ok: true,
      content: { content: 'Caffè così' },
    });
  });

  it('refuses domains off the allow-list, also after a redirect or when the instance narrows the list', async () => {
    const offList = await fetchPage({ url: 'http://evil.example.net/' });
    expect(offList).toMatchObject({
      ok: false,
      error: { class: expect.stringMatching(/^(Forbidden|PolicyViolation)$/) },
    });
    expect(await fetchPage({ url: 'http://example.com/away' })).toMatchObject({
      ok: false,
      error: { class: 'Forbidden' },
    });
    expect(
      await fetchPage({ url: 'http://example.com/article' }, { allowed_domains: ['example.org'] }),
    ).toMatchObject({
      ok: false,
      error: { class: 'Forbidden' },
    });
  });

  it('fails with HttpError, TooLarge, UnsupportedContent and Timeout', async () => {
    expect(await fetchPage({ url: 'http://example.com/missing' })).toMatchObject({
      ok: false,
      error: { class: 'HttpError' },
    });
    expect(await fetchPage({ url: 'http://example.com/big', max_bytes: 1024 })).toMatchObject({
      ok: false,
      error: { class: 'TooLarge' },
    });
    expect(await fetchPage({ url: 'http://example.com/photo.jpg' })).toMatchObject({
      ok: false,
      error: { class: 'UnsupportedContent' },
    });
    expect(await fetchPage({ url: 'http://example.com/slow', timeout_ms: 500 })).toMatchObject({
      ok: false,
      error: { class: 'Timeout' },
    });
  });
});
