import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The version of `@metnos/cli`, from its package.json (beside `src/` and `dist/` alike). */
export function cliVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8'));
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
