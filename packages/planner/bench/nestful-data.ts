import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { BenchDataError, type BenchTool } from './tool-retrieval-data.ts';

/** One request of NESTFUL with its gold sequence of calls, and which earlier calls each one reads. */
export interface NestfulSequence {
  query: string;
  steps: Array<{ tool: string; label: string | undefined; reads: string[] }>;
}

/** NESTFUL as the history benchmark reads it: the tools and the multi-step requests. */
export interface NestfulData {
  tools: BenchTool[];
  sequences: NestfulSequence[];
}

const specSchema = z.array(z.object({ name: z.string().min(1), description: z.string() }).loose());
const dataSchema = z.array(
  z
    .object({
      input: z.string().min(1),
      output: z.array(
        z
          .object({
            name: z.string().min(1),
            arguments: z.record(z.string(), z.unknown()),
            label: z.string().optional(),
          })
          .loose(),
      ),
    })
    .loose(),
);

function parsed<Shape extends z.ZodType>(file: string, schema: Shape): z.infer<Shape> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new BenchDataError(file, '', `not JSON (${(cause as Error).message})`);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new BenchDataError(file, '', `${issue.path.join('.') || 'value'}: ${issue.message}`);
  }
  return result.data as z.infer<Shape>;
}

/** The labels an argument value reads: `$var1.skyId$` and `$var3$` → ['var1', 'var3']. */
function readsOf(value: unknown): string[] {
  const found = new Set<string>();
  for (const match of JSON.stringify(value ?? null).matchAll(/\$(var\d+)(?:\.[^$"]*)?\$/g))
    found.add(match[1]!);
  return [...found];
}

/**
 * Reads NESTFUL (IBM, github.com/IBM/NESTFUL, Apache-2.0) as published:
 * `executable-spec.json` (the APIs: name, description, parameters) and
 * `executable-data.json` (requests with gold call sequences whose arguments
 * read earlier outputs as `$varN.field$`). The closing `var_result` step
 * only gathers outputs and is left out.
 *
 * @example
 * const { tools, sequences } = loadNestfulData('../shared/data/nestful');
 */
export function loadNestfulData(folder: string): NestfulData {
  const spec = parsed(join(folder, 'executable-spec.json'), specSchema);
  const data = parsed(join(folder, 'executable-data.json'), dataSchema);
  const tools = spec.map((api) => ({ name: api.name, description: api.description }));
  const names = new Set(tools.map((tool) => tool.name));
  const sequences = data.map((entry, index) => {
    const steps = entry.output
      .filter((call) => call.name !== 'var_result')
      .map((call) => ({ tool: call.name, label: call.label, reads: readsOf(call.arguments) }));
    const unknown = steps.find((step) => !names.has(step.tool));
    if (unknown)
      throw new BenchDataError(
        join(folder, 'executable-data.json'),
        `entry ${index + 1}`,
        `${unknown.tool} is not in the spec`,
      );
    return { query: entry.input, steps };
  });
  return { tools, sequences };
}
