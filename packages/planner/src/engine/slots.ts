import { createHash } from 'node:crypto';

/** Kinds of literal values a request can carry. */
export type SlotKind = 'url' | 'email' | 'path' | 'quoted' | 'date' | 'time' | 'number' | 'name';

/** One literal value found in a request. */
export interface Slot {
  kind: SlotKind;
  value: string;
  /** `path_1`, `number_2`, … in order of appearance within the kind. */
  name: string;
}

const PATTERNS: Array<[SlotKind, RegExp]> = [
  ['url', /\bhttps?:\/\/[^\s"'<>)]+[^\s"'<>),.;:!?]/g],
  ['email', /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g],
  ['quoted', /"([^"\n]{1,200})"|“([^”\n]{1,200})”|«([^»\n]{1,200})»|'([^'\n]{2,200})'/g],
  [
    'path',
    /(?:~|\.{1,2})?\/[^\s"'<>,;]*[^\s"'<>,;.:!?)]|\b[\w-]+(?:\/[\w.-]+)*\.(?:md|txt|json|csv|log|pdf|png|jpe?g|html?|xml|ya?ml|toml|ts|js|py|sh|docx?|xlsx?)\b/g,
  ],
  ['date', /\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\/\d{1,2}\/\d{2,4}\b/g],
  ['time', /\b\d{1,2}:\d{2}(?::\d{2})?\b/g],
  ['number', /(?<![\w./-])-?\d+(?:[.,]\d+)?(?![\w/-])/g],
  ['name', /(?<=[a-z,;:]\s+)(?:[A-Z][a-zà-ÿ]+)(?:\s+[A-Z][a-zà-ÿ]+)*/g],
];

/** A slot and where it sits in the request (`start` inclusive, `end` exclusive). */
export interface LocatedSlot extends Slot {
  start: number;
  end: number;
}

/**
 * The slots of a request with their places, in order of appearance: what
 * {@link extractSlots} returns, for code that reads the words around them
 * (the qualifier extractor does, for "to …" and "from …").
 */
export function locateSlots(request: string): LocatedSlot[] {
  const taken: Array<[number, number]> = [];
  const found: Array<{ kind: SlotKind; value: string; start: number; end: number }> = [];
  for (const [kind, pattern] of PATTERNS) {
    for (const match of request.matchAll(pattern)) {
      const start = match.index!;
      const end = start + match[0].length;
      if (taken.some(([from, to]) => start < to && end > from)) continue;
      taken.push([start, end]);
      const value =
        kind === 'quoted' ? (match.slice(1).find((group) => group !== undefined) ?? match[0]) : match[0];
      found.push({ kind, value, start, end });
    }
  }
  found.sort((a, b) => a.start - b.start);
  const counters = new Map<SlotKind, number>();
  return found.map((slot) => {
    const count = (counters.get(slot.kind) ?? 0) + 1;
    counters.set(slot.kind, count);
    return { ...slot, name: `${slot.kind}_${count}` };
  });
}

/**
 * Finds the literal values of a request — URLs, e-mail addresses, paths,
 * quoted text, dates, times, numbers, capitalised names — without overlaps
 * (earlier kinds win). These become the slots of a remembered plan.
 *
 * @example
 * extractSlots('read ~/notes/a.md and show 3 lines'); // [{ kind: 'path', value: '~/notes/a.md', name: 'path_1' }, { kind: 'number', value: '3', name: 'number_1' }]
 */
export function extractSlots(request: string): Slot[] {
  return locateSlots(request).map(({ kind, value, name }) => ({ kind, value, name }));
}

/** The request with each slot replaced by its kind: "read <path> and show <number> lines". */
export function normalizeRequest(request: string): string {
  let text = request;
  const slots = extractSlots(request).sort((a, b) => b.value.length - a.value.length);
  for (const slot of slots) text = text.split(slot.value).join(`<${slot.kind}>`);
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^\p{L}\p{N}<>_]+/gu, ' ')
    .trim()
    .replace(/\s+/g, ' ');
}

/** The exact fingerprint of a request: the hash of its normalised, slot-free form. */
export function fingerprint(request: string): string {
  return createHash('sha256').update(normalizeRequest(request)).digest('hex').slice(0, 32);
}

/**
 * Turns a plan that worked into a template: every string in it that holds a
 * slot value from the request gets `${SLOT:name}` in its place. Returns the
 * template and the slot names it needs.
 */
export function templatize<T>(plan: T, request: string): { template: T; slots: string[] } {
  const slots = extractSlots(request).sort((a, b) => b.value.length - a.value.length);
  const used = new Set<string>();
  const replace = (value: unknown): unknown => {
    if (typeof value === 'string') {
      let text = value;
      for (const slot of slots) {
        if (slot.value.length === 0 || !text.includes(slot.value)) continue;
        if (
          slot.kind === 'number' &&
          !new RegExp(`(?<![\\w.])${slot.value.replace(/[.]/g, '\\.')}(?![\\w.])`).test(text)
        )
          continue;
        text = text.split(slot.value).join(`\${SLOT:${slot.name}}`);
        used.add(slot.name);
      }
      return text;
    }
    if (typeof value === 'number') {
      const slot = slots.find(
        (candidate) => candidate.kind === 'number' && Number(candidate.value.replace(',', '.')) === value,
      );
      if (slot) {
        used.add(slot.name);
        return `\${SLOT:${slot.name}}`;
      }
      return value;
    }
    if (Array.isArray(value)) return value.map(replace);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replace(item)]));
    }
    return value;
  };
  return { template: templateParts(plan, replace) as T, slots: [...used].sort() };
}

/** The parts of a plan that carry the request's values; ids, kinds, tools, versions, keys and policy are structure. */
const STEP_VALUES = new Set(['args', 'draft']);
const FILLER_VALUES = new Set(['prompt', 'default']);

function templateParts(plan: unknown, replace: (value: unknown) => unknown): unknown {
  if (plan === null || typeof plan !== 'object' || !Array.isArray((plan as { steps?: unknown }).steps))
    return replace(plan);
  const source = plan as Record<string, unknown>;
  const pick = (object: unknown, keys: ReadonlySet<string>) =>
    object !== null && typeof object === 'object' && !Array.isArray(object)
      ? Object.fromEntries(
          Object.entries(object).map(([key, item]) => [key, keys.has(key) ? replace(item) : item]),
        )
      : object;
  const out: Record<string, unknown> = { ...source };
  out.steps = (source.steps as unknown[]).map((step) => pick(step, STEP_VALUES));
  if (source.fillers !== null && typeof source.fillers === 'object')
    out.fillers = Object.fromEntries(
      Object.entries(source.fillers as Record<string, unknown>).map(([name, filler]) => [
        name,
        pick(filler, FILLER_VALUES),
      ]),
    );
  if ('final_message' in source) out.final_message = replace(source.final_message);
  const policy = source.policy as { branch?: unknown[] } | undefined;
  if (policy && Array.isArray(policy.branch))
    out.policy = {
      ...policy,
      branch: policy.branch.map((branch) => pick(branch, new Set(['final_message']))),
    };
  return out;
}

/**
 * Binds a template's slots from a new request. Returns undefined when a slot
 * the template needs has no value in the request: such a request must not be
 * served from memory. Numeric slots that are a whole value become numbers again.
 */
export function bindSlots<T>(
  template: T,
  needed: readonly string[],
  request: string,
): { plan: T; values: Record<string, string> } | undefined {
  const values: Record<string, string> = {};
  for (const slot of extractSlots(request)) values[slot.name] = slot.value;
  if (!needed.every((name) => values[name] !== undefined)) return undefined;
  const bind = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const whole = /^\$\{SLOT:(number_\d+)\}$/.exec(value);
      if (whole) {
        const number = Number(values[whole[1]!]!.replace(',', '.'));
        return Number.isFinite(number) ? number : values[whole[1]!];
      }
      return value.replace(/\$\{SLOT:([a-z]+_\d+)\}/g, (_, name: string) => values[name] ?? _);
    }
    if (Array.isArray(value)) return value.map(bind);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, bind(item)]));
    }
    return value;
  };
  return { plan: bind(template) as T, values };
}
