import type { RulePack } from '../types.ts';
import { answerRules } from './answer.ts';
import { fileRules } from './files.ts';
import { mailRules } from './mail.ts';

/** The rule packs a verifier holds when `packs` is not given. */
export const BUILT_IN_PACKS: readonly RulePack[] = Object.freeze([answerRules, fileRules, mailRules]);

export { answerRules, fileRules, mailRules };
