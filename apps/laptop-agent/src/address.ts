import { RemoteError } from './protocol/errors.ts';

/**
 * The server's device channel from what the person typed: `host:port`,
 * `tls://host:port` or `metnos://host:port`, IPv6 in brackets.
 *
 * @example
 * parseServerAddress('tls://192.168.1.5:8788'); // { host: '192.168.1.5', port: 8788, text: '192.168.1.5:8788' }
 */
export function parseServerAddress(value: string): { host: string; port: number; text: string } {
  const bare = value
    .trim()
    .replace(/^(tls|metnos):\/\//i, '')
    .replace(/\/+$/, '');
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(bare);
  const port = Number(match?.[2]);
  if (!match || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new RemoteError({
      code: 'bad_address',
      message: `"${value.slice(0, 100)}" is not a server address such as tls://192.168.1.5:8788 (as \`metnos devices pair\` printed it)`,
    });
  return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port, text: bare };
}
