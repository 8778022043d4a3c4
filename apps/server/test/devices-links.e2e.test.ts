import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { writePhotos } from '../../../executors/photo_organize/tests/photos.ts';
import { makeLaptop, makeServer, pair, tree, until } from './devices-fixture.ts';

// The link between server and laptop cut, or the laptop killed, at each step of a call: the
// server delivers the call again with the same key, and each photo is moved exactly once.

let server: Awaited<ReturnType<typeof makeServer>>;
let laptop: Awaited<ReturnType<typeof makeLaptop>>;
let agent: ReturnType<Awaited<ReturnType<typeof makeLaptop>>['start']>;
let device: string;
let batch = 0;

beforeAll(async () => {
  server = await makeServer();
  laptop = await makeLaptop();
  device = await pair(server, laptop);
});

afterAll(async () => {
  await agent?.stop();
  await server?.close();
  await laptop?.remove();
});

beforeEach(async () => {
  if (!agent || agent.child.exitCode !== null || agent.child.signalCode !== null) agent = laptop.start();
  await until(() => server.hub.connected(device), 20_000, 'the laptop to connect');
});

/** A folder of fresh photos for one test, and where each should end up inside it. */
async function photos(count: number) {
  const folder = `batch${++batch}`;
  const expected = await writePhotos(join(laptop.pictures, folder), count);
  return { folder, expected: [...expected.values()].sort() };
}

/** The call's key in the laptop's ledger: how often the executor ran, how many moves are done. */
function ledgerOf(key: string) {
  const ledger = laptop.ledger();
  try {
    return {
      call: ledger.get(key),
      done: ledger.operations(key).filter((operation) => operation.state === 'done').length,
    };
  } finally {
    ledger.close();
  }
}

async function okLines(trace: string) {
  return (await laptop.auditLines()).filter((line) => line.trace_id === trace && line.exit === 'ok');
}

const organise = (folder: string) =>
  server.hub.call(device, 'photo_organize', { folder }, { caller: { kind: 'test' } });

describe('exactly once over a link that drops', () => {
  it('the link cut before the call reaches the laptop: delivered again after the reconnect, run once', async () => {
    const { folder, expected } = await photos(200);
    server.relay.swallow('down');
    const pending = organise(folder);
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.relay.cut();
    server.relay.swallow(undefined);
    const outcome = await pending;
    expect(outcome.result).toMatchObject({ ok: true, metadata: { applied: 200 } });
    expect(await tree(join(laptop.pictures, folder))).toEqual(expected);
    expect(ledgerOf(outcome.key)).toMatchObject({ call: { state: 'done', runs: 1 }, done: 200 });
    expect(await okLines(outcome.trace)).toHaveLength(1);
  });

  it('the laptop killed while the executor runs: the plan is made again, the moves happen once', async () => {
    const { folder, expected } = await photos(200);
    const running = agent.waitFor(/running photo_organize/);
    const pending = organise(folder);
    await running;
    await agent.kill();
    agent = laptop.start();
    const outcome = await pending;
    expect(outcome.result).toMatchObject({ ok: true, metadata: { applied: 200 } });
    expect(await tree(join(laptop.pictures, folder))).toEqual(expected);
    const { call, done } = ledgerOf(outcome.key);
    expect(call).toMatchObject({ state: 'done' });
    expect(call!.runs).toBeGreaterThanOrEqual(1);
    expect(done).toBe(200);
    expect(await okLines(outcome.trace)).toHaveLength(1);
  });

  it('the laptop killed halfway through the moves: the journal finishes the rest, none is moved twice', async () => {
    const { folder, expected } = await photos(600);
    const halfway = agent.waitFor(/applied 250 operations/);
    const pending = organise(folder);
    await halfway;
    await agent.kill();
    const { call: cut, done: before } = ledgerOf((await waitForKey(folder))!);
    expect(cut).toMatchObject({ state: 'applying', runs: 1 });
    expect(before).toBeGreaterThanOrEqual(250);
    expect(before).toBeLessThan(600);
    agent = laptop.start();
    const outcome = await pending;
    expect(outcome.result).toMatchObject({ ok: true, metadata: { applied: 600 } });
    expect(await tree(join(laptop.pictures, folder))).toEqual(expected);
    expect(ledgerOf(outcome.key)).toMatchObject({ call: { state: 'done', runs: 1 }, done: 600 });
    expect(outcome.manifest?.after).toHaveLength(600);
    expect(await okLines(outcome.trace)).toHaveLength(1);
  });

  it('the reply lost after the last move: the key comes again and gets the recorded outcome, nothing runs', async () => {
    const { folder, expected } = await photos(200);
    const applying = agent.waitFor(/: applying/);
    const done = agent.waitFor(/: done \(ok\)/);
    const pending = organise(folder);
    await applying;
    server.relay.swallow('up');
    await done;
    server.relay.cut();
    server.relay.swallow(undefined);
    const outcome = await pending;
    expect(outcome).toMatchObject({ replayed: true, result: { ok: true, metadata: { applied: 200 } } });
    expect(await tree(join(laptop.pictures, folder))).toEqual(expected);
    expect(ledgerOf(outcome.key)).toMatchObject({ call: { runs: 1 }, done: 200 });
    const lines = (await laptop.auditLines()).filter((line) => line.trace_id === outcome.trace);
    expect(lines.map((line) => line.exit)).toEqual(['ok', 'replayed']);
  });

  it('the laptop killed after the last move, before the reply: restarted, it answers from its ledger', async () => {
    const { folder, expected } = await photos(200);
    const applying = agent.waitFor(/: applying/);
    const done = agent.waitFor(/: done \(ok\)/);
    const pending = organise(folder);
    await applying;
    server.relay.swallow('up');
    await done;
    await agent.kill();
    server.relay.swallow(undefined);
    agent = laptop.start();
    const outcome = await pending;
    expect(outcome).toMatchObject({ replayed: true, result: { ok: true } });
    expect(await tree(join(laptop.pictures, folder))).toEqual(expected);
    expect(ledgerOf(outcome.key)).toMatchObject({ call: { runs: 1 }, done: 200 });
  });
});

/** The key of the call working on `folder`, from the server's record. */
async function waitForKey(folder: string): Promise<string | undefined> {
  let key: string | undefined;
  await until(() => {
    key = server.store
      .recentCalls(20)
      .find((call) => (call.args as { folder?: string }).folder === folder)?.key;
    return key !== undefined;
  });
  return key;
}

describe('refusals', () => {
  it('a tampered cached executor is refused; the server pushes its copy, and the tampered code never runs', async () => {
    const cached = join(laptop.stateDir, 'cache', 'photo_organize', 'main.ts');
    const genuine = await readFile(cached, 'utf8');
    // if this ran, every photo would be proposed into pwned/
    await writeFile(cached, genuine.replace('join(root, date.year, date.month)', "join(root, 'pwned')"));
    const { folder, expected } = await photos(20);
    const outcome = await organise(folder);
    expect(outcome.result).toMatchObject({ ok: true, metadata: { applied: 20 } });
    expect(await tree(join(laptop.pictures, folder))).toEqual(expected);
    expect(await readFile(cached, 'utf8')).toBe(genuine);
    const refusal = (await laptop.auditLines()).find(
      (line) => line.trace_id === outcome.trace && line.exit === 'refused',
    );
    expect(refusal).toMatchObject({ error_class: 'drift' });
    expect(
      server.logs.some((line) => /does not verify against its signed manifest.*main\.ts/.test(line)),
    ).toBe(true);
  });

  it('arguments the server policy refuses never reach the laptop', async () => {
    for (const folder of ['../..', '/etc', '~/.ssh', 'x/.ssh/keys', '.config/metnos'])
      expect((await organise(folder)).result).toMatchObject({
        ok: false,
        error: { class: 'PolicyViolation' },
      });
  });

  it('a peer without a device certificate may only pair: anything else is refused and logged', async () => {
    const socket = connect({
      host: '127.0.0.1',
      port: server.hub.port,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
    });
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    socket.write(
      `${JSON.stringify({ type: 'hello', agent: 'x', platform: 'linux', tier: 'full', cache: [] })}\n`,
    );
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/"pair-refused"/);
    await until(
      async () =>
        (await server.auditLines()).some(
          (line) =>
            line.event === 'device_refused' && /without a device certificate/.test(String(line.reason)),
        ),
      5_000,
      'the refusal in the audit tree',
    );
    // TLS older than 1.3 does not get a session at all
    const old = connect({
      host: '127.0.0.1',
      port: server.hub.port,
      rejectUnauthorized: false,
      maxVersion: 'TLSv1.2',
    });
    expect(
      await new Promise((resolve) =>
        old.once('error', () => resolve('refused')).once('secureConnect', () => resolve('accepted')),
      ),
    ).toBe('refused');
  });

  it('a revoked device is refused at once: its link is closed, its calls fail, it cannot come back', async () => {
    await server.hub.revoke(device);
    expect(await agent.exited).toBe(3);
    expect(agent.output()).toMatch(/this device was revoked/);
    expect((await organise('.')).result).toMatchObject({ ok: false, error: { class: 'Revoked' } });
    const again = await laptop.run(['run']);
    expect(again.code).toBe(3);
    await until(
      async () =>
        (await server.auditLines()).some(
          (line) => line.event === 'device_refused' && line.reason === 'a revoked device',
        ),
      5_000,
      'the refusal in the audit tree',
    );
    expect(server.store.device(device)).toMatchObject({ state: 'revoked' });
  });
});
