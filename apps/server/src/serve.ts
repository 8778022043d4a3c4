import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type AppSettings, createApp } from './app.ts';

/** Settings of {@link startServer}: the app's, and where to listen. */
export interface ServeSettings extends AppSettings {
  /** Default 127.0.0.1: the API is for this machine unless asked otherwise. */
  hostname?: string;
  /** Default 8787; 0 picks a free port. */
  port?: number;
}

/**
 * Starts the API on a loopback port and returns its address and a `close`
 * that stops taking connections, lets every turn under way finish, then
 * closes the listener.
 *
 * @example
 * const server = await startServer({ token, engine });
 * // … on SIGTERM:
 * await server.close();
 */
export async function startServer(settings: ServeSettings) {
  const api = createApp(settings);
  const hostname = settings.hostname ?? '127.0.0.1';
  const listening = await new Promise<{ server: ReturnType<typeof serve>; address: AddressInfo }>(
    (resolve, reject) => {
      const server = serve({ fetch: api.fetch, hostname, port: settings.port ?? 8787 }, (info) =>
        resolve({ server, address: info }),
      );
      server.once('error', reject);
    },
  );
  const { server, address } = listening;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    port: address.port,
    inFlight: api.inFlight,
    close(): Promise<void> {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        await api.drain();
        // a kept-alive connection goes idle only once its answer is written: close each as it
        // does, rather than wait for the client's keep-alive to run out
        const closeIdle = () =>
          (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        closeIdle();
        const sweep = setInterval(closeIdle, 50);
        await stopped.finally(() => clearInterval(sweep));
      })();
      return closing;
    },
  };
}
