import { lstat, mkdir, open, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  defineExecutor,
  displayPath,
  type ExecutorContext,
  ExecutorFailure,
  ok,
  resolveAllowedPath,
} from '@metnos/executor-sdk/define';

type Mode = 'append' | 'create';

interface Args {
  text: string;
  note?: string;
  title?: string;
  tags?: string[];
  dated?: boolean;
  mode?: Mode;
  folder?: string;
  timezone?: string;
}

interface Output {
  path: string;
  note: string;
  created: boolean;
  heading?: string;
  tags: string[];
  bytes_written: number;
  size: number;
}

/** The notes folder when neither the call nor the instance names one. */
const DEFAULT_FOLDER = 'notes';
/** Workspace folders no executor writes into, whatever its profile says. */
const RESERVED = ['.audit'];
/** A note name: letters, digits, spaces and a little punctuation, `/` between sub-folders. */
const NOTE_SEGMENT = /^[\p{L}\p{N}][\p{L}\p{N} _.,'()&+-]*$/u;
/** A tag as written after `#`: letters, digits, `_`, `-`, `/` for nesting. */
const TAG = /^[\p{L}\p{N}_][\p{L}\p{N}_/-]*$/u;

interface Stamp {
  date: string;
  time: string;
}

/** Today's date and the time of day in `timezone`, from the call's clock (pinned on replay). */
function stampIn(timezone: string): Stamp {
  let formatter: Intl.DateTimeFormat;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
  } catch {
    throw new ExecutorFailure(
      'UnknownTimezone',
      `"${timezone}" is not an IANA time zone (try e.g. "Europe/Rome" or "UTC")`,
    );
  }
  const parts = new Map(formatter.formatToParts(new Date()).map((part) => [part.type, part.value]));
  return {
    date: `${parts.get('year')}-${parts.get('month')}-${parts.get('day')}`,
    time: `${parts.get('hour')}:${parts.get('minute')}`,
  };
}

/** Checks a note name and turns it into a file path relative to the notes folder. */
function noteFile(note: string): string {
  const trimmed = note.trim().replace(/\.(md|markdown)$/i, '');
  const segments = trimmed.split('/');
  if (trimmed === '' || segments.some((segment) => !NOTE_SEGMENT.test(segment) || segment.endsWith('.'))) {
    throw new ExecutorFailure(
      'BadNoteName',
      `"${note.slice(0, 80)}" is not a note name: use letters, digits, spaces and - _ . , ' ( ) & +, with "/" between sub-folders`,
    );
  }
  return `${segments.join('/')}.md`;
}

function checkedTags(tags: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const raw of tags) {
    const tag = raw.replace(/^#/, '');
    if (!TAG.test(tag)) {
      throw new ExecutorFailure(
        'BadTag',
        `"${raw.slice(0, 80)}" is not a tag: letters, digits, "_", "-" and "/" only, no spaces`,
      );
    }
    seen.add(tag);
  }
  return [...seen];
}

function configString(ctx: ExecutorContext, key: string): string | undefined {
  const value = ctx.config[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function failureForCode(error: unknown, shown: string): never {
  if (error instanceof ExecutorFailure) throw error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EEXIST') {
    throw new ExecutorFailure('Exists', `${shown} already exists; use mode "append" to add to it`);
  }
  if (code === 'ENOTDIR') throw new ExecutorFailure('NotADirectory', `a parent of ${shown} is a file`);
  if (code === 'EISDIR') throw new ExecutorFailure('NotADirectory', `${shown} is a folder, not a note`);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    throw new ExecutorFailure('PermissionDenied', `${shown} cannot be written (${code})`);
  }
  throw error;
}

/** The last byte of a file, to know whether an entry needs a line break before it. */
async function lastByte(path: string, size: number): Promise<number | undefined> {
  if (size === 0) return undefined;
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(1);
    await handle.read(buffer, 0, 1, size - 1);
    return buffer[0];
  } finally {
    await handle.close();
  }
}

/** The text of one entry: an optional dated heading, the body, and a line of tags. */
function entryText(args: Args, tags: string[], heading: string | undefined): string {
  const body = args.text.replace(/\r\n?/g, '\n').replace(/\s+$/, '');
  const parts: string[] = [];
  if (heading) parts.push(heading);
  if (body !== '') parts.push(body);
  if (tags.length > 0) parts.push(tags.map((tag) => `#${tag}`).join(' '));
  return `${parts.join('\n\n')}\n`;
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const timezone = args.timezone ?? configString(ctx, 'timezone') ?? 'UTC';
    const stamp = stampIn(timezone);
    const tags = checkedTags(args.tags ?? []);
    const relativeFile = noteFile(args.note ?? stamp.date);
    const folderInput = args.folder ?? configString(ctx, 'notes_folder') ?? DEFAULT_FOLDER;
    const folder = await resolveAllowedPath(folderInput, ctx, {
      roots: ctx.profile.fs.write,
      verb: 'write',
      reserved: RESERVED,
    });
    const path = await resolveAllowedPath(join(folder, relativeFile), ctx, {
      roots: [folder],
      verb: 'write',
      allowRoot: false,
      reserved: RESERVED,
    });
    const shown = displayPath(path, ctx);
    const folderInfo = await lstat(folder).catch(() => undefined);
    if (folderInfo && !folderInfo.isDirectory()) {
      throw new ExecutorFailure('NotADirectory', `${displayPath(folder, ctx)} is not a folder`);
    }
    await mkdir(dirname(path), { recursive: true }).catch((error: unknown) => failureForCode(error, shown));

    const before = await stat(path).catch(() => undefined);
    if (before?.isDirectory()) throw new ExecutorFailure('NotADirectory', `${shown} is a folder, not a note`);
    const mode = args.mode ?? 'append';
    if (before && mode === 'create') {
      throw new ExecutorFailure('Exists', `${shown} already exists; use mode "append" to add to it`);
    }
    const heading = (args.dated ?? true) ? `## ${stamp.date} ${stamp.time}` : undefined;
    let text = entryText(args, tags, heading);
    if (before) {
      const last = await lastByte(path, before.size);
      if (last !== undefined) text = `${last === 0x0a ? '\n' : '\n\n'}${text}`;
    } else {
      const title = (args.title ?? relativeFile.replace(/\.md$/, '').split('/').at(-1) ?? stamp.date)
        .replace(/\s+/g, ' ')
        .trim();
      text = `# ${title}\n\n${text}`;
    }
    const bytes = Buffer.from(text, 'utf8');
    const handle = await open(path, before ? 'a' : 'wx', 0o644).catch((error: unknown) =>
      failureForCode(error, shown),
    );
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const after = await stat(path);
    return ok({
      path: shown,
      note: relativeFile.replace(/\.md$/, ''),
      created: before === undefined,
      ...(heading ? { heading: heading.slice(3) } : {}),
      tags,
      bytes_written: bytes.length,
      size: after.size,
    });
  },
});
