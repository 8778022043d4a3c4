import { describe, expect, it } from 'vitest';
import { type DomainRule, domainAllowed, isInternalAddress, parseDomainRule } from '../src/domains.ts';

function rule(entry: string): DomainRule {
  const parsed = parseDomainRule(entry);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

describe('parseDomainRule', () => {
  it('reads a name, a wildcard and a port, lowercased and trimmed', () => {
    expect(parseDomainRule('api.example.com')).toEqual({
      host: 'api.example.com',
      wildcard: false,
      port: undefined,
    });
    expect(parseDomainRule('  API.Example.COM  ')).toEqual({
      host: 'api.example.com',
      wildcard: false,
      port: undefined,
    });
    expect(parseDomainRule('*.example.com')).toEqual({
      host: 'example.com',
      wildcard: true,
      port: undefined,
    });
    expect(parseDomainRule('hooks.example.net:8443')).toEqual({
      host: 'hooks.example.net',
      wildcard: false,
      port: 8443,
    });
    expect(parseDomainRule('*.example.org:1')).toEqual({ host: 'example.org', wildcard: true, port: 1 });
    expect(parseDomainRule('a.example.org:65535')).toMatchObject({ port: 65_535 });
    expect(parseDomainRule('x-1.a2.example.org')).toMatchObject({ host: 'x-1.a2.example.org' });
  });

  it('refuses ports out of range, naming the entry', () => {
    expect(parseDomainRule('api.example.com:0')).toBe('"api.example.com:0" has a port out of range');
    expect(parseDomainRule('api.example.com:65536')).toBe('"api.example.com:65536" has a port out of range');
    expect(parseDomainRule('api.example.com:123456')).toBe('"api.example.com:123456" is not a domain name');
  });

  it('refuses IP literals in every spelling', () => {
    expect(parseDomainRule('10.0.0.1')).toBe('"10.0.0.1" is an IP literal; name a domain');
    expect(parseDomainRule('1.2.3')).toBe('"1.2.3" is an IP literal; name a domain');
    expect(parseDomainRule('127.1')).toBe('"127.1" is an IP literal; name a domain');
    expect(parseDomainRule('[fe80]')).toBe('"[fe80]" is an IP literal; name a domain');
    expect(parseDomainRule('*.10.0.0.1')).toBe('"*.10.0.0.1" is an IP literal; name a domain');
  });

  it('refuses a wildcard in the middle and malformed labels', () => {
    expect(parseDomainRule('api.*.example.com')).toBe('"api.*.example.com" has a wildcard in the middle');
    expect(parseDomainRule('*')).toBe('"*" has a wildcard in the middle');
    expect(parseDomainRule('-api.example.com')).toBe('"-api.example.com" is not a domain name');
    expect(parseDomainRule('api-.example.com')).toBe('"api-.example.com" is not a domain name');
    expect(parseDomainRule('api..example.com')).toBe('"api..example.com" is not a domain name');
    expect(parseDomainRule('api_x.example.com')).toBe('"api_x.example.com" is not a domain name');
    expect(parseDomainRule('a:b:c')).toBe('"a:b:c" is not a domain name');
    expect(parseDomainRule('')).toBe('"" is not a domain name');
  });

  it('refuses wildcards over a top-level name or a public second-level suffix', () => {
    expect(parseDomainRule('*.com')).toBe('the wildcard "*.com" covers a whole public suffix');
    for (const suffix of ['co', 'com', 'net', 'org', 'gov', 'edu', 'ac', 'or', 'ne', 'go']) {
      expect(parseDomainRule(`*.${suffix}.uk`)).toBe(
        `the wildcard "*.${suffix}.uk" covers a whole public suffix`,
      );
    }
    expect(parseDomainRule('*.example.uk')).toEqual({ host: 'example.uk', wildcard: true, port: undefined });
    expect(parseDomainRule('*.a.co.uk')).toEqual({ host: 'a.co.uk', wildcard: true, port: undefined });
  });

  it('refuses a bare top-level name without a wildcard, and takes a plain two-label one', () => {
    expect(parseDomainRule('localhost')).toBe('"localhost" is a bare top-level name');
    expect(parseDomainRule('co.uk')).toEqual({ host: 'co.uk', wildcard: false, port: undefined });
  });
});

describe('domainAllowed', () => {
  it('matches an exact name on 80 and 443 only when no port is named', () => {
    const rules = [rule('api.example.com')];
    expect(domainAllowed('api.example.com', 443, rules)).toBe(true);
    expect(domainAllowed('api.example.com', 80, rules)).toBe(true);
    expect(domainAllowed('api.example.com', 8080, rules)).toBe(false);
    expect(domainAllowed('API.EXAMPLE.COM.', 443, rules)).toBe(true);
    expect(domainAllowed('x.api.example.com', 443, rules)).toBe(false);
    expect(domainAllowed('example.com', 443, rules)).toBe(false);
  });

  it('matches only subdomains for a wildcard, never the suffix itself or a look-alike', () => {
    const rules = [rule('*.example.org')];
    expect(domainAllowed('a.example.org', 443, rules)).toBe(true);
    expect(domainAllowed('a.b.example.org', 80, rules)).toBe(true);
    expect(domainAllowed('example.org', 443, rules)).toBe(false);
    expect(domainAllowed('badexample.org', 443, rules)).toBe(false);
  });

  it('takes only the named port when a rule names one', () => {
    const rules = [rule('hooks.example.net:8443')];
    expect(domainAllowed('hooks.example.net', 8443, rules)).toBe(true);
    expect(domainAllowed('hooks.example.net', 443, rules)).toBe(false);
    expect(domainAllowed('hooks.example.net', 80, rules)).toBe(false);
  });

  it('needs name and port from the same rule, and allows nothing with no rules', () => {
    const rules = [rule('a.example.com'), rule('b.example.com:9000')];
    expect(domainAllowed('a.example.com', 9000, rules)).toBe(false);
    expect(domainAllowed('b.example.com', 9000, rules)).toBe(true);
    expect(domainAllowed('a.example.com', 443, [])).toBe(false);
  });
});

describe('isInternalAddress', () => {
  it.each([
    '0.1.2.3',
    '10.255.0.1',
    '127.0.0.53',
    '100.64.0.0',
    '100.127.255.255',
    '169.254.0.1',
    '172.16.0.0',
    '172.31.255.255',
    '192.168.0.1',
    '192.0.0.8',
    '198.18.0.1',
    '198.19.255.255',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fe9a::1',
    'FEA0::1',
    'feb0::1',
    'fc00::1',
    'fd12::1',
    'ff02::1',
    '64:ff9b::1.2.3.4',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    'not an address',
    '',
  ])('%s is internal (or not an address at all)', (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each([
    '1.1.1.1',
    '9.9.9.9',
    '11.0.0.1',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.1',
    '169.253.0.1',
    '169.255.0.1',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.0.1',
    '192.169.0.1',
    '192.1.0.1',
    '198.17.0.1',
    '198.20.0.1',
    '223.255.255.255',
    '::ffff:8.8.8.8',
    '2001:db8::1',
    'fec0::1',
    '2606:4700::1111',
  ])('%s is public', (address) => {
    expect(isInternalAddress(address)).toBe(false);
  });
});
