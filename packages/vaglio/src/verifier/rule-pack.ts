import { VaglioSettingsError } from '../errors.ts';
import { RULE_PACK_ID } from './shapes.ts';
import type { Rule, RulePack } from './types.ts';

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$/;
const RULE_ID = /^[a-z0-9]+(?:[.-][a-z0-9]+)+$/;
const RESERVED = /^(?:schema|probe)\./;

function invalid(pack: { id?: unknown }, problem: string): VaglioSettingsError {
  const name = typeof pack.id === 'string' ? pack.id : 'a rule pack';
  return new VaglioSettingsError({ setting: 'packs', message: `${name}: ${problem}` });
}

function checkRule(pack: RulePack, rule: Rule, seen: Set<string>): void {
  if (typeof rule?.id !== 'string' || !RULE_ID.test(rule.id))
    throw invalid(pack, `rule id ${JSON.stringify(rule?.id)} must look like "files.path-in-evidence"`);
  if (RESERVED.test(rule.id))
    throw invalid(pack, `rule id "${rule.id}": schema.* and probe.* belong to the verifier`);
  if (seen.has(rule.id)) throw invalid(pack, `rule id "${rule.id}" appears twice`);
  if (typeof rule.check !== 'function') throw invalid(pack, `rule "${rule.id}" has no check function`);
  if (typeof rule.description !== 'string' || !rule.description.trim())
    throw invalid(pack, `rule "${rule.id}" needs a description`);
  seen.add(rule.id);
}

/**
 * Checks a rule pack and freezes it: an id `rules.<name>.v<major>`, a
 * semantic version with the same major, at least one rule, rule ids unique
 * and outside `schema.*` and `probe.*`. Throws a `VaglioSettingsError`
 * (`setting: 'packs'`) naming what to fix.
 *
 * @example
 * export const invoiceRules = defineRulePack({
 *   id: 'rules.invoice.v1',
 *   version: '1.0.0',
 *   description: 'invoice totals are grounded',
 *   rules: [{ id: 'invoice.total', description: 'the total is in the evidence', check: () => ({ outcome: 'pass' }) }],
 * });
 */
export function defineRulePack(pack: RulePack): RulePack {
  const major = typeof pack?.id === 'string' ? RULE_PACK_ID.exec(pack.id)?.[1] : undefined;
  if (major === undefined)
    throw invalid(pack ?? {}, 'the id must look like rules.<name>.v<major>, e.g. rules.files.v1');
  const version = typeof pack.version === 'string' ? SEMVER.exec(pack.version) : null;
  if (!version)
    throw invalid(pack, `version ${JSON.stringify(pack.version)} is not a semantic version such as 1.0.0`);
  if (version[1] !== major)
    throw invalid(pack, `version ${pack.version} does not match the id's major version v${major}`);
  if (!Array.isArray(pack.rules) || pack.rules.length === 0)
    throw invalid(pack, 'a pack needs at least one rule');
  const seen = new Set<string>();
  for (const rule of pack.rules) checkRule(pack, rule, seen);
  if (
    pack.kinds !== undefined &&
    (!Array.isArray(pack.kinds) || pack.kinds.some((kind) => typeof kind !== 'string'))
  )
    throw invalid(pack, 'kinds must be a list of candidate kinds');
  return Object.freeze({
    ...pack,
    ...(pack.kinds ? { kinds: Object.freeze([...pack.kinds]) } : {}),
    rules: Object.freeze(pack.rules.map((rule) => Object.freeze({ ...rule }))),
  });
}

/** The rule packs a verifier can select by id. One version per id: a new major is a new id. */
export interface RulePackRegistry {
  /** Checks the pack with {@link defineRulePack} and adds it; an id registered already throws. */
  register(pack: RulePack): RulePack;
  get(id: string): RulePack | undefined;
  /** The registered ids, sorted. */
  ids(): string[];
}

/**
 * A registry of rule packs, filled from `packs` (checked, in order).
 *
 * @example
 * const registry = createRulePackRegistry(BUILT_IN_PACKS);
 * registry.register(invoiceRules);
 * registry.get('rules.invoice.v1')?.version; // '1.0.0'
 */
export function createRulePackRegistry(packs: Iterable<RulePack> = []): RulePackRegistry {
  const byId = new Map<string, RulePack>();
  const registry: RulePackRegistry = {
    register(pack) {
      const checked = defineRulePack(pack);
      const existing = byId.get(checked.id);
      if (existing)
        throw invalid(
          checked,
          `already registered (version ${existing.version}); a new major version needs a new id`,
        );
      byId.set(checked.id, checked);
      return checked;
    },
    get: (id) => byId.get(id),
    ids: () => [...byId.keys()].sort(),
  };
  for (const pack of packs) registry.register(pack);
  return registry;
}
