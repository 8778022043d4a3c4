import { readFileSync } from 'node:fs';
import type { Context, Hono } from 'hono';
import type { RouteDoc } from './openapi.ts';

/**
 * The web console's files: a static page, one hand-written ES module and a
 * stylesheet, in the package's `console/` folder (beside `src/` and `dist/`,
 * so the same relative path finds it from the source and from a build).
 */
const CONSOLE_DIR = new URL('../console/', import.meta.url);

const FILES = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console/console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
  '/console/proposals.js': { file: 'proposals.js', type: 'text/javascript; charset=utf-8' },
  '/console/devices.js': { file: 'devices.js', type: 'text/javascript; charset=utf-8' },
  '/console/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
} as const;

/** The console's files in the OpenAPI document: served without the token, holding no data. */
export const consoleRouteDocs: RouteDoc[] = [
  ...Object.entries(FILES).map(([path, { file, type }]) => ({
    method: 'get' as const,
    path,
    summary: `the web console: ${file}`,
    produces: [type.split(';')[0]!],
    public: true,
  })),
  { method: 'get', path: '/favicon.ico', summary: 'nothing (204)', success: 204, public: true },
];

/**
 * What every console answer carries. The page runs only the module it was
 * served with (`script-src 'self'`, no inline script or style), talks only to
 * this origin, cannot be framed, sends no referrer, and is never sniffed as
 * another type.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-cache',
};

/**
 * Mounts the console on `app`: `GET /` (the page), `GET /console/console.js`,
 * `/console/console.css` and an empty `/favicon.ico`. Register it before the bearer token's middleware:
 * these answers hold no data and no token (the page asks for the token
 * and sends it as `Authorization: Bearer` on every API call), while every
 * other path, `/api/*` and any other `/console/*`, still needs the token.
 * The files are read once, here.
 *
 * @example
 * const app = new Hono();
 * registerConsole(app);
 * app.use('*', bearerGuard);
 */
export function registerConsole(app: Hono): void {
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const body = readFileSync(new URL(file, CONSOLE_DIR), 'utf8');
    const answer = (c: Context) => c.body(body, 200, { ...CONSOLE_HEADERS, 'content-type': type });
    app.get(path, answer);
  }
  // browsers ask for it unprompted: nothing, rather than a 401 in the console's log
  app.get('/favicon.ico', (c) => c.body(null, 204, { ...CONSOLE_HEADERS }));
}
