import type { Hono } from 'hono';
import { z } from 'zod';
import type { DeviceHub } from '../devices/hub.ts';
import { createPairingCode } from '../devices/pairing.ts';
import type { Device, DeviceStore } from '../devices/store.ts';
import type { RouteDoc } from '../openapi.ts';
import { idParam, readBody, readParam, refuse } from './common.ts';

/** What {@link registerDeviceRoutes} needs: the store, and the hub when the device channel runs. */
export interface DeviceRouteDeps {
  store: DeviceStore;
  hub?: DeviceHub;
  /** The address laptops dial, shown with a new code (default: the hub's own). */
  address?: string;
  /** Who the console acts as, for the audit line of the calls it starts. */
  actor?: string;
}

const executorName = z.string().regex(/^[a-z][a-z0-9_]{1,63}$/, 'an executor name');
const pairingBody = z.object({ executors: z.array(executorName).min(1).max(64) }).strict();
const renameBody = z.object({ name: z.string().trim().min(1).max(64) }).strict();
const callBody = z
  .object({ executor: executorName, args: z.record(z.string(), z.unknown()).default({}) })
  .strict();
const undoBody = z.object({ trace: idParam }).strict();

/** A device as the API shows it: never its key. */
function publicDevice(device: Device) {
  return {
    id: device.id,
    name: device.name,
    state: device.state,
    executors: device.executors,
    platform: device.platform,
    tier: device.tier,
    createdAt: new Date(device.createdAt).toISOString(),
    lastSeenAt: device.lastSeenAt === null ? null : new Date(device.lastSeenAt).toISOString(),
    revokedAt: device.revokedAt === null ? null : new Date(device.revokedAt).toISOString(),
  };
}

/** The routes {@link registerDeviceRoutes} mounts, for the OpenAPI document. */
export const deviceRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/devices',
    summary: 'paired devices, open pairing codes (not the codes), the device channel',
  },
  {
    method: 'post',
    path: '/api/devices/pairings',
    summary:
      'a new one-time pairing code for the executors a device may run: shown once, good for ten minutes and one pairing',
    body: pairingBody,
    refusals: [400],
  },
  {
    method: 'post',
    path: '/api/devices/:id',
    summary: 'renames a device',
    params: { id: idParam },
    body: renameBody,
    refusals: [400, 404],
  },
  {
    method: 'post',
    path: '/api/devices/:id/revoke',
    summary: 'revokes a device: its link is closed and every call of it refused from now on',
    params: { id: idParam },
    refusals: [400, 404],
  },
  {
    method: 'post',
    path: '/api/devices/:id/calls',
    summary:
      'runs an approved executor on the device and answers its outcome, with the before/after manifest of the files it changed',
    params: { id: idParam },
    body: callBody,
    refusals: [400, 404, 409],
  },
  {
    method: 'post',
    path: '/api/devices/undo',
    summary:
      "undoes the file changes of a trace's remote call on its device; refused with the reason when a file changed since",
    body: undoBody,
    refusals: [400, 409],
  },
  {
    method: 'get',
    path: '/api/devices/traces/:trace',
    summary:
      "a trace's remote calls: who asked, the outcome, the before and after manifests, the laptop's audit line",
    params: { trace: idParam },
    refusals: [400],
  },
];

/**
 * Mounts the device routes (behind the bearer token): pairing codes, the
 * list, rename and revoke on the store; calls and undo through the hub, which
 * answer 409 when the device channel is not running.
 *
 * @example
 * registerDeviceRoutes(app, { store, hub });
 */
export function registerDeviceRoutes(app: Hono, deps: DeviceRouteDeps): void {
  const { store, hub } = deps;
  const caller = { kind: 'user' as const, sender: deps.actor ?? 'console', channel: 'api' };
  app.get('/api/devices', (c) =>
    c.json({
      devices: store.devices().map(publicDevice),
      pairings: store
        .openPairings()
        .map((pairing) => ({ ...pairing, expiresAt: new Date(pairing.expiresAt).toISOString() })),
      channel: deps.address ?? hub?.url ?? null,
    }),
  );
  app.post('/api/devices/pairings', async (c) => {
    const body = await readBody(c, pairingBody);
    if (!body.ok) return refuse(c, body.status, body.error, body.message);
    const { code, expiresAt } = createPairingCode(store, { executors: body.value.executors });
    const channel = deps.address ?? hub?.url ?? null;
    return c.json({
      code,
      expiresAt: new Date(expiresAt).toISOString(),
      channel,
      command: `metnos-laptop pair ${channel ?? 'tls://<server>:8788'} ${code}`,
    });
  });
  app.post('/api/devices/undo', async (c) => {
    const body = await readBody(c, undoBody);
    if (!body.ok) return refuse(c, body.status, body.error, body.message);
    if (!hub)
      return refuse(
        c,
        409,
        'no_channel',
        'the device channel is not running: set [devices] listen in metnos.toml',
      );
    return c.json(await hub.undo(body.value.trace, { caller }));
  });
  app.get('/api/devices/traces/:trace', (c) => {
    const trace = readParam(c, 'trace', idParam);
    if (trace === undefined) return refuse(c, 400, 'invalid', 'not a trace id');
    return c.json({ trace, calls: store.callsOfTrace(trace) });
  });
  app.post('/api/devices/:id', async (c) => {
    const id = readParam(c, 'id', idParam);
    if (id === undefined) return refuse(c, 400, 'invalid', 'not a device id');
    const body = await readBody(c, renameBody);
    if (!body.ok) return refuse(c, body.status, body.error, body.message);
    const device = store.find(id);
    if (!device || !store.rename(device.id, body.value.name))
      return refuse(c, 404, 'not_found', `no device ${id}`);
    return c.json(publicDevice(store.device(device.id)!));
  });
  app.post('/api/devices/:id/revoke', async (c) => {
    const id = readParam(c, 'id', idParam);
    if (id === undefined) return refuse(c, 400, 'invalid', 'not a device id');
    const device = store.find(id);
    if (!device) return refuse(c, 404, 'not_found', `no device ${id}`);
    if (hub) await hub.revoke(device.id);
    else store.revoke(device.id);
    return c.json(publicDevice(store.device(device.id)!));
  });
  app.post('/api/devices/:id/calls', async (c) => {
    const id = readParam(c, 'id', idParam);
    if (id === undefined) return refuse(c, 400, 'invalid', 'not a device id');
    const body = await readBody(c, callBody);
    if (!body.ok) return refuse(c, body.status, body.error, body.message);
    if (!hub)
      return refuse(
        c,
        409,
        'no_channel',
        'the device channel is not running: set [devices] listen in metnos.toml',
      );
    if (!store.find(id)) return refuse(c, 404, 'not_found', `no device ${id}`);
    return c.json(await hub.call(id, body.value.executor, body.value.args, { caller }));
  });
}
