// The row types the public API declares by hand must stay what the drizzle
// schema reads: `pnpm typecheck` fails here when `schema.ts` changes and the
// interface does not. Not imported by any entry, so drizzle's types never reach
// the published declarations.
import { expectTypeOf } from 'vitest';
import type { ObservationRow } from './autopath-store.ts';
import type { observations } from './schema.ts';

expectTypeOf<ObservationRow>().toEqualTypeOf<typeof observations.$inferSelect>();
