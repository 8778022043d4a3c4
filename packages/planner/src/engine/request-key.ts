import { extractQualifiers } from './qualifiers.ts';
import { extractSlots, fingerprint, normalizeRequest, type Slot } from './slots.ts';

/**
 * What memory knows a request by, computed once per turn with no model: its
 * slot-free form and fingerprint (the L0 exact key), its slots (the values a
 * template is bound with) and its qualifiers (which must match exactly).
 */
export interface RequestKey {
  request: string;
  normalized: string;
  fingerprint: string;
  slots: Slot[];
  qualifiers: string[];
}

/**
 * @example
 * describeRequest('read notes/a.md and tell me the first 3 lines');
 * // { normalized: 'read <path> and tell me the first <number> lines', qualifiers: ['position:first'], slots: [...], ... }
 */
export function describeRequest(request: string): RequestKey {
  return {
    request,
    normalized: normalizeRequest(request),
    fingerprint: fingerprint(request),
    slots: extractSlots(request),
    qualifiers: extractQualifiers(request),
  };
}

/** What a remembered plan was learned with, as far as reuse is concerned. */
export interface RememberedShape {
  /** Undefined for a plan learned before qualifiers were kept. */
  qualifiers: readonly string[] | undefined;
  /** The slots the template binds. */
  slots: readonly string[];
  /** The request's other slots, with the values they had. */
  pinned: Readonly<Record<string, string>>;
}

/** May a remembered plan serve this request? If not, why. */
export type ReuseVerdict = { ok: true } | { ok: false; reason: string };

const sameValue = (left: string, right: string) => left.trim().toLowerCase() === right.trim().toLowerCase();

/**
 * The one rule for replaying a remembered plan, used by L0 and L1 alike: the
 * qualifiers must be the same (a plan learned without them is replayed only
 * on an exact fingerprint, whose words already hold them); the request must
 * have exactly the slots the plan binds or pinned; and each pinned slot the
 * same value. "The first 3 lines" never gets the plan of "the last 3 lines",
 * and "remind me in 10 minutes" never the plan learned for 5.
 *
 * @example
 * canReuse({ qualifiers: ['position:last'], slots: ['path_1'], pinned: {} }, describeRequest('first lines of a.md'), 'meaning');
 * // { ok: false, reason: 'qualifiers differ: remembered [position:last], asked [position:first]' }
 */
export function canReuse(
  remembered: RememberedShape,
  key: RequestKey,
  match: 'exact' | 'meaning',
): ReuseVerdict {
  if (remembered.qualifiers === undefined) {
    if (match === 'meaning') return { ok: false, reason: 'learned before qualifiers were kept' };
  } else if (remembered.qualifiers.join('|') !== key.qualifiers.join('|')) {
    return {
      ok: false,
      reason: `qualifiers differ: remembered [${remembered.qualifiers.join(', ')}], asked [${key.qualifiers.join(', ')}]`,
    };
  }
  const asked = new Set(key.slots.map((slot) => slot.name));
  const known = new Set([...remembered.slots, ...Object.keys(remembered.pinned)]);
  const missing = [...known].filter((name) => !asked.has(name));
  const extra = [...asked].filter((name) => !known.has(name));
  if (missing.length > 0 || extra.length > 0)
    return {
      ok: false,
      reason: `slots differ: remembered [${[...known].sort().join(', ')}], asked [${[...asked].sort().join(', ')}]`,
    };
  for (const [name, value] of Object.entries(remembered.pinned)) {
    const now = key.slots.find((slot) => slot.name === name)!.value;
    if (!sameValue(value, now)) return { ok: false, reason: `${name} was "${value}", now "${now}"` };
  }
  return { ok: true };
}

/** The slots of a request a template does not bind, with their values: a replay needs the same. */
export function pinnedSlots(templateSlots: readonly string[], key: RequestKey): Record<string, string> {
  return Object.fromEntries(
    key.slots.filter((slot) => !templateSlots.includes(slot.name)).map((slot) => [slot.name, slot.value]),
  );
}

/**
 * For many requests against one set of remembered plans (a calibration): the
 * ids each request may not reuse by meaning, by {@link canReuse}. Plans of
 * one shape (qualifiers, slots, pinned values) are judged once per request.
 *
 * @example
 * const excluded = reuseFilter(fastpath.list());
 * excluded(describeRequest('read the first 3 lines of a.md')); // ids of plans learned for other qualifiers or slots
 */
export function reuseFilter(
  entries: ReadonlyArray<RememberedShape & { id: string }>,
): (key: RequestKey) => Set<string> {
  const shapes = new Map<string, { shape: RememberedShape; ids: string[] }>();
  for (const entry of entries) {
    const signature = JSON.stringify([entry.qualifiers ?? null, [...entry.slots].sort(), entry.pinned]);
    const group = shapes.get(signature) ?? { shape: entry, ids: [] };
    shapes.set(signature, group);
    group.ids.push(entry.id);
  }
  return (key) => {
    const excluded = new Set<string>();
    for (const { shape, ids } of shapes.values())
      if (!canReuse(shape, key, 'meaning').ok) for (const id of ids) excluded.add(id);
    return excluded;
  };
}
