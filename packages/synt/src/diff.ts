/** The longest file diffed line by line; past it the diff shows the whole old and new text. */
const MAX_LINES = 4000;

type Edit = { kind: ' ' | '-' | '+'; line: string; oldIndex: number; newIndex: number };

/** The edit script from `a` to `b` by the longest common subsequence of lines. */
function edits(a: readonly string[], b: readonly string[]): Edit[] {
  if (a.length * b.length > MAX_LINES * MAX_LINES || a.length > MAX_LINES || b.length > MAX_LINES)
    return [
      ...a.map((line, index) => ({ kind: '-' as const, line, oldIndex: index, newIndex: 0 })),
      ...b.map((line, index) => ({ kind: '+' as const, line, oldIndex: a.length, newIndex: index })),
    ];
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lengths[i]![j] =
        a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
  const script: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      script.push({ kind: ' ', line: a[i]!, oldIndex: i++, newIndex: j++ });
    } else if (i < a.length && (j === b.length || lengths[i + 1]![j]! >= lengths[i]![j + 1]!)) {
      script.push({ kind: '-', line: a[i]!, oldIndex: i++, newIndex: j });
    } else {
      script.push({ kind: '+', line: b[j]!, oldIndex: i, newIndex: j++ });
    }
  }
  return script;
}

const linesOf = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/**
 * A unified diff of two texts (`---`/`+++` headers, `@@` hunks with three
 * lines of context), the form the CLI and the console show a proposal's
 * artefacts in. A new file is a diff from `/dev/null`: every line added.
 *
 * @example
 * unifiedDiff('', 'export default 1;\n', { from: '/dev/null', to: 'b/main.ts' });
 * // '--- /dev/null\n+++ b/main.ts\n@@ -0,0 +1,1 @@\n+export default 1;'
 */
export function unifiedDiff(
  before: string,
  after: string,
  names: { from: string; to: string },
  context = 3,
): string {
  const script = edits(linesOf(before), linesOf(after));
  const changed = script.map((edit, index) => (edit.kind === ' ' ? -1 : index)).filter((index) => index >= 0);
  const out = [`--- ${names.from}`, `+++ ${names.to}`];
  if (changed.length === 0) return [...out, '(no change)'].join('\n');
  let start = 0;
  while (start < changed.length) {
    let end = start;
    while (end + 1 < changed.length && changed[end + 1]! - changed[end]! <= context * 2 + 1) end++;
    const from = Math.max(0, changed[start]! - context);
    const to = Math.min(script.length - 1, changed[end]! + context);
    const hunk = script.slice(from, to + 1);
    const oldLines = hunk.filter((edit) => edit.kind !== '+').length;
    const newLines = hunk.filter((edit) => edit.kind !== '-').length;
    const oldStart = oldLines === 0 ? hunk[0]!.oldIndex : hunk[0]!.oldIndex + 1;
    const newStart = newLines === 0 ? hunk[0]!.newIndex : hunk[0]!.newIndex + 1;
    out.push(`@@ -${oldStart},${oldLines} +${newStart},${newLines} @@`);
    for (const edit of hunk) out.push(`${edit.kind}${edit.line}`);
    start = end + 1;
  }
  return out.join('\n');
}
