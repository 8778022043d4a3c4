import { appendToAuditTree } from '@metnos/executor-sdk';

/** One sandbox audit line: a call refused before any process started. */
export interface SandboxAuditEntry {
  ts: string;
  trace_id: string;
  executor: string;
  version: string;
  event: 'policy_violation' | 'isolation_unavailable';
  error_class: 'PolicyViolation' | 'IsolationUnavailable';
  /** The rule broken (`forbidden-path`, `outside-allow-list`, …) for policy violations. */
  rule?: string;
  /** JSON pointer of the argument at fault, or `profile`. */
  where?: string;
  value?: string;
  real?: string;
  message: string;
}

/** Where the sandbox writes its refusals. */
export interface SandboxAudit {
  append(workspace: string, entry: SandboxAuditEntry): Promise<void>;
}

/**
 * The default sandbox audit: one JSON line per refusal in
 * `<workspace>/.audit/sandbox/YYYY-MM-DD.jsonl`, appended, beside the
 * invoker's own `executors/` log. Executors never see this folder: the
 * workspace's `.audit` is a core forbidden path.
 *
 * @example
 * const runner = createSandboxRunner({ audit: createSandboxAudit() });
 */
export function createSandboxAudit(): SandboxAudit {
  return {
    async append(workspace, entry) {
      // the same checks as the invoker's log: a real tree of this user's, no symlinked files
      await appendToAuditTree(workspace, 'sandbox', entry.ts, JSON.stringify(entry));
    },
  };
}
