/** What an executor's run() receives besides its arguments. */
export interface ExecutorContext {
  /** Correlates every line of one request across logs. */
  traceId: string;
  /** The planner turn this call belongs to, if any. */
  turnId: string | undefined;
  /** The workspace root, as the executor sees it. */
  workspace: string;
  /** A private temporary directory for this call. */
  tmpDir: string;
  /**
   * The instant this call is pinned to (ISO 8601, e.g. the planner turn's), or
   * undefined. When set, `Date.now()`, `new Date()` and `Date()` answer this
   * instant rather than the real time, so a replayed turn gives the same
   * result; `new Date(value)`, `Date.UTC` and `Date.parse` are unchanged, and
   * `performance.now()` stays real (use it to measure durations).
   */
  asOf: string | undefined;
  /**
   * Epoch milliseconds after which the call is killed. With `asOf` set it
   * stands on the pinned clock (asOf plus the real time left when the code
   * started), so `deadline - Date.now()` is the whole budget and never
   * shrinks: for a countdown ask {@link ExecutorContext.remainingMs}.
   */
  deadline: number;
  /** Real milliseconds left before {@link ExecutorContext.deadline} (0 once passed), pinned clock or not. */
  remainingMs(): number;
  /** Per-instance settings from the host configuration (never secrets in the profile). */
  config: Readonly<Record<string, unknown>>;
  /** The declared profile, with placeholders expanded for this host. */
  profile: Readonly<{
    fs: { read: string[]; write: string[] };
    exec: { mode: 'none' | 'allowlist'; binaries: string[] };
    network: { mode: 'none' | 'allowlist'; domains: string[] };
    max_output_bytes: number;
  }>;
  /**
   * The credential handles offered to this call (declared as `secret:<handle>`
   * and configured by the person), with where their servers are. The secret
   * itself never reaches the process: open `CONNECT <imap or smtp>` (or an
   * absolute-form request to the origin) through the egress proxy with the
   * header `Metnos-Credential: <handle>`, and the host logs in for you.
   */
  credentials: Readonly<
    Record<
      string,
      | { kind: 'mail'; imap?: string; smtp?: string; address?: string }
      | { kind: 'http'; url: string; origin: string }
    >
  >;
  /** Writes a diagnostic line to stderr (stdout carries the result). */
  log(message: string): void;
}

export type ExecutorOutcome<Content = unknown> =
  | { ok: true; content?: Content; metadata?: Record<string, unknown> }
  | { ok: false; error: { class: string; message: string }; metadata?: Record<string, unknown> };

export interface ExecutorDefinition<Args, Content> {
  run(args: Args, ctx: ExecutorContext): ExecutorOutcome<Content> | Promise<ExecutorOutcome<Content>>;
}

export declare function defineExecutor<Args = Record<string, unknown>, Content = unknown>(
  definition: ExecutorDefinition<Args, Content>,
): ExecutorDefinition<Args, Content>;
export declare function isExecutorDefinition(value: unknown): boolean;
export declare function ok<Content>(
  content?: Content,
  metadata?: Record<string, unknown>,
): ExecutorOutcome<Content>;
export declare function fail(
  errorClass: string,
  message: string,
  metadata?: Record<string, unknown>,
): ExecutorOutcome<never>;
export declare class ExecutorFailure extends Error {
  constructor(errorClass: string, message: string);
  readonly errorClass: string;
}

/** True when `target` is `root` or inside it (both absolute). */
export declare function isInside(root: string, target: string): boolean;
/** The real path of `path`, or of its deepest existing ancestor with the rest appended. */
export declare function realpathLenient(path: string): Promise<string>;
/** Resolves a caller's path against the workspace and keeps it inside `roots`, as written and after symlinks. */
export declare function resolveAllowedPath(
  input: string,
  ctx: ExecutorContext,
  options: {
    roots: readonly string[];
    /** The verb in the refusal message: "read", "write", "change". */
    verb?: string;
    /** Follow a symbolic link in the last component (false for renames). Default true. */
    followLast?: boolean;
    /** May the path be a root itself? Default true. */
    allowRoot?: boolean;
    /** Workspace-relative folders that are refused even inside the roots. */
    reserved?: readonly string[];
  },
): Promise<string>;
/** A path as the user should see it: relative to the workspace when inside it. */
export declare function displayPath(absolute: string, ctx: ExecutorContext): string;
