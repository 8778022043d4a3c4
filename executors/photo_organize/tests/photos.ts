// Small real JPEGs for the tests: one 8x8 grey block, baseline, with an optional EXIF
// DateTimeOriginal and a comment that makes each file's bytes its own.
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const segment = (marker: number, body: Buffer) =>
  Buffer.concat([Buffer.from([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff]), body]);

/** APP1 "Exif": a little-endian TIFF structure whose IFD0 points to an Exif IFD holding DateTimeOriginal. */
function exifSegment(dateTimeOriginal: string, order: 'II' | 'MM'): Buffer {
  const tiff = Buffer.alloc(64);
  const little = order === 'II';
  const u16 = (value: number, at: number) =>
    little ? tiff.writeUInt16LE(value, at) : tiff.writeUInt16BE(value, at);
  const u32 = (value: number, at: number) =>
    little ? tiff.writeUInt32LE(value, at) : tiff.writeUInt32BE(value, at);
  tiff.write(order, 0, 'latin1');
  u16(42, 2);
  u32(8, 4);
  // IFD0: one entry, ExifIFDPointer (0x8769, LONG) → 26
  u16(1, 8);
  u16(0x8769, 10);
  u16(4, 12);
  u32(1, 14);
  u32(26, 18);
  u32(0, 22);
  // Exif IFD: one entry, DateTimeOriginal (0x9003, ASCII, 20 bytes) → 44
  u16(1, 26);
  u16(0x9003, 28);
  u16(2, 30);
  u32(20, 32);
  u32(44, 36);
  u32(0, 40);
  tiff.write(`${dateTimeOriginal}\0`, 44, 'latin1');
  return segment(0xe1, Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]));
}

/**
 * A valid baseline JPEG of one 8x8 grey block: SOI, optional EXIF, a comment,
 * a quantisation table, the frame, two one-code Huffman tables, the scan
 * (DC 0, end of block) and EOI.
 */
export function jpeg(options: { taken?: string; comment?: string; order?: 'II' | 'MM' } = {}): Buffer {
  const huffman = (tableClass: number) =>
    segment(0xc4, Buffer.from([tableClass, 1, ...new Array(15).fill(0), 0x00]));
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    options.taken ? exifSegment(options.taken, options.order ?? 'II') : Buffer.alloc(0),
    segment(0xfe, Buffer.from(options.comment ?? 'metnos test photo', 'utf8')),
    segment(0xdb, Buffer.from([0x00, ...new Array(64).fill(1)])),
    segment(0xc0, Buffer.from([8, 0, 8, 0, 8, 1, 1, 0x11, 0])),
    huffman(0x00),
    huffman(0x10),
    segment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0])),
    Buffer.from([0x3f, 0xff, 0xd9]),
  ]);
}

/**
 * Writes `count` photos named `IMG_0000.jpg` … into `folder`: most with an EXIF
 * date spread over 2019–2024, every fifth without one but with a modification
 * time in 2018–2021. Returns where each should end up (`YYYY/MM/name`).
 */
export async function writePhotos(folder: string, count: number): Promise<Map<string, string>> {
  const expected = new Map<string, string>();
  await mkdir(folder, { recursive: true });
  const writes: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    const name = `IMG_${String(index).padStart(4, '0')}.jpg`;
    const path = join(folder, name);
    if (index % 5 === 4) {
      const year = 2018 + (index % 4);
      const month = (index % 12) + 1;
      const when = new Date(Date.UTC(year, month - 1, 15, 12));
      writes.push(writeFile(path, jpeg({ comment: `photo ${index}` })).then(() => utimes(path, when, when)));
      expected.set(name, `${year}/${String(month).padStart(2, '0')}/${name}`);
    } else {
      const year = 2019 + (index % 6);
      const month = ((index * 7) % 12) + 1;
      const taken = `${year}:${String(month).padStart(2, '0')}:0${(index % 9) + 1} 10:20:30`;
      writes.push(
        writeFile(path, jpeg({ taken, comment: `photo ${index}`, order: index % 2 ? 'MM' : 'II' })),
      );
      expected.set(name, `${year}/${String(month).padStart(2, '0')}/${name}`);
    }
    if (writes.length >= 64) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  return expected;
}
