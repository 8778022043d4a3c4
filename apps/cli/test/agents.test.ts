import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startAnthropicServer,
  startOllamaServer,
  startOpenAiServer,
  type WireServer,
} from '@metnos/planner/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAgentGraphs } from '../src/agents.ts';
import { runtime } from '../src/commands/ask.ts';
import { cli, repoRoot, STACK_LINE } from './__fixtures__/cli.ts';

// The two-agent scenario end to end through the CLI: router → specialist → actor, three
// scripted models behind the real wire servers (Ollama, the OpenAI protocol, the Anthropic
// protocol), the seed executors under the sandbox, every call in the workspace's receipt chain.

const OPENAI_KEY = 'sk-test-openai-4711-never-in-a-receipt';
const ANTHROPIC_KEY = 'sk-ant-test-0815-never-in-a-receipt';
const GOAL = 'How much is invoice 42? My PIN is 2468.';

let work: string;
let servers: { ollama: WireServer; openai: WireServer; anthropic: WireServer };
const savedEnv = { ...process.env };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'metnos-agents-'));
  servers = {
    ollama: await startOllamaServer(),
    openai: await startOpenAiServer([], { apiKey: OPENAI_KEY }),
    anthropic: await startAnthropicServer([], { apiKey: ANTHROPIC_KEY }),
  };
  await mkdir(join(work, 'workspace', 'notes'), { recursive: true });
  await writeFile(join(work, 'workspace', 'notes', 'invoices.md'), 'invoice 42: 120 EUR\n');
  await writeFile(
    join(work, 'metnos.toml'),
    `[workspace]
root = "workspace"
executors = "${join(repoRoot, 'executors')}"
trusted_keys = ["${join(repoRoot, 'keys', 'metnos-release.pub')}"]

[runtime]
data_dir = "data"

[runtime.llm.fast]
provider = "ollama"
model = "qwen3:8b"
base_url = "${servers.ollama.url}"

[runtime.llm.middle]
provider = "openai"
model = "gpt-4o-mini"
base_url = "${servers.openai.baseUrl}"
api_key_env = "TEST_OPENAI_KEY"

[runtime.llm.wise]
provider = "anthropic"
model = "claude-haiku-4-5"
base_url = "${servers.anthropic.baseUrl}"
api_key_env = "TEST_ANTHROPIC_KEY"

[agents.triage]
entry = "router"
exits = ["actor"]
max_agent_visits = 2

[agents.triage.agent.router]
prompt = "Say billing when the request is about an invoice."
tier = "fast"
executors = []

[agents.triage.agent.specialist]
prompt = "Answer billing questions from notes/invoices.md."
tier = "middle"
executors = ["fs_read"]
budget = { max_tool_calls = 1 }

[agents.triage.agent.actor]
prompt = "Write the answer to notes/answer.md."
tier = "wise"
executors = ["fs_write"]

[[agents.triage.edge]]
from = "router"
to = "specialist"
when = { contains = "billing", ignore_case = true }

[[agents.triage.edge]]
from = "router"
to = "actor"

[[agents.triage.edge]]
from = "specialist"
to = "router"
when = { contains = "ask again" }

[[agents.triage.edge]]
from = "specialist"
to = "actor"
`,
  );
  process.env.INIT_CWD = work;
  process.env.METNOS_CONFIG_DIR = join(work, 'config');
  process.env.TEST_OPENAI_KEY = OPENAI_KEY;
  process.env.TEST_ANTHROPIC_KEY = ANTHROPIC_KEY;
});

afterAll(async () => {
  process.env = savedEnv;
  await Promise.all(Object.values(servers).map((server) => server.close()));
  await rm(work, { recursive: true, force: true });
});

const receiptsDir = () => join(work, 'workspace', '.audit', 'receipts');
async function dayFile(): Promise<string> {
  const [file] = (await readdir(receiptsDir()))
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .slice(-1);
  return join(receiptsDir(), file!);
}

describe('metnos ask --agents', () => {
  it('hands off by `when`, stops the specialist on its budget with the reason, and the actor writes the answer', async () => {
    servers.ollama.push({ text: 'This is a billing question.' });
    servers.openai.push(
      { toolCalls: [{ id: 'c1', name: 'fs_read', args: { path: 'notes/invoices.md' } }] },
      {
        text: 'Invoice 42 is 120 EUR.',
        toolCalls: [{ id: 'c2', name: 'fs_read', args: { path: 'notes/invoices.md' } }],
      },
    );
    servers.anthropic.push(
      {
        toolCalls: [
          { id: 't1', name: 'fs_write', args: { path: 'notes/answer.md', content: 'invoice 42: 120 EUR\n' } },
        ],
      },
      { text: 'Wrote notes/answer.md: invoice 42 is 120 EUR.' },
    );
    const result = await cli(['ask', '--agents', 'triage', '--yes', GOAL]);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toContain('Wrote notes/answer.md: invoice 42 is 120 EUR.');
    expect(result.out).toMatch(
      /— agents: router → specialist → actor · exit \(specialist stopped on its toolCalls budget\) · 5 model turns · run [0-9a-f-]{36}/,
    );
    expect(await readFile(join(work, 'workspace', 'notes', 'answer.md'), 'utf8')).toBe(
      'invoice 42: 120 EUR\n',
    );
  });

  it('stops a router ⇄ specialist cycle at the visit cap, and says so with --json', async () => {
    servers.ollama.push({ text: 'billing' }, { text: 'billing, again' });
    servers.openai.push({ text: 'ask again: which invoice?' }, { text: 'ask again: still unclear' });
    const result = await cli(['ask', '--agents', 'triage', '--json', 'something about a bill']);
    const run = JSON.parse(result.out);
    expect(run).toMatchObject({ status: 'completed', ending: 'cycle' });
    expect(run.visits.map((visit: { agentId: string }) => visit.agentId)).toEqual([
      'router',
      'specialist',
      'router',
      'specialist',
    ]);
    expect(run.events.find((event: { type: string }) => event.type === 'agent.handoff.cycle')).toMatchObject({
      data: { from: 'specialist', to: 'router', visits: 2 },
    });
  });

  it('aborts a run mid-way: the in-flight model request is torn down and the run says so', async () => {
    servers.ollama.push({ text: 'billing' });
    servers.openai.push({ hang: true });
    const graphs = await openAgentGraphs(await runtime({}));
    const controller = new AbortController();
    const asked = servers.openai.requests.length;
    const running = graphs.run('triage', 'How much is invoice 7?', { signal: controller.signal });
    while (servers.openai.requests.length === asked) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    const run = await running;
    graphs.close();
    expect(run).toMatchObject({ status: 'aborted', ending: 'aborted' });
    expect(run.visits.map((visit) => visit.status)).toEqual(['completed', 'aborted']);
  });

  it('refuses a graph the file does not have, with the ones it has', async () => {
    const result = await cli(['ask', '--agents', 'billing', 'x']);
    expect(result.code).toBe(2);
    expect(result.err).toContain('no agent graph "billing" in metnos.toml (there are: triage)');
    expect(result.err).not.toMatch(STACK_LINE);
  });
});

describe('metnos receipts', () => {
  it('verifies the chain the runs left: every model turn and executor call, no key, goal or argument in it', async () => {
    const verified = await cli(['receipts', 'verify']);
    expect(verified.code).toBe(0);
    // 5 + 4 + 2 model turns (the aborted one included) and 2 executor calls
    expect(verified.out).toMatch(/^ok: 13 receipts in 1 file\(s\) verify \(receipts 0–12, /);
    const text = await readFile(await dayFile(), 'utf8');
    const kinds = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).kind);
    expect(kinds.filter((kind) => kind === 'executor')).toHaveLength(2);
    for (const secret of [OPENAI_KEY, ANTHROPIC_KEY, '2468', 'invoice 42: 120 EUR', 'notes/invoices.md'])
      expect(text).not.toContain(secret);
    // the receipt key is the installation's own, not one trusted to sign executors
    const pub = JSON.parse(await readFile(join(work, 'config', 'keys', 'receipts.pub'), 'utf8'));
    const [pairs, trusted] = (await cli(['keys', 'list'])).out.split('trusted keys:');
    expect(pairs).toContain(pub.key_id);
    expect(trusted).not.toContain(pub.key_id);
  });

  it('names the first broken link when one byte is edited, and passes again once it is restored', async () => {
    const file = await dayFile();
    const original = await readFile(file, 'utf8');
    const lines = original.split('\n');
    lines[3] = lines[3]!.replace('"input_tokens":', '"input_tokenz":');
    await writeFile(file, lines.join('\n'));
    const broken = await cli(['receipts', 'verify']);
    expect(broken.code).toBe(1);
    expect(broken.err).toMatch(/^broken: \d{4}-\d{2}-\d{2}\.jsonl:4 \(receipt 3\): bad_signature: /);
    expect(broken.err).toContain('3 receipt(s) before it verify');
    await writeFile(file, original);
    expect((await cli(['receipts', 'verify'])).code).toBe(0);
  });

  it('reports a torn tail, refuses new calls until `metnos receipts repair`, then verifies with the repair listed', async () => {
    const file = await dayFile();
    await appendFile(file, '{"v":1,"seq":13,"hlc":{"ms":17');
    const torn = await cli(['receipts', 'verify']);
    expect(torn.code).toBe(3);
    expect(torn.err).toContain('torn tail');
    expect(torn.err).toContain('metnos receipts repair');
    const refused = await cli(['ask', '--agents', 'triage', 'anything']);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('ReceiptError');
    const repaired = await cli(['receipts', 'repair']);
    expect(repaired.out).toMatch(
      /repaired: receipt 13 records torn_tail \(the removed bytes are in .+removed-/,
    );
    const after = await cli(['receipts', 'verify', '--from', '2000-01-01']);
    expect(after.code).toBe(0);
    expect(after.out).toContain('repair at receipt 13');
  });

  it('says what it takes', async () => {
    expect((await cli(['receipts', 'verify', '--from', 'yesterday'])).code).toBe(2);
    expect((await cli(['receipts', 'nonsense'])).code).toBe(2);
    expect((await cli(['receipts', '--help'])).out).toContain('metnos receipts verify');
  });
});
