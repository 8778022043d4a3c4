// Typechecked, never run: what must NOT compile for a consumer. If a type the public
// .d.ts files name is missing (its package only a devDependency of ours), TypeScript
// turns it into `any`, these lines compile, and the unused @ts-expect-error fails the check.
import { createScratchpad } from '@metnos/planner';

// @ts-expect-error a string is not a better-sqlite3 Database
createScratchpad({ db: 'not a database' });
