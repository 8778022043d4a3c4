import { opendir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import {
  defineExecutor,
  displayPath,
  type ExecutorContext,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

interface Args {
  query: string;
  tags?: string[];
  match?: 'all' | 'any';
  folder?: string;
  limit?: number;
}

interface LineMatch {
  line: number;
  snippet: string;
}

interface NoteHit {
  file: string;
  title: string;
  score: number;
  modified: string;
  tags: string[];
  matches: LineMatch[];
}

interface Output {
  results: NoteHit[];
  count: number;
  notes_searched: number;
  truncated: boolean;
}

const DEFAULT_FOLDER = 'notes';
const NOTE_EXTENSIONS = new Set(['.md', '.markdown', '.txt']);
const MAX_TERMS = 32;
const MAX_NOTES = 5000;
const MAX_NOTE_BYTES = 2 * 1024 * 1024;
const MAX_DEPTH = 16;
const SNIPPET_CHARS = 200;
const MATCHES_PER_NOTE = 5;

type TermKind = 'word' | 'phrase' | 'tag';

interface Term {
  kind: TermKind;
  text: string;
  pattern: RegExp;
}

/** Lower case without accents, so "citta" finds "città" and "Cafe" finds "café". */
function fold(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Splits a query into words, "quoted phrases" and #tags. A word matches the
 * start of a word in the note ("plant" finds "plants"); a phrase its words in
 * order; a tag `#tag` or `#tag/child`, inline or in the front matter.
 */
function parseQuery(query: string, extraTags: readonly string[]): Term[] {
  const terms: Term[] = [];
  const tokens = /"([^"]*)"|#([\p{L}\p{N}_][\p{L}\p{N}_/-]*)|([^\s"#]+)/gu;
  const add = (kind: TermKind, raw: string) => {
    const text = fold(raw).trim();
    if (text === '' || terms.some((term) => term.kind === kind && term.text === text)) return;
    const words = text.split(/\s+/).map(escapeRegExp);
    const pattern =
      kind === 'tag'
        ? new RegExp(`(?<![\\p{L}\\p{N}_/&#])#${escapeRegExp(text)}(?![\\p{L}\\p{N}_-])`, 'gu')
        : new RegExp(`(?<![\\p{L}\\p{N}])${words.join('\\s+')}`, 'gu');
    terms.push({ kind, text, pattern });
  };
  for (let match = tokens.exec(query); match !== null; match = tokens.exec(query)) {
    if (match[1] !== undefined) {
      add(match[1].trim().includes(' ') ? 'phrase' : 'word', match[1]);
    } else if (match[2] !== undefined) {
      add('tag', match[2]);
    } else if (match[3] !== undefined) {
      // Punctuation around a word ("milk," or "(work)") is not part of it.
      const word = match[3].replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
      if (word !== '') add('word', word);
    }
  }
  for (const tag of extraTags) {
    const clean = tag.replace(/^#/, '');
    if (!/^[\p{L}\p{N}_][\p{L}\p{N}_/-]*$/u.test(clean)) {
      throw new ExecutorFailure(
        'BadQuery',
        `"${tag.slice(0, 80)}" is not a tag (letters, digits, _, - and /)`,
      );
    }
    add('tag', clean);
  }
  if (terms.length === 0) {
    throw new ExecutorFailure('BadQuery', 'the query has no words, phrases or #tags to look for');
  }
  if (terms.length > MAX_TERMS) {
    throw new ExecutorFailure(
      'BadQuery',
      `the query has ${terms.length} terms; at most ${MAX_TERMS} are used`,
    );
  }
  return terms;
}

interface Note {
  path: string;
  modified: Date;
  text: string;
  lines: string[];
  /** The lines as {@link fold} leaves them, which is what terms are matched against. */
  folded: string[];
}

/** Markdown and text files under `root`, not following symbolic links, hidden folders skipped. */
async function collectNotes(root: string): Promise<{ notes: Note[]; truncated: boolean }> {
  const notes: Note[] = [];
  let truncated = false;
  const walk = async (folder: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH) return;
    const entries = await opendir(folder).catch(() => undefined);
    if (!entries) return;
    for await (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        await walk(path, depth + 1);
      } else if (entry.isFile() && NOTE_EXTENSIONS.has(extname(entry.name).toLowerCase())) {
        if (notes.length >= MAX_NOTES) {
          truncated = true;
          continue;
        }
        const info = await stat(path).catch(() => undefined);
        if (!info || info.size > MAX_NOTE_BYTES || info.nlink > 1) continue;
        const bytes = await readFile(path).catch(() => undefined);
        if (!bytes || bytes.subarray(0, 8192).includes(0)) continue;
        const text = bytes.toString('utf8');
        const lines = text.split(/\r?\n/);
        notes.push({ path, modified: info.mtime, text, lines, folded: lines.map(fold) });
      }
    }
  };
  await walk(root, 0);
  return { notes, truncated };
}

interface FrontMatter {
  title?: string;
  tags: string[];
  /** Lines taken by the front matter, so line numbers stay those of the file. */
  lines: number;
}

/** The `title:` and `tags:` of a YAML front matter block, if the note starts with one. */
function frontMatter(lines: readonly string[]): FrontMatter {
  if (lines[0]?.trim() !== '---') return { tags: [], lines: 0 };
  const end = lines.findIndex((line, index) => index > 0 && /^(---|\.\.\.)\s*$/.test(line));
  if (end === -1 || end > 200) return { tags: [], lines: 0 };
  const result: FrontMatter = { tags: [], lines: end + 1 };
  let inTags = false;
  for (const line of lines.slice(1, end)) {
    const title = /^title:\s*(.+)$/.exec(line);
    if (title) result.title = title[1]!.trim().replace(/^["']|["']$/g, '');
    const tags = /^tags:\s*(.*)$/.exec(line);
    if (tags) {
      const inline = tags[1]!.trim();
      inTags = inline === '';
      result.tags.push(
        ...inline
          .replace(/^\[|\]$/g, '')
          .split(/[,\s]+/)
          .map((tag) => tag.replace(/^["'#]|["']$/g, ''))
          .filter(Boolean),
      );
      continue;
    }
    const item = inTags ? /^\s*-\s*(.+)$/.exec(line) : null;
    if (item) result.tags.push(item[1]!.trim().replace(/^["'#]|["']$/g, ''));
    else if (!/^\s/.test(line)) inTags = false;
  }
  return result;
}

function snippetOf(line: string, index: number): string {
  const clean = line.trim();
  if (clean.length <= SNIPPET_CHARS) return clean;
  const offset = line.length - line.trimStart().length;
  const start = Math.max(0, Math.min(index - offset - SNIPPET_CHARS / 4, clean.length - SNIPPET_CHARS));
  return `${start > 0 ? '…' : ''}${clean.slice(start, start + SNIPPET_CHARS)}${start + SNIPPET_CHARS < clean.length ? '…' : ''}`;
}

const WEIGHT: Record<TermKind, number> = { word: 1, phrase: 2, tag: 3 };

interface Scored {
  hit: NoteHit;
  modifiedMs: number;
}

/** Scores one note against the terms: term frequency (capped) times rarity, title and tag bonuses. */
function scoreNote(
  note: Note,
  terms: readonly Term[],
  rarity: ReadonlyMap<Term, number>,
  ctx: ExecutorContext,
  match: 'all' | 'any',
): Scored | undefined {
  const { lines, folded } = note;
  const front = frontMatter(lines);
  const heading = lines.find((line, index) => index >= front.lines && /^#\s+\S/.test(line));
  const title =
    front.title ?? heading?.replace(/^#\s+/, '').trim() ?? basename(note.path, extname(note.path));
  const foldedTitle = `${fold(title)} ${fold(basename(note.path, extname(note.path)))}`;
  const frontTags = front.tags.map(fold);
  const found = new Set<Term>();
  const lineHits = new Map<number, { terms: Set<Term>; index: number }>();
  let score = 0;
  for (const term of terms) {
    let count = 0;
    for (let index = 0; index < folded.length; index++) {
      term.pattern.lastIndex = 0;
      const first = term.pattern.exec(folded[index]!);
      if (!first) continue;
      let onLine = 1;
      while (term.pattern.exec(folded[index]!) !== null) onLine++;
      count += onLine;
      const entry = lineHits.get(index) ?? { terms: new Set<Term>(), index: first.index };
      entry.terms.add(term);
      entry.index = Math.min(entry.index, first.index);
      lineHits.set(index, entry);
    }
    const taggedInFront =
      term.kind === 'tag' && frontTags.some((tag) => tag === term.text || tag.startsWith(`${term.text}/`));
    term.pattern.lastIndex = 0;
    const inTitle = term.kind !== 'tag' && term.pattern.test(foldedTitle);
    term.pattern.lastIndex = 0;
    if (count === 0 && !taggedInFront && !inTitle) continue;
    found.add(term);
    score +=
      WEIGHT[term.kind] *
      (rarity.get(term) ?? 1) *
      (Math.min(count, 10) + (taggedInFront ? 2 : 0) + (inTitle ? 3 : 0));
  }
  if (found.size === 0 || (match === 'all' && found.size < terms.length)) return undefined;
  // A small nudge towards recent notes: at most 10% for a note changed today.
  const ageDays = Math.max(0, (Date.now() - note.modified.getTime()) / 86_400_000);
  score *= 1 + 0.1 * Math.exp(-ageDays / 30);
  const matches = [...lineHits.entries()]
    .sort(([lineA, a], [lineB, b]) => b.terms.size - a.terms.size || lineA - lineB)
    .slice(0, MATCHES_PER_NOTE)
    .sort(([lineA], [lineB]) => lineA - lineB)
    .map(([index, entry]) => ({ line: index + 1, snippet: snippetOf(lines[index]!, entry.index) }));
  const inlineTags = new Set<string>();
  for (const tag of note.text.matchAll(/(?<![\p{L}\p{N}_/&#])#([\p{L}\p{N}_][\p{L}\p{N}_/-]*)/gu)) {
    if (!/^\d+$/.test(tag[1]!)) inlineTags.add(tag[1]!);
    if (inlineTags.size >= 20) break;
  }
  return {
    hit: {
      file: displayPath(note.path, ctx),
      title: title.slice(0, 200),
      score: Math.round(score * 1000) / 1000,
      modified: note.modified.toISOString(),
      tags: [...new Set([...front.tags, ...inlineTags])].slice(0, 20),
      matches,
    },
    modifiedMs: note.modified.getTime(),
  };
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const terms = parseQuery(args.query, args.tags ?? []);
    const configured = typeof ctx.config.notes_folder === 'string' ? ctx.config.notes_folder : undefined;
    const root = await resolveAllowedPath(args.folder ?? configured ?? DEFAULT_FOLDER, ctx, {
      roots: ctx.profile.fs.read,
      verb: 'read',
    });
    const shown = displayPath(root, ctx);
    const info = await stat(root).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT')
        throw new ExecutorFailure('NotFound', `the notes folder ${shown} does not exist`);
      if (code === 'EACCES' || code === 'EPERM') {
        throw new ExecutorFailure('PermissionDenied', `${shown} cannot be read`);
      }
      throw error;
    });
    if (!info.isDirectory()) throw new ExecutorFailure('NotFound', `${shown} is not a folder`);

    const { notes, truncated } = await collectNotes(root);
    // Rarer terms weigh more (inverse document frequency over the notes searched).
    const rarity = new Map<Term, number>();
    for (const term of terms) {
      let holders = 0;
      for (const note of notes) {
        if (
          note.folded.some((line) => {
            term.pattern.lastIndex = 0;
            return term.pattern.test(line);
          })
        )
          holders++;
      }
      term.pattern.lastIndex = 0;
      rarity.set(term, Math.log(1 + (notes.length + 1) / (holders + 1)));
    }
    const scored = notes
      .map((note) => scoreNote(note, terms, rarity, ctx, args.match ?? 'all'))
      .filter((entry): entry is Scored => entry !== undefined)
      .sort(
        (a, b) =>
          b.hit.score - a.hit.score || b.modifiedMs - a.modifiedMs || a.hit.file.localeCompare(b.hit.file),
      );
    const limit = args.limit ?? 10;
    return ok({
      results: scored.slice(0, limit).map((entry) => entry.hit),
      count: scored.length,
      notes_searched: notes.length,
      truncated: truncated || scored.length > limit,
    });
  },
});
