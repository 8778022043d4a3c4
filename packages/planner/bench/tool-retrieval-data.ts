import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/** A tool as a retrieval benchmark sees it: a name and what it does. */
export interface BenchTool {
  name: string;
  description: string;
}

/** A request and the tools that serve it (one, or several for a multi-tool request). */
export interface BenchQuery {
  query: string;
  tools: string[];
}

/** A tool-retrieval data set: the catalog and the requests with their gold tools. */
export interface ToolRetrievalData {
  /** What was read, for the report: `metatool` or `jsonl`. */
  format: 'metatool' | 'jsonl';
  tools: BenchTool[];
  queries: BenchQuery[];
}

/** A data file that does not have the expected shape; the message names the file and the place. */
export class BenchDataError extends Error {
  constructor(file: string, where: string, what: string) {
    super(`${file}${where ? ` ${where}` : ''}: ${what}`);
    this.name = 'BenchDataError';
  }
}

/**
 * Splits CSV text (RFC 4180: fields in double quotes may hold commas,
 * newlines and doubled quotes) into rows of fields. A trailing newline does
 * not make an empty row.
 *
 * @example
 * parseCsv('Query,Tool\n"Hi, there",chat\n'); // [['Query', 'Tool'], ['Hi, there', 'chat']]
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (quoted) {
      if (character !== '"') field += character;
      else if (text[index + 1] === '"') {
        field += '"';
        index++;
      } else quoted = false;
    } else if (character === '"') quoted = true;
    else if (character === ',') {
      row.push(field);
      field = '';
    } else if (character === '\n' || character === '\r') {
      if (character === '\r' && text[index + 1] === '\n') index++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += character;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new BenchDataError(file, '', `not JSON (${(cause as Error).message})`);
  }
}

function parseWith<Shape extends z.ZodType>(schema: Shape, value: unknown, file: string, where: string) {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new BenchDataError(file, where, `${issue.path.join('.') || 'value'}: ${issue.message}`);
  }
  return parsed.data as z.infer<Shape>;
}

function readJsonLines<Shape extends z.ZodType>(file: string, schema: Shape): Array<z.infer<Shape>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line, index) => ({ line: line.trim(), number: index + 1 }))
    .filter(({ line }) => line !== '')
    .map(({ line, number }) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new BenchDataError(file, `line ${number}`, 'not JSON');
      }
      return parseWith(schema, value, file, `line ${number}`);
    });
}

const toolLine = z.object({ name: z.string().min(1), description: z.string() });
const queryLine = z.object({ query: z.string().min(1), tools: z.array(z.string().min(1)).min(1) });

/**
 * Reads a folder in the plain format: `tools.jsonl`, one `{ name,
 * description }` a line, and `queries.jsonl`, one `{ query, tools: [gold
 * names] }` a line.
 *
 * @example
 * const { tools, queries } = loadJsonlData('bench/__fixtures__/tiny-jsonl');
 */
export function loadJsonlData(folder: string): ToolRetrievalData {
  const tools = readJsonLines(join(folder, 'tools.jsonl'), toolLine);
  const queries = readJsonLines(join(folder, 'queries.jsonl'), queryLine);
  return checked({ format: 'jsonl', tools, queries }, join(folder, 'queries.jsonl'));
}

/**
 * Reads MetaTool (Huang et al. 2024, github.com/HowieHwong/MetaTool, MIT) as
 * published: `plugin_des.json` (tool name → description), `all_clean_data.csv`
 * (`Query,Tool`: a request and the one tool that serves it) and, when present,
 * `multi_tool_query_golden.json` (`[{ query, tool: [two names] }]`).
 *
 * @example
 * const { tools, queries } = loadMetaToolData('../shared/data/metatool');
 */
export function loadMetaToolData(folder: string): ToolRetrievalData {
  const descriptionsFile = join(folder, 'plugin_des.json');
  const descriptions = parseWith(
    z.record(z.string().min(1), z.string()),
    readJson(descriptionsFile),
    descriptionsFile,
    '',
  );
  const tools = Object.entries(descriptions).map(([name, description]) => ({ name, description }));
  const singleFile = join(folder, 'all_clean_data.csv');
  const [header, ...rows] = parseCsv(readFileSync(singleFile, 'utf8'));
  if (header?.[0] !== 'Query' || header[1] !== 'Tool')
    throw new BenchDataError(singleFile, 'line 1', 'expected the header "Query,Tool"');
  const queries: BenchQuery[] = rows.map((row, index) => {
    if (row.length !== 2 || row[0] === '' || row[1] === '')
      throw new BenchDataError(singleFile, `row ${index + 2}`, 'expected two non-empty fields');
    return { query: row[0]!, tools: [row[1]!] };
  });
  const multiFile = join(folder, 'multi_tool_query_golden.json');
  if (existsSync(multiFile)) {
    const multi = parseWith(
      z.array(z.object({ query: z.string().min(1), tool: z.array(z.string().min(1)).min(1) })),
      readJson(multiFile),
      multiFile,
      '',
    );
    queries.push(...multi.map((entry) => ({ query: entry.query, tools: entry.tool })));
  }
  return checked({ format: 'metatool', tools, queries }, singleFile);
}

/** Every gold tool must be in the catalog, and tool names must be unique. */
function checked(data: ToolRetrievalData, queriesFile: string): ToolRetrievalData {
  const names = new Set<string>();
  for (const tool of data.tools) {
    if (names.has(tool.name))
      throw new BenchDataError(queriesFile, '', `tool "${tool.name}" is listed twice`);
    names.add(tool.name);
  }
  data.queries.forEach((query, index) => {
    const unknown = query.tools.find((name) => !names.has(name));
    if (unknown !== undefined)
      throw new BenchDataError(
        queriesFile,
        `query ${index + 1}`,
        `gold tool "${unknown}" is not in the catalog`,
      );
  });
  return data;
}

/**
 * Reads either format from a folder: `tools.jsonl` + `queries.jsonl` when
 * they are there, else MetaTool's own files.
 *
 * @example
 * const data = loadToolRetrievalData(process.argv[2]);
 */
export function loadToolRetrievalData(folder: string): ToolRetrievalData {
  if (existsSync(join(folder, 'tools.jsonl'))) return loadJsonlData(folder);
  if (existsSync(join(folder, 'plugin_des.json'))) return loadMetaToolData(folder);
  throw new BenchDataError(
    folder,
    '',
    'holds neither tools.jsonl + queries.jsonl nor MetaTool (plugin_des.json, all_clean_data.csv)',
  );
}
