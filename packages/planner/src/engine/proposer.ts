import { contractSchema, type VerifiedExecutor } from '@metnos/executor-sdk';
import type { ChatModel } from '../model.ts';
import { type Plan, parsePlan } from './plan.ts';

const GRAMMAR = `Reply with ONE JSON object and nothing else:
{
  "steps": [ { "id": "s1", "tool": "<tool name>", "args": { ... }, "produces": "<key>", "depends": ["<step id>"] } ],
  "fillers": { "<name>": { "prompt": "<question>", "default": "<value>", "tier": "fast" } },
  "final_message": "<what to tell the user; may use placeholders>"
}
Steps are numbered from 1 (ids default to s1, s2, …). Placeholders inside args and final_message:
- "from_step": N as an argument passes the list step N produced (as "entries").
- \${stepN.field} reads a field of step N's result, e.g. \${step1.content}, \${step2.content.matches[*].file}, \${step2.content.matches|count}.
- "$ref:<key>.<field>" as a whole argument reads what a step "produces" (type kept).
- \${FILLER:name} asks a small question declared in "fillers".
- \${RUNTIME:now}, \${RUNTIME:lang}, \${RUNTIME:actor} give the turn's context.
Optional: a step { "kind": "decision", "draft": "<template>", "evidence": ["<key or step id>"] } states the answer;
{ "kind": "verify", "rulePack": "rules.answer.v1" } has the verifier check it before it is sent;
"policy": { "abortOn": ["s1.exception.<ErrorClass>"], "branch": [{ "on": "s1.exception.<ErrorClass>", "goto": "<step id>" }] }.
Use only the tools listed, with arguments that match their schemas. Prefer the fewest steps.
If no listed tool can serve the request, reply {"steps": [], "out_of_scope": "<what is missing>"}.`;

/** What the Proposer is asked. */
export interface ProposeRequest {
  request: string;
  candidates: readonly VerifiedExecutor[];
  intent?: { verb: string; object: string; qualifiers: string[]; keywords?: string[] };
  /** Tools and plans Recovery rules out. */
  exclude?: { tools?: string[]; planHashes?: string[]; reason?: string };
  /** Errors from the Validator on the previous proposal. */
  errors?: string[];
  previous?: Plan;
  signal?: AbortSignal;
}

/** The Proposer's answer: a plan, or why there is none. Never an exception. */
export type ProposeResult =
  | { ok: true; plan: Plan; usage: { inputTokens: number; outputTokens: number }; costUsd?: number }
  | {
      ok: false;
      reason: string;
      cause: 'model' | 'unreadable';
      usage?: { inputTokens: number; outputTokens: number };
    };

function describeTool(executor: VerifiedExecutor): string {
  return JSON.stringify({
    name: executor.name,
    description: executor.manifest.executor.summary,
    input: contractSchema(executor, 'input'),
    output: contractSchema(executor, 'output'),
    errors: executor.manifest.contract.error_classes,
  });
}

/**
 * L3 Proposer: one model call that returns the whole plan, parsed with the
 * plan grammar (never raw `JSON.parse` on trust). Exclusions from Recovery
 * and errors from the Validator go into the prompt.
 *
 * @example
 * const proposer = createProposer({ model: tiers.wise });
 * const result = await proposer.propose({ request, candidates });
 */
export function createProposer(settings: { model: ChatModel; systemPrompt?: string; timeoutMs?: number }) {
  return {
    async propose(input: ProposeRequest): Promise<ProposeResult> {
      const excluded = new Set(input.exclude?.tools ?? []);
      const tools = input.candidates.filter((executor) => !excluded.has(executor.name));
      const parts = [
        `Request: ${input.request}`,
        input.intent
          ? `Intent: ${[input.intent.verb, input.intent.object, ...(input.intent.keywords ?? [])].join(' ')}${
              input.intent.qualifiers.length > 0
                ? `\nQualifiers (the plan must honour each): ${input.intent.qualifiers.join(', ')}`
                : ''
            }`
          : '',
        `Tools:\n${tools.map(describeTool).join('\n')}`,
        excluded.size > 0 ? `Do not use: ${[...excluded].join(', ')}.` : '',
        // Recovery's reason reaches the model whatever the class: for wrong_args and missing_input
        // it is the whole instruction (no tool is excluded)
        input.exclude?.reason ? `The previous plan failed: ${input.exclude.reason}.` : '',
        input.previous && input.errors?.length
          ? `Your previous plan:\n${JSON.stringify(input.previous)}\nIt has these errors; fix them:\n- ${input.errors.join('\n- ')}`
          : '',
      ].filter(Boolean);
      let response: Awaited<ReturnType<ChatModel['generate']>>;
      try {
        response = await settings.model.generate({
          system: [GRAMMAR, settings.systemPrompt].filter(Boolean).join('\n\n'),
          messages: [{ role: 'user', content: parts.join('\n\n') }],
          tools: [],
          signal: input.signal,
          timeoutMs: settings.timeoutMs,
        });
      } catch (error) {
        return { ok: false, cause: 'model', reason: (error as Error)?.message ?? String(error) };
      }
      const parsed = parsePlan(response.text);
      if (!parsed.ok)
        return { ok: false, cause: 'unreadable', reason: parsed.errors.join('; '), usage: response.usage };
      return { ok: true, plan: parsed.plan, usage: response.usage, costUsd: response.costUsd };
    },
  };
}

export type Proposer = ReturnType<typeof createProposer>;
