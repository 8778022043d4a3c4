import { isIP } from 'node:net';

/** One parsed network allow-list entry: `api.example.com`, `*.example.com` or either with `:port`. */
export interface DomainRule {
  /** The host, or the suffix after `*.` for a wildcard. */
  host: string;
  wildcard: boolean;
  /** The only port allowed; undefined means 80 and 443. */
  port: number | undefined;
}

/** Second-level labels that act as public suffixes (`co.uk`, `com.au`): `*.co.uk` is as broad as `*.uk`. */
const PUBLIC_SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'gov', 'edu', 'ac', 'or', 'ne', 'go']);

/**
 * Parses one allow-list entry, or returns why it is refused: IP literals,
 * wildcards over a top-level or public suffix, and ports out of range.
 *
 * @example
 * parseDomainRule('*.example.com'); // { host: 'example.com', wildcard: true, port: undefined }
 * parseDomainRule('*.com');         // 'the wildcard "*.com" covers a whole public suffix'
 */
export function parseDomainRule(entry: string): DomainRule | string {
  const match = /^(\*\.)?([^:]+)(?::(\d{1,5}))?$/.exec(entry.trim().toLowerCase());
  if (!match) return `"${entry}" is not a domain name`;
  const wildcard = match[1] !== undefined;
  const host = match[2]!;
  const port = match[3] === undefined ? undefined : Number(match[3]);
  if (port !== undefined && (port < 1 || port > 65_535)) return `"${entry}" has a port out of range`;
  if (isIP(host) !== 0 || /^[\d.]+$/.test(host) || host.includes('['))
    return `"${entry}" is an IP literal; name a domain`;
  if (host.includes('*')) return `"${entry}" has a wildcard in the middle`;
  const labels = host.split('.');
  if (labels.some((label) => !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(label)))
    return `"${entry}" is not a domain name`;
  if (wildcard && (labels.length < 2 || (labels.length === 2 && PUBLIC_SECOND_LEVEL.has(labels[0]!)))) {
    return `the wildcard "${entry}" covers a whole public suffix`;
  }
  if (!wildcard && labels.length < 2) return `"${entry}" is a bare top-level name`;
  return { host, wildcard, port };
}

/**
 * True when `host:port` is allowed by one of `rules`: an exact name, or a
 * subdomain for a wildcard; ports 80 and 443 unless the rule names one.
 *
 * @example
 * domainAllowed('api.example.com', 443, [parseDomainRule('api.example.com') as DomainRule]); // true
 */
export function domainAllowed(host: string, port: number, rules: readonly DomainRule[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return rules.some((rule) => {
    const nameMatches = rule.wildcard ? name.endsWith(`.${rule.host}`) : name === rule.host;
    const portMatches = rule.port === undefined ? port === 80 || port === 443 : port === rule.port;
    return nameMatches && portMatches;
  });
}

/**
 * True for addresses an egress proxy must never reach on a profile's behalf:
 * loopback, private, link-local (cloud metadata included), CGNAT, multicast,
 * unspecified and the IPv6 equivalents, IPv4-mapped forms included.
 *
 * @example
 * isInternalAddress('169.254.169.254'); // true
 */
export function isInternalAddress(address: string): boolean {
  let ip = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (mapped) ip = mapped[1]!;
  if (isIP(ip) === 4) {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  if (isIP(ip) === 6) {
    return (
      ip === '::' ||
      ip === '::1' ||
      ip.startsWith('fe8') ||
      ip.startsWith('fe9') ||
      ip.startsWith('fea') ||
      ip.startsWith('feb') ||
      ip.startsWith('fc') ||
      ip.startsWith('fd') ||
      ip.startsWith('ff') ||
      ip.startsWith('64:ff9b:') ||
      ip.startsWith('::ffff:')
    );
  }
  return true;
}
