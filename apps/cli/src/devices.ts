import { join } from 'node:path';
import { resolveConfigDir, type VerifiedExecutor } from '@metnos/executor-sdk';
import {
  createDeviceStore,
  type DeviceHub,
  type DeviceStore,
  openDeviceAuthority,
  startDeviceHub,
} from '@metnos/server';
import { z } from 'zod';
import { CliFailure } from './output.ts';
import type { CliPlace } from './workspace.ts';

/** `[devices]` in metnos.toml: where the device channel listens and what laptops dial. */
export const devicesConfigSchema = z
  .object({
    /** `host:port` the channel listens on; absent, `metnos serve` runs no channel. */
    listen: z
      .string()
      .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'host:port, e.g. 0.0.0.0:8788')
      .optional(),
    /** What a laptop dials, as `metnos devices pair` prints it (default: tls://<listen>). */
    address: z.string().min(3).max(300).optional(),
    /** Push the server's copy of an executor a laptop's cache drifted from (default true). */
    push_updates: z.boolean().optional(),
  })
  .strict();

export type DevicesConfig = z.infer<typeof devicesConfigSchema>;

/** `[devices]` of the workspace's metnos.toml (the app config passes unknown tables through). */
export function devicesConfig(place: CliPlace): DevicesConfig {
  const raw = (place.config?.raw as Record<string, unknown> | undefined)?.devices ?? {};
  const parsed = devicesConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliFailure(`metnos.toml: field "devices.${issue.path.join('.')}": ${issue.message}`);
  }
  return parsed.data;
}

/** The device store of a data folder: `devices.sqlite`. */
export function openDeviceStore(data: string): DeviceStore {
  return createDeviceStore({ path: join(data, 'devices.sqlite') });
}

/** What laptops dial: `[devices] address`, else `tls://<listen>`, else undefined. */
export function deviceAddress(config: DevicesConfig): string | undefined {
  return config.address ?? (config.listen ? `tls://${config.listen}` : undefined);
}

/**
 * Starts the device channel of `metnos serve` when `[devices] listen` is set:
 * the installation's CA in `<config dir>/devices`, the store in the data
 * folder, the executors of the server's own catalog.
 */
export async function startDevices(settings: {
  place: CliPlace;
  config: DevicesConfig;
  store: DeviceStore;
  executor: (name: string) => VerifiedExecutor | undefined;
  trustedKeys: Parameters<typeof startDeviceHub>[0]['trustedKeys'];
  log: (line: string) => void;
}): Promise<DeviceHub | undefined> {
  const { config } = settings;
  if (!config.listen) return undefined;
  const [, host, port] = /^\[?(.*?)\]?:(\d+)$/.exec(config.listen)!;
  const authority = await openDeviceAuthority({
    dir: join(resolveConfigDir(settings.place.configDir), 'devices'),
  });
  return startDeviceHub({
    store: settings.store,
    authority,
    executor: settings.executor,
    trustedKeys: settings.trustedKeys,
    workspace: settings.place.workspace,
    host,
    port: Number(port),
    ...(config.push_updates === undefined ? {} : { pushUpdates: config.push_updates }),
    log: settings.log,
  });
}
