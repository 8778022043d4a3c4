import { chmod, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { expandProfile } from './context.ts';
import { credentialView, offeredCredentials, Secret } from './credentials.ts';
import { CredentialError, loadCredentials } from './credentials-file.ts';
import { declaredProfileSchema } from './profile.ts';

let configDir: string;

async function write(text: string, mode = 0o600): Promise<void> {
  await writeFile(join(configDir, 'credentials.toml'), text, { mode });
  await chmod(join(configDir, 'credentials.toml'), mode);
}

beforeEach(async () => {
  configDir = await mkdtemp(join(tmpdir(), 'metnos-credentials-'));
});

describe('loadCredentials', () => {
  it('reads mail and http handles, passwords inline or from a named variable, wrapped as secrets', async () => {
    await write(`[mail]
imap = "imap.example.com:993"
smtp = "smtp.example.com:587"
smtp_tls = "starttls"
username = "me@example.com"
password_env = "MAIL_PASSWORD"

[calendar]
url = "https://dav.example.com/me/"
username = "me"
password = "inline-secret-1"

[api]
url = "http://api.example.com:8080/"
token_env = "API_TOKEN"
`);
    const credentials = await loadCredentials({
      configDir,
      env: { MAIL_PASSWORD: 'from-the-env-1', API_TOKEN: 'token-1' },
    });
    expect(credentials.mail).toMatchObject({
      kind: 'mail',
      imap: { host: 'imap.example.com', port: 993, tls: 'tls' },
      smtp: { host: 'smtp.example.com', port: 587, tls: 'starttls' },
      username: 'me@example.com',
      address: 'me@example.com',
    });
    expect(credentials.calendar).toMatchObject({
      kind: 'http',
      endpoint: { host: 'dav.example.com', port: 443, tls: 'tls' },
    });
    expect(credentials.api).toMatchObject({ endpoint: { port: 8080, tls: 'none' } });
    const mail = credentials.mail!;
    expect(mail.kind === 'mail' && mail.password.reveal()).toBe('from-the-env-1');
    // every accidental way to print them shows <secret>
    const printed = [
      JSON.stringify(credentials),
      inspect(credentials, { depth: 9 }),
      `${String(mail.kind === 'mail' && mail.password)}`,
    ];
    for (const text of printed) {
      expect(text).not.toMatch(/from-the-env-1|inline-secret-1|token-1/);
    }
    expect(JSON.stringify(credentials)).toContain('"password":"<secret>"');
  });

  it('is empty without a file, and refuses a file others can read, a symlink, or a missing variable', async () => {
    expect(await loadCredentials({ configDir, env: {} })).toEqual({});
    await write('[mail]\nimap = "imap.example.com:993"\nusername = "me"\npassword = "p-123"\n', 0o644);
    await expect(loadCredentials({ configDir, env: {} })).rejects.toThrow(
      /readable by other users.*chmod 600/,
    );
    await write('[mail]\nimap = "imap.example.com:993"\nusername = "me"\npassword_env = "NOPE"\n');
    await expect(loadCredentials({ configDir, env: {} })).rejects.toThrow(
      /\[mail\] password_env: the environment variable NOPE is not set/,
    );
    const other = await mkdtemp(join(tmpdir(), 'metnos-credentials-elsewhere-'));
    await writeFile(join(other, 'real.toml'), '', { mode: 0o600 });
    const linked = await mkdtemp(join(tmpdir(), 'metnos-credentials-link-'));
    await symlink(join(other, 'real.toml'), join(linked, 'credentials.toml'));
    await expect(loadCredentials({ configDir: linked, env: {} })).rejects.toThrow(/is a symlink/);
  });

  it('names the field at fault and never the value, even when the TOML itself is broken', async () => {
    await write('[mail]\nimap = "imap.example.com:993"\nusername = "me"\npassword = "leaky-pass-9\n');
    const broken = await loadCredentials({ configDir, env: {} }).catch((error: unknown) => error);
    expect(CredentialError.isInstance(broken)).toBe(true);
    expect(String((broken as Error).message)).toMatch(/not valid TOML \(line \d+/);
    expect(String((broken as Error).message)).not.toContain('leaky-pass-9');
    await write('[mail]\nimap = "IMAP.example.com"\nusername = "me"\npassword = "leaky-pass-9"\n');
    const field = await loadCredentials({ configDir, env: {} }).catch((error: Error) => error.message);
    expect(field).toMatch(/^\[mail\] imap: a lowercase "host\.name:port"/);
    await write('[mail]\nimap = "imap.example.com:993"\nusername = "me"\npasword = "leaky-pass-9"\n');
    const unknown = await loadCredentials({ configDir, env: {} }).catch((error: Error) => error.message);
    expect(unknown).toMatch(/unknown field pasword/);
    expect(unknown).not.toContain('leaky-pass-9');
    await write(
      '[mail]\nimap = "imap.example.com:993"\nusername = "me"\npassword = "p-1"\nca_file = "home-ca.pem"\n',
    );
    await expect(loadCredentials({ configDir, env: {} })).rejects.toThrow(
      /^\[mail\] ca_file: .*home-ca\.pem cannot be read \(ENOENT\)$/,
    );
    await writeFile(
      join(configDir, 'home-ca.pem'),
      '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    );
    const trusted = await loadCredentials({ configDir, env: {} });
    expect(trusted.mail).toMatchObject({ imap: { ca: expect.stringContaining('BEGIN CERTIFICATE') } });
    await write('["Bad Handle"]\nurl = "https://x.example.com/"\ntoken = "t-1"\n');
    await expect(loadCredentials({ configDir, env: {} })).rejects.toThrow(/a handle is lowercase letters/);
  });
});

describe('offering a handle to a call', () => {
  const mail = {
    kind: 'mail' as const,
    handle: 'mail',
    imap: { host: 'imap.example.com', port: 993, tls: 'tls' as const },
    smtp: { host: 'smtp.example.com', port: 465, tls: 'tls' as const },
    username: 'me',
    password: new Secret('p'),
  };
  const profile = declaredProfileSchema.parse({
    profile: 'mail',
    max_duration_ms: 1000,
    max_memory_mb: 64,
    max_output_bytes: 1024,
    network: { mode: 'allowlist', domains: ['$CREDENTIAL:mail', 'example.org'] },
  });

  it('offers only handles the manifest declares and the person configured', () => {
    expect(Object.keys(offeredCredentials(['secret:mail', 'secret:calendar'], { mail }))).toEqual(['mail']);
    expect(offeredCredentials(['net:http'], { mail })).toEqual({});
  });

  it('expands $CREDENTIAL:<handle> to the servers of an offered credential, to nothing otherwise', () => {
    const places = { workspace: '/w', tmpDir: '/t', home: '/h' };
    expect(expandProfile(profile, { ...places, credentials: { mail } }).network.domains).toEqual([
      'imap.example.com:993',
      'smtp.example.com:465',
      'example.org',
    ]);
    expect(expandProfile(profile, places).network.domains).toEqual(['example.org']);
  });

  it('tells the executor where the servers are, never who logs in or with what', () => {
    expect(credentialView({ ...mail, address: 'me@example.com' })).toEqual({
      kind: 'mail',
      imap: 'imap.example.com:993',
      smtp: 'smtp.example.com:465',
      address: 'me@example.com',
    });
    expect(JSON.stringify(credentialView(mail))).not.toMatch(/username|password|"me"/);
  });
});
