import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import {
  createCatalog,
  createInvoker,
  type ExecutorRunner,
  generateSigningKey,
  type SigningKey,
  SUPPORTED_KEYWORDS,
  signExecutor,
} from '@metnos/executor-sdk';
import { type BridgeServer, bridgeSource } from './bridge.ts';
import { nodeReadGrants } from './node-closure.ts';

/** A request the wrap cannot turn into a safe plan: the person's input, said in one line. */
export class WrapError extends Error {
  readonly code = 'wrap_refused';
}

/** What the person asked `metnos mcp wrap` for. */
export interface WrapRequest {
  /** The server: a command and its arguments (stdio), or one `http(s)://` URL. */
  target: string[];
  /** Folders the server may read, beside those its command names. */
  read?: string[];
  /** Folders the server may write (never granted unless named). */
  write?: string[];
  /** Domains a stdio server may reach through the egress proxy (none unless named). */
  network?: string[];
  /** The executors' name prefix (default: from the server's package, binary or host). */
  name?: string;
  /** Where relative paths in the command are read from. */
  cwd: string;
}

/** The sandbox profile every wrapped tool of one server gets. */
export interface WrapProfile {
  fs: { read: string[]; write: string[] };
  exec: { mode: 'none' | 'allowlist'; binaries: string[] };
  network: { mode: 'none' | 'allowlist'; domains: string[] };
  max_duration_ms: number;
  max_memory_mb: number;
  max_output_bytes: number;
}

/** A server, the profile proposed for it, and how its tools will be named. */
export interface WrapPlan {
  server: BridgeServer;
  prefix: string;
  /** How the person named the server, for summaries. */
  label: string;
  profile: WrapProfile;
  /** Folders the command's arguments name: shown, granted only as `--read` / `--write` say. */
  mentioned: string[];
}

/** One tool as the server listed it. */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: { readOnlyHint?: unknown; idempotentHint?: unknown; destructiveHint?: unknown };
}

const SEARCH = ['/usr/local/bin', '/usr/bin', '/bin'];

/** An executor-name fragment from free text: lower case, `_`, starting with a letter. */
export function nameFragment(text: string): string {
  const cleaned = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+/, '')
    .replace(/_+$/, '');
  return cleaned.slice(0, 40) || 'mcp';
}

function isJavaScriptFile(path: string): boolean {
  if (/\.(m?js|cjs)$/.test(path)) return true;
  try {
    return /^#!.*\bnode\b/.test(readFileSync(path, 'utf8').slice(0, 200));
  } catch {
    return false;
  }
}

/** The package name of the folder holding `file`, for the prefix. */
function packageNameOf(file: string): string | undefined {
  let dir = dirname(file);
  for (let depth = 0; depth < 6; depth++) {
    try {
      const name = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name;
      if (typeof name === 'string') return name;
    } catch {}
    dir = dirname(dir);
  }
  return undefined;
}

function prefixOfPackage(name: string): string {
  return nameFragment(
    (name.split('/').pop() ?? name)
      .replace(/^(mcp[-_]server[-_]|server[-_]|mcp[-_])/, '')
      .replace(/[-_]mcp$/, ''),
  );
}

function domainEntry(url: URL): string {
  const host = url.hostname.toLowerCase();
  return url.port ? `${host}:${url.port}` : host;
}

/**
 * The plan for a server before anything runs: the command made absolute (a
 * Node script runs on the executor's own Node), the folders it may read (its
 * package and every package it loads, and `--read`; a folder its arguments
 * name is shown, never granted by itself), write (`--write` only), the one
 * binary it may execute, and the
 * network (none for a stdio server unless `--network`; for a URL, its host
 * alone, through the egress proxy).
 *
 * @example
 * planWrap({ target: ['node', 'server.js', '/home/ada/notes'], write: ['/home/ada/notes'], cwd });
 */
export function planWrap(request: WrapRequest): WrapPlan {
  const [first, ...rest] = request.target;
  if (!first) throw new WrapError('name the server: a command and its arguments, or an http(s) URL');
  const absolute = (path: string) => (isAbsolute(path) ? path : resolve(request.cwd, path));
  const folders = (paths: readonly string[] | undefined, what: string) =>
    (paths ?? []).map((path) => {
      const full = absolute(path);
      if (!existsSync(full) || !statSync(full).isDirectory())
        throw new WrapError(`${what} ${path} is not a folder`);
      return realpathSync(full);
    });
  const limits = { max_duration_ms: 30_000, max_memory_mb: 512, max_output_bytes: 4 * 1024 * 1024 };
  if (/^https?:\/\//i.test(first)) {
    if (rest.length > 0) throw new WrapError('a URL is the whole target: nothing may follow it');
    let url: URL;
    try {
      url = new URL(first);
    } catch {
      throw new WrapError('the URL cannot be read');
    }
    if (url.username || url.password) throw new WrapError('the URL may not carry a user name or password');
    return {
      server: { kind: 'http', url: url.href },
      prefix: request.name ? nameFragment(request.name) : nameFragment(url.hostname.split('.')[0] ?? 'mcp'),
      label: url.href,
      profile: {
        fs: { read: [], write: [] },
        exec: { mode: 'none', binaries: [] },
        network: { mode: 'allowlist', domains: [domainEntry(url)] },
        ...limits,
      },
      mentioned: [],
    };
  }
  const read = folders(request.read, '--read');
  const write = folders(request.write, '--write');
  let server: Extract<BridgeServer, { kind: 'stdio' }>;
  let binary: string;
  let prefix: string;
  let label: string;
  const named: string[] = [];
  const args = rest.map((arg) => {
    // an argument that names an existing folder is a place the server works in: made absolute, shown
    if (!arg.startsWith('-') && existsSync(absolute(arg)) && statSync(absolute(arg)).isDirectory()) {
      const real = realpathSync(absolute(arg));
      named.push(real);
      return real;
    }
    return arg;
  });
  const script = first === 'node' ? args.shift() : first.includes('/') ? first : undefined;
  if (script !== undefined) {
    const path = absolute(script);
    if (!existsSync(path) || !isJavaScriptFile(path))
      throw new WrapError(`${script} is not a JavaScript file (a Node MCP server), nor a binary name`);
    const real = realpathSync(path);
    server = { kind: 'stdio', command: 'node', args: [real, ...args] };
    binary = 'node';
    read.push(...nodeReadGrants(real));
    label = packageNameOf(real) ?? basename(real);
    prefix = prefixOfPackage(label);
  } else {
    if (!/^[A-Za-z0-9._+-]+$/.test(first)) throw new WrapError(`${first} is not a binary name`);
    if (!SEARCH.some((dir) => existsSync(join(dir, first))))
      throw new WrapError(`${first} is not in ${SEARCH.join(', ')}, where the sandbox finds binaries`);
    server = { kind: 'stdio', command: first, args };
    binary = first;
    label = first;
    prefix = nameFragment(first);
  }
  const network = (request.network ?? []).map((domain) => domain.toLowerCase());
  return {
    server,
    prefix: request.name ? nameFragment(request.name) : prefix,
    label,
    profile: {
      fs: { read: [...new Set(read)], write: [...new Set(write)] },
      exec: { mode: 'allowlist', binaries: [binary] },
      network: network.length > 0 ? { mode: 'allowlist', domains: network } : { mode: 'none', domains: [] },
      ...limits,
    },
    mentioned: named,
  };
}

/** The plan as the person reads it before saying yes. */
export function describePlan(plan: WrapPlan): string[] {
  const { profile } = plan;
  const list = (values: string[]) => (values.length === 0 ? 'nothing' : values.join(', '));
  return [
    plan.server.kind === 'stdio'
      ? `server: ${plan.label}\n  runs inside the sandbox, as ${[plan.server.command, ...plan.server.args].join(' ')}${plan.server.command === 'node' ? ' (the Node that runs executors)' : ''}`
      : `server: ${plan.label}\n  reached through the egress proxy only`,
    'proposed profile (every tool of this server gets it):',
    `  read:     ${list(profile.fs.read)}`,
    `  write:    ${list(profile.fs.write)}`,
    `  execute:  ${profile.exec.mode === 'none' ? 'nothing' : list(profile.exec.binaries)}`,
    `  network:  ${profile.network.mode === 'none' ? 'none' : list(profile.network.domains)}`,
    `  limits:   ${profile.max_duration_ms / 1000} s, ${profile.max_memory_mb} MB, ${profile.max_output_bytes / 1024 / 1024} MiB out, tier full`,
    ...plan.mentioned
      .filter((dir) => !profile.fs.read.includes(dir) && !profile.fs.write.includes(dir))
      .map(
        (dir) =>
          `  note: the command names ${dir}, which the sandbox does not grant (add --read or --write to let the server use it)`,
      ),
  ];
}

const toml = (value: string) => JSON.stringify(value);
const tomlList = (values: readonly string[]) => `[${values.map(toml).join(', ')}]`;

function manifestText(settings: {
  name: string;
  summary: string;
  affinity: string[];
  sideEffects: boolean;
  idempotent: boolean;
  profile: WrapProfile;
  createdAt: Date;
}): string {
  const { profile } = settings;
  const capabilities = [
    'code:exec',
    ...(profile.fs.read.length > 0 ? ['fs:read'] : []),
    ...(profile.fs.write.length > 0 ? ['fs:write'] : []),
    ...(profile.network.mode === 'allowlist' ? ['net:http'] : []),
  ];
  return `[executor]
name = ${toml(settings.name)}
version = "1.0.0"
created_at = ${settings.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z')}
created_by = "user"
summary = ${toml(settings.summary)}
affinity = ${tomlList(settings.affinity)}
capabilities = ${tomlList(capabilities)}
entry = "main.ts"

[contract]
input_schema = "schema.json#/definitions/Input"
output_schema = "schema.json#/definitions/Output"
error_classes = ["ToolError", "ServerFailed", "ProtocolError", "Network"]
idempotent = ${settings.idempotent}
side_effects = ${settings.sideEffects}

[sandbox]
profile = "mcp-bridge"
min_tier = "full"
max_duration_ms = ${profile.max_duration_ms}
max_memory_mb = ${profile.max_memory_mb}
max_output_bytes = ${profile.max_output_bytes}

[sandbox.fs]
read = ${tomlList(profile.fs.read)}
write = ${tomlList(profile.fs.write)}

[sandbox.exec]
mode = ${toml(profile.exec.mode)}
binaries = ${tomlList(profile.exec.binaries)}

[sandbox.network]
mode = ${toml(profile.network.mode)}
domains = ${tomlList(profile.network.domains)}

[audit]
trace_topic = ${toml(`executor.${settings.name}`)}
`;
}

/**
 * The keywords a reduced schema keeps: those Metnos's validators share, less the ones that
 * name or point at other parts (a reduced schema has no definitions and follows no `$ref`).
 */
const REFERENCE_KEYWORDS = new Set(['$schema', '$id', '$ref', '$comment', 'definitions', '$defs']);
const KEYWORDS = new Set([...SUPPORTED_KEYWORDS].filter((keyword) => !REFERENCE_KEYWORDS.has(keyword)));

/**
 * A server's JSON Schema reduced to the keywords Metnos's validators share
 * (`$ref`s and unknown keywords dropped, so a part it cannot read accepts
 * anything the server does), at most 16 levels deep.
 */
function reduceSchema(schema: unknown, depth = 0): unknown {
  if (schema === true || schema === false) return schema;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || depth > 16) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!KEYWORDS.has(key)) continue;
    if (key === 'properties' && value && typeof value === 'object' && !Array.isArray(value)) {
      const properties: Record<string, unknown> = {};
      for (const [name, member] of Object.entries(value as Record<string, unknown>))
        if (/^[A-Za-z0-9_.-]{1,64}$/.test(name)) properties[name] = reduceSchema(member, depth + 1);
      out.properties = properties;
    } else if (['items', 'not', 'additionalProperties'].includes(key) && typeof value === 'object') {
      out[key] = reduceSchema(value, depth + 1);
    } else if (['oneOf', 'anyOf', 'allOf'].includes(key) && Array.isArray(value)) {
      out[key] = value.map((member) => reduceSchema(member, depth + 1));
    } else if (key === 'required' && Array.isArray(value)) {
      out.required = value.filter((member) => typeof member === 'string');
    } else if (
      key === 'type' ||
      key === 'enum' ||
      key === 'const' ||
      key === 'default' ||
      key === 'examples'
    ) {
      out[key] = value;
    } else if (typeof value === 'string' || typeof value === 'number') {
      out[key] = typeof value === 'string' ? value.slice(0, 500) : value;
    }
  }
  return out;
}

/** The tool's input schema as an executor's: an object, closed, every field described. */
function inputSchemaOf(tool: ListedTool): Record<string, unknown> {
  const reduced = reduceSchema(tool.inputSchema) as Record<string, unknown>;
  const properties = (reduced.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, member] of Object.entries(properties))
    if (typeof member.description !== 'string')
      member.description = `${name}: an argument of the MCP tool ${tool.name}`;
  return {
    ...reduced,
    type: 'object',
    description: `The arguments of the MCP tool ${tool.name}.`,
    properties,
    additionalProperties: false,
  };
}

const OUTPUT = {
  type: 'object',
  properties: {
    text: { type: 'string', description: 'The text parts of the tool result, joined by newlines.' },
    content: {
      type: 'array',
      description: 'The parts of the tool result: type, text and media type (binary data is left out).',
      items: { type: 'object' },
    },
    structured: { type: 'object', description: "The tool's structured result, when it gave one." },
  },
  required: ['text', 'content'],
  additionalProperties: false,
};

/** One listed tool as the artefacts of its executor (before signing). */
export function wrappedExecutor(plan: WrapPlan, tool: ListedTool, createdAt: Date) {
  const name = `${plan.prefix}_${nameFragment(tool.name)}`.slice(0, 64).replace(/_+$/, '');
  const readOnly = tool.annotations?.readOnlyHint === true;
  const idempotent = readOnly || tool.annotations?.idempotentHint === true;
  const description = (tool.description ?? tool.name).replace(/\s+/g, ' ').trim();
  const summary = `${description.slice(0, 300)} (MCP tool ${tool.name} of ${plan.label.slice(0, 120)})`;
  const affinity = [
    ...new Set(
      `${tool.name} ${description}`
        .toLowerCase()
        .split(/[^a-z0-9]+/)
        .filter((word) => word.length > 2),
    ),
  ].slice(0, 24);
  return {
    name,
    tool: tool.name,
    sideEffects: !readOnly,
    idempotent,
    manifest: manifestText({
      name,
      summary,
      affinity,
      sideEffects: !readOnly,
      idempotent,
      profile: plan.profile,
      createdAt,
    }),
    schema: `${JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', definitions: { Input: inputSchemaOf(tool), Output: OUTPUT } }, null, 2)}\n`,
    main: bridgeSource({ server: plan.server, tool: tool.name }),
  };
}

/** Writes an executor's artefacts into `dir` and signs them with `key`. */
export async function writeSigned(
  dir: string,
  files: { manifest: string; schema: string; main: string },
  key: SigningKey,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.toml'), files.manifest);
  await writeFile(join(dir, 'schema.json'), files.schema);
  await writeFile(join(dir, 'main.ts'), files.main);
  await signExecutor(dir, key);
}

const LISTER_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  definitions: {
    Input: { type: 'object', properties: {}, additionalProperties: false },
    Output: {
      type: 'object',
      properties: { tools: { type: 'array', items: { type: 'object' } } },
      required: ['tools'],
      additionalProperties: false,
    },
  },
};

/**
 * Asks the server for its tools from inside the sandbox, under the profile
 * the person approved: a one-off bridge executor signed with a key made for
 * this listing alone (trusted by nobody else, forgotten after), run by the
 * real sandbox runner; the server never runs outside it.
 */
export async function listToolsInSandbox(
  plan: WrapPlan,
  settings: { runner: ExecutorRunner; workspace: string },
): Promise<ListedTool[]> {
  const root = await mkdtemp(join(tmpdir(), 'metnos-mcp-wrap-'));
  try {
    const name = 'mcp_wrap_lister';
    const key = await generateSigningKey();
    await writeSigned(
      join(root, 'executors', name),
      {
        manifest: manifestText({
          name,
          summary: `Lists the tools of ${plan.label.slice(0, 200)}`,
          affinity: [],
          sideEffects: false,
          idempotent: true,
          profile: plan.profile,
          createdAt: new Date(),
        }),
        schema: `${JSON.stringify(LISTER_SCHEMA, null, 2)}\n`,
        main: bridgeSource({ server: plan.server, tool: null }),
      },
      key,
    );
    const catalog = createCatalog({
      root: join(root, 'executors'),
      trustedKeys: [key],
      stateDir: join(root, 'state'),
    });
    await catalog.load();
    const invoker = createInvoker({ catalog, runner: settings.runner });
    const result = await invoker.invoke(name, {}, { workspace: settings.workspace, caller: { kind: 'cli' } });
    if (!result.ok)
      throw new WrapError(
        `the server's tools could not be listed inside the sandbox: ${result.error.class}: ${result.error.message}`,
      );
    const tools = (result.content as { tools: unknown[] }).tools;
    return tools.flatMap((tool) => {
      const entry = tool as ListedTool;
      return typeof entry.name === 'string' && entry.name.length > 0 && entry.name.length <= 128
        ? [entry]
        : [];
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
