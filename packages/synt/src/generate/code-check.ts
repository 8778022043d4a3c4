import { jsonTextDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import ts from 'typescript';
import type { Checked, Specification } from './spec-schema.ts';

/** The one module besides `node:` built-ins a generated executor may import. */
export const DEFINE_MODULE = '@metnos/executor-sdk/define';

/** Built-ins that load or run other code: never in a generated executor, whatever its profile. */
const REFUSED_BUILTINS = new Set([
  'child_process',
  'cluster',
  'inspector',
  'module',
  'repl',
  'vm',
  'wasi',
  'worker_threads',
]);

const MAX_CODE_BYTES = 64 * 1024;

function importProblem(specifier: string): string | undefined {
  if (specifier === DEFINE_MODULE) return undefined;
  if (!specifier.startsWith('node:'))
    return `import of "${specifier}": only node: built-ins and ${DEFINE_MODULE} may be imported`;
  const name = specifier.slice('node:'.length).split('/')[0]!;
  return REFUSED_BUILTINS.has(name) ? `import of "${specifier}": it loads or runs other code` : undefined;
}

/** Walks the tree once and names every construct the rule refuses, plus what the rule must find. */
function scan(source: ts.SourceFile, spec: Specification) {
  const problems: string[] = [];
  const declared = new Set(spec.error_classes);
  let exportsDefinition = false;
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const problem = importProblem(node.moduleSpecifier.text);
      if (problem) problems.push(problem);
    }
    if (ts.isImportEqualsDeclaration(node)) problems.push('import = require(…) is refused');
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword) problems.push('dynamic import() is refused');
      if (ts.isIdentifier(callee) && ['require', 'eval', 'Function'].includes(callee.text))
        problems.push(`${callee.text}(…) is refused`);
      if (ts.isIdentifier(callee) && callee.text === 'fail') {
        const first = node.arguments[0];
        if (first && ts.isStringLiteralLike(first) && !declared.has(first.text))
          problems.push(`fail('${first.text}', …): not one of the declared error classes`);
      }
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Function')
      problems.push('new Function(…) is refused');
    if (
      ts.isPropertyAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'process' &&
      ['binding', '_linkedBinding', 'dlopen', 'env'].includes(node.name.text)
    )
      problems.push(`process.${node.name.text} is refused`);
    if (
      ts.isExportAssignment(node) &&
      !node.isExportEquals &&
      ts.isCallExpression(node.expression) &&
      ts.isIdentifier(node.expression.expression) &&
      node.expression.expression.text === 'defineExecutor'
    )
      exportsDefinition = true;
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!exportsDefinition)
    problems.push('main.ts must end with export default defineExecutor({ run(args, ctx) { … } })');
  return problems;
}

/**
 * Checks a generated `main.ts` before anything runs it: it parses as
 * TypeScript (Node's type stripping runs it as such), imports only `node:`
 * built-ins (none that load or run other code) and the SDK's define module,
 * has no dynamic import, require, eval or Function constructor, does not read
 * `process.env`, exports its definition by default, and fails only with the
 * declared error classes. The sandbox stops the rest; this refuses it earlier
 * and says why.
 *
 * @example
 * checkCode("import { readFileSync } from 'node:fs';\n…", spec); // { ok: true, value: code } or { ok: false, reason }
 */
export function checkCode(code: string, spec: Specification): Checked<string> {
  if (Buffer.byteLength(code) > MAX_CODE_BYTES)
    return { ok: false, reason: `main.ts is larger than ${MAX_CODE_BYTES} bytes` };
  const parsed = ts.transpileModule(code, {
    fileName: 'main.ts',
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const syntax = (parsed.diagnostics ?? []).map((diagnostic) => {
    const where =
      diagnostic.file && diagnostic.start !== undefined
        ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
        : undefined;
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    return where ? `main.ts:${where.line + 1}:${where.character + 1}: ${text}` : text;
  });
  if (syntax.length > 0)
    return { ok: false, reason: `main.ts does not parse: ${syntax.slice(0, 3).join('; ')}` };
  const source = ts.createSourceFile('main.ts', code, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const problems = [...new Set(scan(source, spec))];
  return problems.length === 0 ? { ok: true, value: code } : { ok: false, reason: problems.join('; ') };
}

type Json = Record<string, unknown>;

function fieldsOf(schema: Json | undefined): Map<string, unknown> {
  const properties = (schema?.properties ?? {}) as Record<string, Json>;
  return new Map(Object.entries(properties).map(([name, property]) => [name, property?.type]));
}

function sameFields(given: Json | undefined, wanted: Json, what: string): string[] {
  const have = fieldsOf(given);
  const want = fieldsOf(wanted);
  const problems: string[] = [];
  for (const [name, type] of want)
    if (!have.has(name)) problems.push(`${what}.${name} is missing`);
    else if (JSON.stringify(have.get(name)) !== JSON.stringify(type))
      problems.push(
        `${what}.${name} has type ${JSON.stringify(have.get(name))}, the spec says ${JSON.stringify(type)}`,
      );
  for (const name of have.keys()) if (!want.has(name)) problems.push(`${what}.${name} is not in the spec`);
  return problems;
}

/**
 * Checks a generated `schema.json` against the approved specification:
 * `definitions.Input` and `definitions.Output` with the spec's fields and
 * types, the same required input fields, a closed and described input. The
 * keyword subset and the manifest's references are checked afterwards by the
 * SDK itself, when the draft is signed in a staging folder.
 *
 * @example
 * checkSchemaText('{"definitions":{"Input":{…},"Output":{…}}}', spec);
 */
export function checkSchemaText(text: string, spec: Specification): Checked<string> {
  if (text.length > 256 * 1024) return { ok: false, reason: 'schema.json is larger than 256 KiB' };
  if (jsonTextDepth(text) > MAX_JSON_DEPTH)
    return { ok: false, reason: `schema.json nests deeper than ${MAX_JSON_DEPTH} levels` };
  let schema: Json;
  try {
    schema = JSON.parse(text) as Json;
  } catch {
    return { ok: false, reason: 'schema.json is not JSON' };
  }
  const definitions = schema?.definitions as Record<string, Json> | undefined;
  if (!definitions?.Input || !definitions.Output)
    return { ok: false, reason: 'schema.json needs definitions.Input and definitions.Output' };
  const input = definitions.Input;
  const problems = [
    ...sameFields(input, spec.input as Json, 'Input'),
    ...sameFields(definitions.Output, spec.output as Json, 'Output'),
  ];
  const required = (value: unknown) => JSON.stringify([...((value as string[] | undefined) ?? [])].sort());
  if (required(input.required) !== required((spec.input as Json).required))
    problems.push('Input.required differs from the spec');
  if (input.additionalProperties !== false) problems.push('Input.additionalProperties must be false');
  for (const [name, property] of Object.entries((input.properties ?? {}) as Record<string, Json>))
    if (typeof property?.description !== 'string') problems.push(`Input.${name} has no description`);
  return problems.length === 0 ? { ok: true, value: text } : { ok: false, reason: problems.join('; ') };
}
