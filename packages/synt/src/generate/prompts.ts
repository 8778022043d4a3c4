import { contractSchema, type VerifiedExecutor } from '@metnos/executor-sdk';
import type { Specification } from './spec-schema.ts';
import type { Motivation } from './types.ts';

/** The JSON Schema keywords a `schema.json` may use (the SDK's subset). */
const KEYWORDS =
  'type, properties, required, additionalProperties, items, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, minItems, maxItems, oneOf, anyOf, allOf, not, local $ref, and the annotations title, description, default, examples, format';

/** The system prompt of stage 2: what a specification is, and the one JSON object to answer with. */
export const SPECIFICATION_SYSTEM = `You are the synthesiser of Metnos, a local personal agent whose abilities are small executors: one TypeScript file each, run in a strict sandbox that grants no files, no network and no programs unless the executor's profile names them.

Draft the specification of ONE new executor for the need described. Answer with one JSON object and nothing else:
{
  "name": "lowercase_snake_case, not the name of an existing executor",
  "summary": "one sentence: what it does",
  "affinity": ["lowercase", "keywords", "a", "request", "would", "use"],
  "input": { JSON Schema of the arguments: "type": "object", "additionalProperties": false, every property with a "description"; free text takes "format": "text" },
  "output": { JSON Schema of the result: "type": "object" with its properties },
  "error_classes": ["PascalCase names of the failures a caller should expect"],
  "idempotent": true,
  "side_effects": false,
  "profile": { "fs_read": [], "fs_write": [], "network": [], "max_duration_ms": 2000 },
  "birth_tests": [
    { "name": "what the case shows", "files": { "relative/path.txt": "file content" }, "args": { }, "expect": { "ok": true, "content": { part of the expected result } } },
    { "name": "a failure", "files": {}, "args": { }, "expect": { "ok": false, "error_class": "OneOfTheErrorClasses" } }
  ]
}

Rules:
- The profile is the least the executor needs. Paths start with $WORKSPACE (the person's workspace) and name the narrowest folder; domains are lowercase host names. An executor never runs programs. Prefer arguments that carry the data (text piped from an earlier step) to reading files.
- JSON Schema keywords allowed: ${KEYWORDS}.
- Give 2 to 6 birth tests; at least one succeeds. Each runs in a fresh workspace holding only its "files".`;

/** The system prompt of stage 3: the two files, and the rules the code must keep. */
export const SKELETON_SYSTEM = `You write the code of one Metnos executor from its approved specification.

Answer with exactly two fenced blocks and nothing else:
\`\`\`ts
// main.ts
\`\`\`
\`\`\`json
{ "definitions": { "Input": <the spec's input schema>, "Output": <the spec's output schema> } }
\`\`\`

Rules for main.ts:
- Import only Node built-ins ("node:fs/promises", "node:path", …) and "@metnos/executor-sdk/define", which exports defineExecutor, ok, fail, resolveAllowedPath(input, ctx, { roots: ctx.profile.fs.read, verb: 'read' }), displayPath.
- End with: export default defineExecutor<Args, Result>({ run(args, ctx) { … return ok(result); } });
- Fail with return fail('DeclaredClass', 'what went wrong') using only the declared error classes; never throw on bad input.
- No dynamic import, require, eval, Function, child processes or process.env. Paths are resolved against ctx.workspace and must stay inside the profile.
- The arguments arrive already validated against Input; the result must validate against Output.`;

function schemaOf(executor: VerifiedExecutor | undefined, which: 'input' | 'output'): string {
  if (!executor) return '(not in the catalog)';
  return JSON.stringify(contractSchema(executor, which) ?? {});
}

function describeExecutor(executor: VerifiedExecutor | undefined, name: string): string {
  if (!executor) return `- ${name}: not in the catalog`;
  const profile = executor.manifest.sandbox;
  return [
    `- ${name}@${executor.version}: ${executor.manifest.executor.summary}`,
    `  input: ${schemaOf(executor, 'input')}`,
    `  output: ${schemaOf(executor, 'output')}`,
    `  error classes: ${executor.manifest.contract.error_classes.join(', ') || 'none'}`,
    `  profile: read ${JSON.stringify(profile.fs.read)}, write ${JSON.stringify(profile.fs.write)}, network ${JSON.stringify(profile.network.domains)}`,
  ].join('\n');
}

function need(motivation: Motivation, byName: (name: string) => VerifiedExecutor | undefined): string {
  switch (motivation.kind) {
    case 'proto': {
      const desired = motivation.desired;
      const piped = desired.piped.map((pipe) => `${pipe.arg} ← ${pipe.from}.${pipe.field}`).join(', ');
      return [
        `Plans asked ${motivation.uses} times for a tool named "${desired.name}", which does not exist, right after ${motivation.src}.`,
        `Arguments it was called with: ${desired.args.join(', ') || 'none'}${piped ? ` (piped: ${piped})` : ''}.`,
        `The source executor:\n${describeExecutor(byName(motivation.src), motivation.src)}`,
        `Words of the requests: ${desired.purpose.join(' ') || '(none kept)'}.`,
        `Name it "${desired.name}" and take the arguments it was called with.`,
      ].join('\n');
    }
    case 'merge':
      return [
        `These two executors have overlapping traces (they stand between the same executors: ${motivation.shared.join(', ')}) and compatible profiles. Specify ONE executor that covers both, with arguments that choose between their behaviours:`,
        ...motivation.executors.map((name) => describeExecutor(byName(name), name)),
      ].join('\n');
    case 'generalise':
      return [
        `These ${motivation.executors.length} executors have the same shape (${motivation.shape}). Specify ONE parametric executor named "${motivation.stem}" that replaces them, with an argument for what differs between them:`,
        ...motivation.executors.map((name) => describeExecutor(byName(name), name)),
      ].join('\n');
    case 'specialise':
      return [
        `${motivation.executor} was called ${motivation.calls} times in a month, ${Math.round(motivation.share * 100)}% of them with ${motivation.argument} = ${JSON.stringify(motivation.value)}.`,
        `Specify a specialised executor for that case alone, with the narrower profile read ${JSON.stringify(motivation.grantsAfter.read)}, write ${JSON.stringify(motivation.grantsAfter.write)}, network ${JSON.stringify(motivation.grantsAfter.domains)}:`,
        describeExecutor(byName(motivation.executor), motivation.executor),
      ].join('\n');
  }
}

/**
 * The user message of stage 2: the need in words, the executors it involves
 * (contracts and profiles, from their signed files), and the names already
 * taken.
 */
export function specificationPrompt(motivation: Motivation, executors: readonly VerifiedExecutor[]): string {
  const byName = (name: string) => executors.find((executor) => executor.name === name);
  return `${need(motivation, byName)}

Executors that exist already (do not duplicate them): ${executors
    .map((executor) => executor.name)
    .sort()
    .join(', ')}.`;
}

/** The user message of stage 3: the approved specification, and why the last draft was refused. */
export function skeletonPrompt(spec: Specification, refusal?: string): string {
  const { birth_tests: tests, ...contract } = spec;
  return `The approved specification:
${JSON.stringify(contract, null, 2)}

Its birth tests (they will run against your code in the sandbox):
${JSON.stringify(tests, null, 2)}${refusal ? `\n\nYour previous answer was refused: ${refusal}\nAnswer again, fixing that.` : ''}`;
}

/** The user message of a second specification draft: the first one, and why it was refused. */
export function specificationRetry(prompt: string, refusal: string): string {
  return `${prompt}\n\nYour previous answer was refused: ${refusal}\nAnswer again with one JSON object, fixing that.`;
}
