import type { CatalogListing, VerifiedExecutor } from '@metnos/executor-sdk';
import type { Mnest } from '@metnos/mnestome';
import type { ProposalKind } from '../synt-store.ts';

/** A card an introspective step would file: what, why, and what was measured. */
export interface CardDraft {
  kind: ProposalKind;
  /** One card per subject: the same suggestion on another night refreshes it. */
  key: string;
  title: string;
  motivation: unknown;
  evidence: Record<string, unknown>;
  note: string;
}

/** What the introspective steps read: the catalog as loaded, its lifecycle listing, the mnestome's graph. */
export interface IntrospectionInput {
  executors: readonly VerifiedExecutor[];
  listing: readonly CatalogListing[];
  mnests: readonly Mnest[];
  now: Date;
}

/** The executors the person made or the synt made (not seeds), active: what merge and generalise consider. */
export function ownActive(input: IntrospectionInput): VerifiedExecutor[] {
  const active = new Set(
    input.listing.filter((row) => row.state === 'active' && row.current).map((row) => row.name),
  );
  return input.executors.filter(
    (executor) => active.has(executor.name) && executor.manifest.executor.created_by !== 'seed',
  );
}
