/** Where the CLI writes; injected so tests can capture it. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

/** Left-aligned columns for a small table. */
export function table(rows: string[][]): string {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A failure the CLI reports with a non-zero exit, without a stack trace. */
export class CliFailure extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * How the person started the CLI, for hints: `METNOS_INVOKED_AS` when a
 * wrapper sets it, `pnpm metnos` under pnpm's script runner, else `metnos`.
 */
export function invokedAs(env: NodeJS.ProcessEnv = process.env): string {
  if (env.METNOS_INVOKED_AS) return env.METNOS_INVOKED_AS;
  if (env.npm_lifecycle_event === 'metnos') return 'pnpm metnos';
  return 'metnos';
}

/**
 * An io that rewrites command hints (`metnos executor sign …`, at a line start
 * or after a space, quote or backtick) to the way the CLI was invoked.
 */
export function spokenAs(io: CliIo, name: string): CliIo {
  if (name === 'metnos') return io;
  const rewrite = (text: string) => text.replace(/(^|[\s`'"(])metnos (?=[a-z-])/gm, `$1${name} `);
  return { out: (text) => io.out(rewrite(text)), err: (text) => io.err(rewrite(text)) };
}
