import type { BigIntStats } from 'node:fs';
export declare function fileStamp(info: BigIntStats): string;
export declare function readArtefactFile(path: string): { bytes: Buffer; stamp: string };
export declare function readArtefactView(path: string): { bytes: Buffer; stamp: string };
export declare function readInto(
  path: string,
  bufferFor: (size: number) => Buffer | undefined,
): { bytes: Buffer; stamp: string };
/** The path of `file` in a version folder, with or without a trailing slash on the folder. */
export declare function artefactPath(dir: string, file: string): string;
/** The code file a manifest's text names: its `entry = "…"` line, else `main.ts`. */
export declare function entryFileOf(manifestText: string): string;
