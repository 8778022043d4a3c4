import { parseArgs } from 'node:util';
import { createKeyStore, createTrustStore, readPublicKey } from '@metnos/executor-sdk';
import { CliFailure, type CliIo, table } from '../output.ts';
import { resolvePlace, userPath } from '../workspace.ts';

export const KEYS_HELP = `metnos keys — manage signing keys and trusted public keys

Usage:
  metnos keys init [--name <name>]     create an Ed25519 key pair in ~/.config/metnos/keys (mode 0600)
                                       and add its public half to your trust list
  metnos keys list                     list your key pairs and the keys you trust
  metnos keys trust <file.pub>         trust another public key (e.g. a release key)
  metnos keys untrust <key-id>         stop trusting a key

Options:
  --name <name>        key name (default "default")
  --config-dir <dir>   Metnos config dir (default $METNOS_CONFIG_DIR or ~/.config/metnos)
`;

export async function keysCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string', default: 'default' },
      'config-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [sub, target] = positionals;
  if (values.help || !sub) {
    io.out(KEYS_HELP);
    return sub || values.help ? 0 : 2;
  }
  const settings = { configDir: values['config-dir'] };
  const store = createKeyStore(settings);
  const trust = createTrustStore(settings);
  switch (sub) {
    case 'init': {
      const key = await store.create(values.name);
      await trust.add(key);
      io.out(
        `created key "${values.name}" ${key.keyId}\n  secret: ${store.dir}/${values.name}.key (mode 0600)\n  public: ${store.dir}/${values.name}.pub\n  added to your trust list ${trust.path}`,
      );
      return 0;
    }
    case 'list': {
      const keys = await store.list();
      const trusted = await trust.list();
      const place = await resolvePlace({ configDir: values['config-dir'] });
      io.out(
        keys.length === 0
          ? 'no key pairs (run `metnos keys init`)'
          : table([['NAME', 'KEY ID'], ...keys.map((key) => [key.name, key.keyId])]),
      );
      io.out('\ntrusted keys:');
      const rows = [['KEY ID', 'FROM']];
      for (const key of trusted) rows.push([key.keyId, trust.path]);
      for (const file of place.config?.trustedKeyFiles ?? []) {
        const key = await readPublicKey(file);
        rows.push([key.keyId, file]);
      }
      io.out(rows.length === 1 ? '  none' : table(rows));
      return 0;
    }
    case 'trust': {
      if (!target) throw new CliFailure('usage: metnos keys trust <file.pub>', 2);
      const place = await resolvePlace({});
      const key = await readPublicKey(userPath(place, target));
      const added = await trust.add(key);
      io.out(added ? `now trusting ${key.keyId}` : `${key.keyId} was already trusted`);
      return 0;
    }
    case 'untrust': {
      if (!target) throw new CliFailure('usage: metnos keys untrust <key-id>', 2);
      const removed = await trust.remove(target);
      if (!removed) throw new CliFailure(`${target} was not in your trust list (metnos keys list shows it)`);
      io.out(`no longer trusting ${target}`);
      return 0;
    }
    default:
      throw new CliFailure(`unknown keys command "${sub}"\n\n${KEYS_HELP}`, 2);
  }
}
