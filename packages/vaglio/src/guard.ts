import { exceedsJsonDepth } from '@metnos/executor-sdk';
import { inventory, MAX_DEPTH } from './arguments.ts';
import { destructiveCommand } from './commands.ts';
import { forbiddenRules, mentionedRule, protectedRules } from './paths.ts';
import type { EvaluationContext, ProposedCall } from './types.ts';

/** Capability that makes an executor subject to the destructive-command patterns. */
export const CODE_EXEC = 'code:exec';

/** What the guard decided. `reason` names the rule and the top-level field, never the value. */
export type GuardResult = { ok: true } | { ok: false; rule: string; reason: string };

/**
 * The deontological half of the vaglio: fixed prohibitions that no score,
 * no request and no autonomy level can lift.
 */
export interface Guard {
  check(call: ProposedCall, context: EvaluationContext): GuardResult;
}

function hasCodeExec(capabilities: readonly string[]): boolean {
  return capabilities.some(
    (capability) => capability === CODE_EXEC || capability.startsWith(`${CODE_EXEC}:`),
  );
}

/** Names a top-level field only when it is a plain identifier: an odd key may itself carry data. */
function fieldPhrase(field: string): string {
  return /^[A-Za-z0-9_]{1,64}$/.test(field) ? `argument "${field}"` : 'an argument';
}

/**
 * The guard. It refuses a call whose arguments mention a forbidden path
 * anywhere (values and keys, at any depth, after expanding `~` and `$HOME`,
 * decoding `%XX` and `file://`, resolving `..`), and, for executors with the
 * `code:exec` capability, a destructive command. Arguments too deep or too
 * large to read in full are refused as well: the guard fails closed.
 *
 * @example
 * const guard = createGuard();
 * guard.check(call, { home: '/home/ada', workspace: '/home/ada/metnos' });
 * // { ok: false, rule: '~/.ssh', reason: 'argument "path" mentions a forbidden path (~/.ssh)' }
 */
export function createGuard(): Guard {
  return {
    check(call, context) {
      const found = inventory(call.args);
      if (found.truncated) {
        return {
          ok: false,
          rule: 'unreadable arguments',
          reason: exceedsJsonDepth(call.args, MAX_DEPTH)
            ? `the arguments nest deeper than ${MAX_DEPTH} levels`
            : 'the arguments are too large to inspect',
        };
      }
      // for code:exec the command pattern is the more telling reason, so it is checked first
      if (hasCodeExec(call.executor.capabilities)) {
        const pattern = destructiveCommand(found, context);
        if (pattern)
          return {
            ok: false,
            rule: pattern,
            reason: `destructive command for a code:exec executor (${pattern})`,
          };
      }
      // what decides trust (ledgers, trust lists, executors folders) may be read, never changed
      const rules = [
        ...forbiddenRules(context),
        ...(call.executor.sideEffects ? protectedRules(context) : []),
      ];
      // case-insensitive file systems (macOS, Windows) read `~/.SSH` as `~/.ssh`: match folded text too
      const folded = { home: context.home.toLowerCase(), workspace: context.workspace.toLowerCase() };
      const foldedRules = [
        ...forbiddenRules(folded),
        ...(call.executor.sideEffects
          ? protectedRules({ ...folded, protect: context.protect?.map((path) => path.toLowerCase()) })
          : []),
      ];
      for (const entry of found.strings) {
        const lowered = entry.text.toLowerCase();
        const rule =
          mentionedRule(entry.text, rules, context) ??
          (lowered === entry.text ? undefined : mentionedRule(lowered, foldedRules, folded));
        if (rule) {
          const what =
            entry.role === 'key'
              ? entry.text === entry.field
                ? 'an argument key'
                : `a key inside ${fieldPhrase(entry.field)}`
              : fieldPhrase(entry.field);
          return { ok: false, rule: rule.label, reason: `${what} mentions a forbidden path (${rule.label})` };
        }
      }
      return { ok: true };
    },
  };
}
