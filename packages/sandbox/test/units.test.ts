import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createSandboxRunner,
  doctor,
  domainAllowed,
  formatDoctorReport,
  isInternalAddress,
  parseDomainRule,
  probeHost,
  resolveReal,
  SandboxError,
} from '../src/index.ts';

const scratch = mkdtempSync(join(tmpdir(), 'metnos-sandbox-units-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('resolveReal', () => {
  it('follows a symlink before applying the .. after it', () => {
    mkdirSync(join(scratch, 'a', 'deep', 'er'), { recursive: true });
    symlinkSync(join(scratch, 'a', 'deep', 'er'), join(scratch, 'jump'));
    // lexically jump/.. is the scratch folder; physically it is a/deep
    expect(resolveReal(`${scratch}/jump/../x.txt`)).toEqual({
      real: join(scratch, 'a', 'deep', 'x.txt'),
      exists: false,
    });
  });
  it('sees through /proc/self/root', () => {
    expect(resolveReal('/proc/self/root/etc/hostname').real).toBe('/etc/hostname');
  });
  it('stops at symlink loops', () => {
    symlinkSync(join(scratch, 'loop-b'), join(scratch, 'loop-a'));
    symlinkSync(join(scratch, 'loop-a'), join(scratch, 'loop-b'));
    expect(resolveReal(`${scratch}/loop-a/f`).exists).toBe(false);
  });
  it('keeps a missing tail under its real parent', () => {
    writeFileSync(join(scratch, 'present.txt'), '');
    expect(resolveReal(join(scratch, 'present.txt'))).toEqual({
      real: join(scratch, 'present.txt'),
      exists: true,
    });
  });
});

describe('domain rules', () => {
  it.each([
    ['10.0.0.1', /IP literal/],
    ['*.com', /public suffix/],
    ['*.co.uk', /public suffix/],
    ['localhost', /top-level/],
    ['api.example.com:99999', /port out of range/],
  ])('refuses %s', (entry, reason) => {
    expect(parseDomainRule(entry)).toMatch(reason);
  });
  it('matches hosts, wildcards and ports', () => {
    const rules = [
      parseDomainRule('api.example.com'),
      parseDomainRule('*.cdn.example.org'),
      parseDomainRule('hooks.example.net:8443'),
    ].map((rule) => {
      if (typeof rule === 'string') throw new Error(rule);
      return rule;
    });
    expect(domainAllowed('api.example.com', 443, rules)).toBe(true);
    expect(domainAllowed('api.example.com', 22, rules)).toBe(false);
    expect(domainAllowed('a.cdn.example.org', 80, rules)).toBe(true);
    expect(domainAllowed('cdn.example.org', 80, rules)).toBe(false);
    expect(domainAllowed('evilapi.example.com', 443, rules)).toBe(false);
    expect(domainAllowed('hooks.example.net', 8443, rules)).toBe(true);
    expect(domainAllowed('hooks.example.net', 443, rules)).toBe(false);
  });
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
  ])('treats %s as internal', (address) => expect(isInternalAddress(address)).toBe(true));
  it.each(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'])('treats %s as public', (address) =>
    expect(isInternalAddress(address)).toBe(false),
  );
});

describe('host report', () => {
  it('is structured data plus a readable text with fixes', () => {
    const report = doctor();
    expect(report.findings.map((finding) => finding.layer)).toEqual(
      expect.arrayContaining(['bubblewrap', 'landlock', 'seccomp', 'cgroup']),
    );
    const text = formatDoctorReport(report);
    expect(text).toContain(`strongest tier on this host: ${report.strongest}`);
    for (const finding of report.findings.filter((item) => !item.ok))
      expect(text).toContain(finding.fix ?? finding.detail);
  });
  it('reports a missing bubblewrap with its fix', () => {
    const report = probeHost({ binarySearchPath: [join(scratch, 'nowhere')] });
    expect(report.layers.bubblewrap).toMatchObject({
      available: false,
      fix: 'apt-get install -y bubblewrap',
    });
    expect(report.strongest).toBe('basic');
    expect(report.tiers.full.missing.join(' ')).toContain('bubblewrap');
  });
});

describe('the helper pins bind sources', () => {
  it('refuses a path that became a symlink after the check', () => {
    const helper = probeHost().helperPath!;
    mkdirSync(join(scratch, 'granted'));
    symlinkSync(join(scratch, 'granted'), join(scratch, 'swapped'));
    const kept = spawnSync(helper, ['--pin', `10:${join(scratch, 'granted')}`, '--', '/bin/true']);
    expect(kept.status).toBe(0);
    const swapped = spawnSync(helper, ['--pin', `10:${join(scratch, 'swapped')}`, '--', '/bin/true'], {
      encoding: 'utf8',
    });
    expect(swapped.status).toBe(126);
    expect(swapped.stderr).toContain('changed after the policy check');
  });
});

describe('settings', () => {
  it('refuses malformed host overrides with a SandboxError', () => {
    let caught: unknown;
    try {
      createSandboxRunner({ hostOverrides: { 'api.example.com': 'not a target' } });
    } catch (error) {
      caught = error;
    }
    expect(SandboxError.isInstance(caught)).toBe(true);
    expect((caught as SandboxError).setting).toBe('hostOverrides');
  });
  it('applies the weaker of the setting and the host', () => {
    expect(createSandboxRunner({ tier: 'basic', audit: false }).tier).toBe('basic');
    expect(createSandboxRunner({ binarySearchPath: [join(scratch, 'nowhere')], audit: false }).tier).toBe(
      'basic',
    );
  });
});
