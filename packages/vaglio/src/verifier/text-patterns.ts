/**
 * Deterministic readers of free text, shared by the built-in packs and
 * probes: what an answer names (numbers, files, addresses, links, quoted
 * names), what it claims to have done, and whether it owns up to a failure.
 * English and Italian, the languages Metnos answers in.
 */

/** File extensions that make a bare word (`report.pdf`) read as a file name. */
export const FILE_EXTENSIONS: ReadonlySet<string> = new Set(
  (
    'md txt pdf json jsonl csv tsv ts tsx js mjs cjs py rb go rs java kt c h cpp hpp cs php swift sh bash zsh ' +
    'toml yaml yml xml html htm css scss log ini conf cfg env lock sql sqlite db zip tar gz tgz bz2 xz 7z rar ' +
    'png jpg jpeg gif svg webp bmp ico heic mp3 mp4 m4a wav ogg flac mov mkv avi webm doc docx xls xlsx ppt ' +
    'pptx odt ods odp rtf epub ics vcf eml msg ipynb'
  ).split(' '),
);

const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`]+/gi;
const EMAIL_PATTERN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const NUMBER_PATTERN = /\d+(?:[.,'’]\d+)*/g;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}'"»”’]+$/;
const WORD_SEPARATORS = /[\s`"“”«»<>()[\]{},;|]+/;
const PLACEHOLDER_PATTERN = /\$\{[^}\n]{0,200}\}?/g;
const QUOTE_PATTERNS = [/"([^"\n]{2,80})"/g, /“([^”\n]{2,80})”/g, /«([^»\n]{2,80})»/g, /`([^`\n]{2,80})`/g];

function unique(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

/** Links (`https://…`, any `scheme://`), without trailing punctuation. */
export function urlsIn(text: string): string[] {
  return unique([...text.matchAll(URL_PATTERN)].map((match) => match[0].replace(TRAILING_PUNCTUATION, '')));
}

/** Email addresses. */
export function emailsIn(text: string): string[] {
  return unique([...text.matchAll(EMAIL_PATTERN)].map((match) => match[0]));
}

/** The text with links and addresses blanked, so their parts are not read again as paths or numbers. */
export function withoutLinks(text: string): string {
  return text.replace(URL_PATTERN, ' ').replace(EMAIL_PATTERN, ' ');
}

function isFilePath(word: string): boolean {
  if (word.length < 2 || word.length > 1024 || !/[A-Za-z]/.test(word)) return false;
  const rooted = /^(?:~|\.{1,2})?\/(.*)$/.exec(word);
  if (rooted) return /[A-Za-z0-9_]/.test(rooted[1]!);
  const name = word.slice(word.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return false;
  // Product names (Node.js, Vue.js) are not files.
  if (!word.includes('/') && /^[A-Z][a-z]+\.js$/.test(name)) return false;
  return FILE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase());
}

/**
 * The file paths a text names: words starting with `/`, `~/`, `./` or `../`,
 * and words whose last part ends in a known extension (`notes/a.md`,
 * `report.pdf`). Links and email addresses are not paths.
 *
 * @example
 * filePathsIn('Saved ~/notes/a.md and report.pdf (see https://x.org/a.md).'); // ['~/notes/a.md', 'report.pdf']
 */
export function filePathsIn(text: string): string[] {
  const found: string[] = [];
  for (const raw of withoutLinks(text).split(WORD_SEPARATORS)) {
    const word = raw.replace(TRAILING_PUNCTUATION, '');
    if (isFilePath(word)) found.push(word);
  }
  return unique(found);
}

/**
 * A path as compared with others: without a leading `./` or `~/`, without a
 * trailing `/`, and with repeated slashes folded.
 */
export function normalisePath(path: string): string {
  return path
    .trim()
    .replace(/\/{2,}/g, '/')
    .replace(/^(?:\.\/|~\/)+/, '')
    .replace(/(.)\/$/, '$1');
}

/**
 * Whether two paths name the same file, as far as text can tell: equal, or
 * one ends with the other at a `/` boundary (`notes/a.md` and
 * `/home/ada/metnos/notes/a.md`).
 *
 * @example
 * samePath('~/notes/a.md', '/home/ada/notes/a.md'); // true
 */
export function samePath(a: string, b: string): boolean {
  const left = normalisePath(a);
  const right = normalisePath(b);
  if (!left || !right) return false;
  return left === right || left.endsWith(`/${right}`) || right.endsWith(`/${left}`);
}

/** Numbers as written: `1,234.5`, `1.234,5`, `42`, `2026`. */
export function numbersIn(text: string): string[] {
  return unique([...text.matchAll(NUMBER_PATTERN)].map((match) => match[0]));
}

/**
 * The ways a written number may be read: its digits alone, and its value in
 * English (`1,234.5`) and Italian (`1.234,5`) notation. Two numbers are the
 * same when they share a reading.
 *
 * @example
 * numberReadings('1.234,50'); // ['123450', '1.2345', '1234.5']
 */
export function numberReadings(token: string): string[] {
  const readings = new Set<string>();
  readings.add(token.replace(/[.,'’]/g, '').replace(/^0+(?=\d)/, ''));
  const english = token.replace(/[,'’]/g, '');
  if (/^\d+(?:\.\d+)?$/.test(english)) readings.add(String(Number(english)));
  const italian = token.replace(/[.'’]/g, '').replace(',', '.');
  if (/^\d+(?:\.\d+)?$/.test(italian)) readings.add(String(Number(italian)));
  return [...readings];
}

/** Text in double quotes, typographic quotes, guillemets or backticks: names the answer presents as quoted. */
export function quotedIn(text: string): string[] {
  const found: string[] = [];
  for (const pattern of QUOTE_PATTERNS)
    for (const match of text.matchAll(pattern)) found.push(match[1]!.trim());
  return unique(found.filter((quoted) => quoted.length >= 2));
}

/**
 * Unresolved plan placeholders: `${step1.content}`, `${FILLER:x}`, or a `${` left open.
 *
 * @example
 * placeholdersIn('It is ${step1.content.iso}'); // ['${step1.content.iso}']
 */
export function placeholdersIn(text: string): string[] {
  return unique([...text.matchAll(PLACEHOLDER_PATTERN)].map((match) => match[0]));
}

const FAILURE_WORDS =
  /\b(?:fail(?:ed|s|ure)?|errors?|could\s*n[o']t|cannot|can't|unable|not\s+found|no\s+such|denied|refused|blocked|did\s*n[o']t|was\s*n[o']t|were\s*n[o']t|has\s*n[o']t|have\s*n[o']t|not\s+(?:allowed|permitted|possible)|timed?\s*out|impossibile|errori?|fallit[oaie]|negat[oaie]|rifiutat[oaie]|bloccat[oaie]|non\s+(?:è|e'|sono|ho|ha|posso|riesco|trovat[oaie]|esiste))(?![A-Za-z])/i;

/**
 * Whether a text owns up to a failure or a refusal ("could not", "failed",
 * "not found", "non è stato possibile", …).
 *
 * @example
 * mentionsFailure('notes.md was not found'); // true
 */
export function mentionsFailure(text: string): boolean {
  return FAILURE_WORDS.test(text);
}

const EN_VERBS =
  'sent|emailed|mailed|messaged|posted|forwarded|replied|wrote|written|saved|created|stored|appended|updated|edited|renamed|moved|copied|uploaded|scheduled|booked|deleted|removed|erased|installed';
const IT_VERBS =
  'inviat[oaie]|mandat[oaie]|spedit[oaie]|scritt[oaie]|salvat[oaie]|creat[oaie]|eliminat[oaie]|cancellat[oaie]|rimoss[oaie]|spostat[oaie]|rinominat[oaie]|copiat[oaie]|aggiornat[oaie]|pubblicat[oaie]|caricat[oaie]|programmat[oaie]|prenotat[oaie]';
const ADVERBS = '(?:just|already|now|also|successfully|già|appena|anche|correttamente)\\s+';
const CLAIM_PATTERNS = [
  // I sent, I've saved, we have created
  new RegExp(`\\b(?:I|we)(?:'ve|\\s+have)?\\s+(?:${ADVERBS})*(${EN_VERBS})\\b`, 'gi'),
  // has been sent, have been saved
  new RegExp(`\\b(?:has|have)\\s+been\\s+(?:${ADVERBS})*(${EN_VERBS})\\b`, 'gi'),
  // ho inviato, abbiamo salvato; è stato inviato, sono stati creati
  new RegExp(
    `(?<![A-Za-zÀ-ÿ])(?:ho|abbiamo|è\\s+stat[oa]|sono\\s+stat[ie])\\s+(?:${ADVERBS})*(${IT_VERBS})(?![A-Za-z])`,
    'gi',
  ),
  // Saved to notes.md. / Inviato.
  new RegExp(`(?:^|[.!?:;\\n])\\s*(${EN_VERBS}|${IT_VERBS})(?![A-Za-z])`, 'gi'),
];
const NEGATION_BEFORE = /(?:\bnot|\bnever|n't|\bnon|\bmai)\s*$/i;

/**
 * The actions a text says were done in this turn ("I sent", "has been
 * saved", "ho inviato", a sentence opening with "Saved"), as the verbs that
 * claim them. Negated claims ("I have not sent", "non ho salvato") and
 * other people's actions ("the mail you sent") do not count.
 *
 * @example
 * actionClaimsIn("I've sent the mail to Ada. The file you saved is fine."); // ['sent']
 */
export function actionClaimsIn(text: string): string[] {
  const claims: string[] = [];
  for (const pattern of CLAIM_PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const before = text.slice(Math.max(0, match.index - 12), match.index);
      if (NEGATION_BEFORE.test(before)) continue;
      claims.push(match[match.length - 1]!.toLowerCase());
    }
  }
  return unique(claims);
}
