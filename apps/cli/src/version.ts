import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The version of `@metnos/cli`, from its package.json (beside `src/` and `dist/` alike). */
export function cliVersion(): string {
  // the nearest package.json above this file: src/ and dist/ (and its chunks) alike
  for (let dir = import.meta.dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      return typeof manifest.version === 'string' ? manifest.version : 'unknown';
    } catch {
      // not here: one folder up
    }
  }
  return 'unknown';
}
