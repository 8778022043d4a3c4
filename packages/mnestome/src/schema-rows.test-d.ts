// The schema stays private (drizzle's declarations never reach the published
// ones); `pnpm typecheck` fails here when a column the store reads changes type.
import { expectTypeOf } from 'vitest';
import type { Mnest } from './mnestome.ts';
import type { mnests } from './schema.ts';

type Row = typeof mnests.$inferSelect;
expectTypeOf<Pick<Mnest, 'src' | 'dst' | 'dstExists' | 'weight' | 'uses' | 'state'>>().toEqualTypeOf<
  Pick<Row, 'src' | 'dst' | 'dstExists' | 'weight' | 'uses' | 'state'>
>();
