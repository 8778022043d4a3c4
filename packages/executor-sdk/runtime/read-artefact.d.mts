import type { BigIntStats } from 'node:fs';
export declare function fileStamp(info: BigIntStats): string;
export declare function readArtefactFile(path: string): { bytes: Buffer; stamp: string };
