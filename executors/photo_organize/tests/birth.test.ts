import { mkdir, mkdtemp, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { birth } from '@metnos/sandbox/birth';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jpeg, writePhotos } from './photos.ts';

const executor = birth(join(import.meta.dirname, '..'));

interface Plan {
  operations: Array<{ op: 'move'; from: string; to: string }>;
  organised: number;
  already_sorted: number;
  skipped: number;
  dated_by: { exif: number; mtime: number };
  truncated: boolean;
}

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'metnos-photo-organize-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const organise = async (args: Record<string, unknown> = {}) => {
  const result = await executor.invoke(args, { workspace });
  if (!result.ok) throw new Error(`${result.error.class}: ${result.error.message}`);
  return result.content as Plan;
};

/** Every file under the workspace, relative, sorted (the host's masked .audit aside). */
async function tree(): Promise<string[]> {
  const entries = await readdir(workspace, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(workspace.length + 1))
    .filter((path) => !path.startsWith('.audit'))
    .sort();
}

describe('photo_organize birth', () => {
  it('dates photos by EXIF DateTimeOriginal in either byte order, else by mtime, and proposes the moves', async () => {
    await writeFile(join(workspace, 'beach.jpg'), jpeg({ taken: '2023:07:14 09:30:00' }));
    await writeFile(join(workspace, 'snow.JPG'), jpeg({ taken: '2021:12:30 18:00:00', order: 'MM' }));
    await writeFile(join(workspace, 'scan.jpg'), jpeg());
    const when = new Date(Date.UTC(2019, 2, 3));
    await utimes(join(workspace, 'scan.jpg'), when, when);
    await writeFile(join(workspace, 'notes.txt'), 'not a photo');
    const plan = await organise();
    expect(plan.operations).toEqual([
      { op: 'move', from: 'beach.jpg', to: '2023/07/beach.jpg' },
      { op: 'move', from: 'scan.jpg', to: '2019/03/scan.jpg' },
      { op: 'move', from: 'snow.JPG', to: '2021/12/snow.JPG' },
    ]);
    expect(plan).toMatchObject({
      organised: 3,
      skipped: 1,
      dated_by: { exif: 2, mtime: 1 },
      truncated: false,
    });
  });

  it('changes nothing itself: the profile reads the folder, the host applies the moves', async () => {
    await writePhotos(workspace, 20);
    const before = await tree();
    const plan = await organise();
    expect(plan.organised).toBe(20);
    expect(await tree()).toEqual(before);
  });

  it('uses mtime when asked, leaves sorted photos alone and never proposes a taken name', async () => {
    await mkdir(join(workspace, '2023', '07'), { recursive: true });
    await writeFile(join(workspace, '2023', '07', 'beach.jpg'), jpeg({ taken: '2023:07:01 10:00:00' }));
    await mkdir(join(workspace, 'old'));
    await writeFile(
      join(workspace, 'old', 'beach.jpg'),
      jpeg({ taken: '2023:07:20 10:00:00', comment: 'b' }),
    );
    await writeFile(join(workspace, 'beach.jpg'), jpeg({ taken: '2023:07:21 10:00:00', comment: 'c' }));
    const plan = await organise({ recursive: true });
    expect(plan.operations).toEqual([
      { op: 'move', from: 'beach.jpg', to: '2023/07/beach (2).jpg' },
      { op: 'move', from: 'old/beach.jpg', to: '2023/07/beach (3).jpg' },
    ]);
    expect(plan.already_sorted).toBe(1);
    const when = new Date(Date.UTC(2020, 0, 2));
    await utimes(join(workspace, 'beach.jpg'), when, when);
    expect((await organise({ by: 'mtime' })).operations).toEqual([
      { op: 'move', from: 'beach.jpg', to: '2020/01/beach.jpg' },
    ]);
  });

  it('skips links, hidden files and broken EXIF without failing, and stops at max_files', async () => {
    await writeFile(join(workspace, '.hidden.jpg'), jpeg({ taken: '2020:01:01 00:00:00' }));
    await writeFile(join(workspace, 'real.jpg'), jpeg({ taken: '2020:01:01 00:00:00' }));
    await symlink(join(workspace, 'real.jpg'), join(workspace, 'link.jpg'));
    // an APP1 that claims more than the file holds, and an IFD pointing past the end
    const broken = Buffer.concat([
      Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0xff, 0xf0]),
      Buffer.from('Exif\0\0II*\0\xff\xff\0\0', 'latin1'),
    ]);
    await writeFile(join(workspace, 'broken.jpg'), broken);
    const plan = await organise();
    expect(plan.operations.map((operation) => operation.from)).toEqual(['broken.jpg', 'real.jpg']);
    expect(plan).toMatchObject({ skipped: 1, dated_by: { exif: 1, mtime: 1 } });
    expect(await organise({ max_files: 1 })).toMatchObject({ organised: 1, truncated: true });
  });

  it('fails with NotFound and NotADirectory, and refuses folders outside the granted one', async () => {
    await writeFile(join(workspace, 'a.jpg'), jpeg());
    expect(await executor.invoke({ folder: 'nowhere' }, { workspace })).toMatchObject({
      ok: false,
      error: { class: 'NotFound' },
    });
    expect(await executor.invoke({ folder: 'a.jpg' }, { workspace })).toMatchObject({
      ok: false,
      error: { class: 'NotADirectory' },
    });
    expect(await executor.invoke({ folder: '/etc' }, { workspace })).toMatchObject({
      ok: false,
      error: { class: expect.stringMatching(/^(PermissionDenied|PolicyViolation)$/) },
    });
    expect(await executor.invoke({ folder: '../..' }, { workspace })).toMatchObject({ ok: false });
  });
});
