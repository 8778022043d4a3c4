import { INTENT_VERBS } from './intent-vocabulary.ts';
import { locateSlots } from './slots.ts';

/**
 * Words that change a plan without changing what the request is about: the
 * first lines or the last, the largest file or the smallest, today's
 * meetings or tomorrow's. Each group maps a canonical value to the words
 * (English and Italian, accent-folded, lowercase) that say it; phrases of
 * several words are matched before single words.
 */
export const QUALIFIER_WORDS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  position: {
    first: [
      'first',
      'head',
      'top',
      'beginning',
      'start',
      'initial',
      'opening',
      'primo',
      'prima',
      'primi',
      'prime',
      'inizio',
      'iniziali',
    ],
    last: [
      'last',
      'tail',
      'bottom',
      'end',
      'ending',
      'final',
      'ultimo',
      'ultima',
      'ultimi',
      'ultime',
      'fine',
      'finali',
    ],
  },
  size: {
    largest: [
      'largest',
      'biggest',
      'heaviest',
      'maximum',
      'most space',
      'piu grande',
      'piu grandi',
      'maggiore',
      'massimo',
    ],
    smallest: [
      'smallest',
      'tiniest',
      'lightest',
      'minimum',
      'least space',
      'piu piccolo',
      'piu piccoli',
      'minore',
      'minimo',
    ],
  },
  age: {
    newest: [
      'newest',
      'latest',
      'most recent',
      'recent',
      'newer',
      'piu recente',
      'piu recenti',
      'nuovo',
      'nuovi',
      'recente',
      'recenti',
    ],
    oldest: [
      'oldest',
      'earliest',
      'least recent',
      'older',
      'piu vecchio',
      'piu vecchi',
      'meno recente',
      'vecchio',
      'vecchi',
    ],
  },
  day: {
    today: ['today', 'tonight', 'this morning', 'this evening', 'oggi', 'stasera', 'stamattina'],
    yesterday: ['yesterday', 'ieri'],
    tomorrow: ['tomorrow', 'domani'],
  },
  relative: {
    next: ['next', 'upcoming', 'coming', 'prossimo', 'prossima', 'prossimi', 'prossime'],
    previous: ['previous', 'prior', 'precedente', 'precedenti', 'scorso', 'scorsa', 'scorsi', 'scorse'],
  },
  ordinal: {
    '2': ['second', 'secondo', 'seconda'],
    '3': ['third', 'terzo', 'terza'],
    '4': ['fourth', 'quarto', 'quarta'],
    '5': ['fifth', 'quinto', 'quinta'],
  },
  relation: {
    before: ['before', 'until', 'earlier than', 'prior to', 'entro', 'fino a'],
    after: ['after', 'since', 'later than', 'dopo', 'a partire da'],
  },
  comparison: {
    more: [
      'more than',
      'greater than',
      'bigger than',
      'larger than',
      'longer than',
      'at least',
      'above',
      'over',
      'piu di',
      'almeno',
      'sopra',
    ],
    less: [
      'less than',
      'fewer than',
      'smaller than',
      'shorter than',
      'at most',
      'below',
      'under',
      'meno di',
      'al massimo',
      'sotto',
    ],
  },
  logic: {
    any: ['or', 'either', 'oppure'],
  },
  order: {
    ascending: ['ascending', 'increasing', 'crescente', 'a to z'],
    descending: ['descending', 'decreasing', 'reverse', 'decrescente', 'z to a'],
  },
  polarity: {
    not: [
      'not',
      'no',
      'none',
      'without',
      'never',
      'except',
      'excluding',
      'non',
      'senza',
      'tranne',
      'mai',
      'nessun',
      'nessuno',
      'nessuna',
    ],
  },
  weekday: {
    monday: ['monday', 'lunedi'],
    tuesday: ['tuesday', 'martedi'],
    wednesday: ['wednesday', 'mercoledi'],
    thursday: ['thursday', 'giovedi'],
    friday: ['friday', 'venerdi'],
    saturday: ['saturday', 'sabato'],
    sunday: ['sunday', 'domenica'],
  },
  month: {
    january: ['january', 'gennaio'],
    february: ['february', 'febbraio'],
    march: ['march', 'marzo'],
    april: ['april', 'aprile'],
    may: ['maggio'],
    june: ['june', 'giugno'],
    july: ['july', 'luglio'],
    august: ['august', 'agosto'],
    september: ['september', 'settembre'],
    october: ['october', 'ottobre'],
    november: ['november', 'novembre'],
    december: ['december', 'dicembre'],
  },
  number: {
    '1': ['one', 'single'],
    '2': ['two', 'couple', 'pair', 'due'],
    '3': ['three', 'tre'],
    '4': ['four', 'quattro'],
    '5': ['five', 'cinque'],
    '6': ['six'],
    '7': ['seven', 'sette'],
    '8': ['eight', 'otto'],
    '9': ['nine', 'nove'],
    '10': ['ten', 'dieci'],
    '11': ['eleven', 'undici'],
    '12': ['twelve', 'dozen', 'dodici'],
    '20': ['twenty', 'venti'],
    '50': ['fifty', 'cinquanta'],
    '100': ['hundred', 'cento'],
  },
};

/** Words that point at a recipient, a source or a destination; the word after them is kept. */
const DIRECTIONS: Readonly<Record<string, 'to' | 'from'>> = {
  to: 'to',
  into: 'to',
  onto: 'to',
  towards: 'to',
  verso: 'to',
  from: 'from',
  da: 'from',
  dal: 'from',
  dalla: 'from',
  dai: 'from',
  dalle: 'from',
};

/**
 * Other names of the places mail and files are moved to, by the name their
 * special use has (IMAP's \Trash, \Junk, \Archive, \Sent, \Drafts): "to the
 * bin" and "to trash" point at one place, "to the archive" at another.
 */
const PLACE_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries({
    trash: ['bin', 'wastebasket', 'rubbish', 'garbage', 'deleted', 'cestino', 'spazzatura', 'eliminati'],
    junk: ['spam', 'indesiderata'],
    archive: ['archives', 'archivio'],
    sent: ['outbox', 'inviati', 'inviata'],
    drafts: ['draft', 'bozze', 'bozza'],
  }).flatMap(([canonical, names]) => names.map((name) => [name, canonical])),
);

/** Skipped between a direction word and what it points at. */
const FILLERS = new Set(
  'the a an my your his her our their this that these those il lo la i gli le un una mio mia miei mie tuo tua suo sua'.split(
    ' ',
  ),
);

const VERB_WORDS = new Set(Object.values(INTENT_VERBS).flat());

/**
 * Words after which "to" marks an infinitive ("I need to know", "how to
 * transfer", "you ought to be"), not where something goes.
 */
const INFINITIVE_AFTER = new Set(
  'want wants wanted need needs needed like likes love prefer how what where whether going have has had able unable try trying tried wish hope plan planning ought supposed used allowed decide forget remember learn begin continue afraid'.split(
    ' ',
  ),
);

/**
 * Common English verbs in their base form: "to" before one of them is an
 * infinitive ("I want you to increase the volume", "enough fuel to take me
 * home"), never a recipient or a destination. Words that are also frequent
 * names or places ("mark", "bill", "work", "school", "home") are left out,
 * so "to mark" and "to work" still point somewhere.
 */
const INFINITIVE_VERBS = new Set(
  'be do make take see go get say give tell ask use pay buy book cancel check increase decrease raise lower change schedule wait travel transfer improve learn stop try keep help put turn play hear watch eat cook reserve remind remember understand speak talk visit meet leave stay sleep wake fix repair replace apply remove delete update upgrade fill finish begin become feel think let bring drive fly walk sell spend borrow lend rent share hire quit join win lose earn afford avoid prevent handle contact confirm report block freeze unlock lock activate reset install upload print translate pronounce spell describe explain calculate measure prepare clean wash call know set start'.split(
    ' ',
  ),
);

/** Is the "to" at `index` an infinitive marker rather than a direction? */
function infinitive(tokens: readonly string[], index: number): boolean {
  const before = tokens[index - 1];
  const after = tokens[index + 1];
  return (
    (before !== undefined && INFINITIVE_AFTER.has(before)) ||
    (after !== undefined && INFINITIVE_VERBS.has(after))
  );
}

const PHRASES: Array<{ words: string[]; qualifier: string }> = Object.entries(QUALIFIER_WORDS)
  .flatMap(([group, values]) =>
    Object.entries(values).flatMap(([value, words]) =>
      words.map((phrase) => ({ words: phrase.split(' '), qualifier: `${group}:${value}` })),
    ),
  )
  .sort((a, b) => b.words.length - a.words.length);

/** Accent-folded lowercase words, with each slot standing as one token `<name>` (say `<path_1>`). */
export function qualifierTokens(request: string): string[] {
  const words = (text: string) =>
    text
      .replace(/n['’]t\b/gi, ' not')
      .normalize('NFD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean);
  const tokens: string[] = [];
  let at = 0;
  for (const slot of locateSlots(request)) {
    tokens.push(...words(request.slice(at, slot.start)), `<${slot.name}>`);
    at = slot.end;
  }
  tokens.push(...words(request.slice(at)));
  return tokens;
}

/**
 * The qualifiers of a request, deterministically, with no model: what of
 * {@link QUALIFIER_WORDS} it says (`position:first`, `day:tomorrow`,
 * `polarity:not`, `number:3` for "three"…) and where its "to" and "from"
 * point (`to:anna`, `from:path_1` — a slot stands by its name, so "from
 * a.md to b.md" and "to a.md from b.md" differ; "to" before a verb is an
 * infinitive and points nowhere). Sorted, without repeats. A
 * remembered plan is keyed on them: a request whose qualifiers differ never
 * reuses it.
 *
 * @example
 * extractQualifiers('read notes/diary.md and tell me the first 3 lines'); // ['position:first']
 * extractQualifiers('send the report to anna tomorrow'); // ['day:tomorrow', 'to:anna']
 * extractQualifiers('move the junk mail to the bin'); // ['to:trash']
 */
export function extractQualifiers(request: string): string[] {
  const tokens = qualifierTokens(request);
  const found = new Set<string>();
  for (let index = 0; index < tokens.length; index++) {
    const phrase = PHRASES.find(({ words }) =>
      words.every((word, offset) => tokens[index + offset] === word),
    );
    if (phrase) {
      found.add(phrase.qualifier);
      index += phrase.words.length - 1;
      continue;
    }
    const direction = DIRECTIONS[tokens[index]!];
    if (!direction) continue;
    if (tokens[index] === 'to' && infinitive(tokens, index)) continue;
    let target = index + 1;
    while (target < tokens.length && FILLERS.has(tokens[target]!)) target++;
    const word = tokens[target];
    if (word !== undefined && !VERB_WORDS.has(word)) {
      const place = word.replace(/^<(.*)>$/, '$1');
      found.add(`${direction}:${Object.hasOwn(PLACE_NAMES, place) ? PLACE_NAMES[place] : place}`);
    }
  }
  return [...found].sort();
}
