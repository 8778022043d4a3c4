import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { jsonTextDepth, MAX_JSON_DEPTH } from '@metnos/executor-sdk';
import type { ProposalDetail, ProposalSummary, Specification } from '@metnos/synt';
import { specificationSchema } from '@metnos/synt';
import { CliFailure, type CliIo, table } from '../output.ts';
import { openSynt } from '../synt.ts';
import { userPath } from '../workspace.ts';
import { runtime } from './ask.ts';

export const SYNT_HELP = `metnos synt — the executors Metnos proposes to make, merge, generalise or specialise

Usage:
  metnos synt list [--all] [--json]          the proposal cards (open, under way, waiting for you)
  metnos synt show <id> [--json]             a card and its run: each stage, the model calls, the spec,
                                             and the artefacts to approve as diffs
  metnos synt approve <id> [--spec <file.json>] [--digest <sha256:…>]
                                             start what the card proposes, or go on where it waits:
                                               the spec: approve it, or send an amended one (--spec)
                                               the artefacts: approve them by the digest show prints
                                               a fix: try the stage again, or send an amended spec
  metnos synt reject <id>                    end the card and its run; nothing of it is signed
  metnos synt suggest                        the nightly synt_suggest, now: recurring proto-mnests
                                             through compose-only, and the merge, generalise,
                                             specialise and archive proposals, filed as cards

An <id> is a card's (p-…) or its run's (r-…). Generation asks the wise tier of [runtime.llm], runs
every birth test in the sandbox, and signs only after your approval, with your own key ([synt] key
in metnos.toml, default "default"), never the release key. \`metnos serve\` runs synt_suggest
nightly at 04:30 and shows the same cards on the console's Proposals page.

Options:
  --executors <dir>    the executors folder (where a generated executor is installed)
  --workspace <dir>    the workspace (its .audit is read for specialise proposals)
`;

const WAITING: Record<string, string> = {
  spec: 'your word on the spec',
  approval: 'your approval',
  fix: 'a fix',
};

function listing(cards: readonly ProposalSummary[]): string {
  if (cards.length === 0)
    return 'no proposals (metnos serve files them nightly; metnos synt suggest does it now)';
  return table([
    ['ID', 'KIND', 'STATE', 'WAITING FOR', 'TITLE'],
    ...cards.map((card) => [card.id, card.kind, card.state, card.waitingFor ?? '', card.title]),
  ]);
}

/** The next command for a card, as a hint. */
function next(detail: ProposalDetail): string[] {
  const id = detail.proposal.id;
  const state = detail.proposal.state;
  if (state === 'open') return [`next: metnos synt approve ${id}   or   metnos synt reject ${id}`];
  if (state !== 'waiting') return [];
  const run = detail.run;
  if (run?.waitingFor === 'approval' && detail.review)
    return [
      `next: metnos synt approve ${id} --digest ${detail.review.digest}   or   metnos synt reject ${id}`,
    ];
  if (run?.waitingFor === 'spec')
    return [`next: metnos synt approve ${id}   (or --spec <amended.json>)   or   metnos synt reject ${id}`];
  return [
    `next: metnos synt approve ${id} (try again, or --spec <amended.json>)   or   metnos synt reject ${id}`,
  ];
}

/** A card and its run as text: the stages, the lineage, the spec or the review. */
export function describeDetail(detail: ProposalDetail): string[] {
  const { proposal, run } = detail;
  const lines = [
    `${proposal.id}  ${proposal.kind}  ${proposal.state}`,
    proposal.title,
    `note: ${proposal.note}`,
    `evidence: ${JSON.stringify(proposal.evidence)}`,
  ];
  if (run) {
    lines.push(
      '',
      `run ${run.id}: ${run.state} at ${run.stage}${run.waitingFor ? `, waiting for ${WAITING[run.waitingFor]}` : ''}`,
    );
    if (run.reason && run.state === 'waiting') lines.push(`  ${run.reason}`);
    lines.push('stages:');
    for (const stage of detail.stages)
      lines.push(`  ${stage.stage.padEnd(13)} ${stage.outcome.padEnd(9)} ${stage.note}`);
    if (detail.modelCalls.length > 0) lines.push('model calls:');
    for (const call of detail.modelCalls)
      lines.push(
        `  ${call.stage.padEnd(13)} ${call.provider}/${call.model} (${call.tier})  prompt ${call.promptHash.slice(0, 12)}  ${call.error ? `error: ${call.error}` : `answer ${call.answer?.length ?? 0} chars`}`,
      );
    if (run.waitingFor === 'spec' && run.spec) lines.push('spec:', JSON.stringify(run.spec, null, 2));
    if (run.installed)
      lines.push(
        `installed: ${run.installed.name}@${run.installed.version} in ${run.installed.dir} (${run.installed.state})`,
      );
  }
  if (detail.review && run?.state === 'waiting') {
    lines.push('', `review ${detail.review.digest}`);
    for (const file of detail.review.files) lines.push('', file.diff);
    lines.push('', 'profile:', detail.review.profile.diff);
  }
  return [...lines, ...(next(detail).length > 0 ? ['', ...next(detail)] : [])];
}

/** An amended spec from a file: JSON within the nesting limit, through the spec's schema. */
async function readSpec(path: string): Promise<Specification> {
  const text = await readFile(path, 'utf8').catch((error: Error) => {
    throw new CliFailure(`cannot read ${path}: ${error.message}`);
  });
  if (jsonTextDepth(text) > MAX_JSON_DEPTH)
    throw new CliFailure(`${path} nests deeper than ${MAX_JSON_DEPTH} levels`, 2);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new CliFailure(`${path} is not JSON`, 2);
  }
  const parsed = specificationSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliFailure(
      `${path}: field "${issue?.path.join('.') ?? ''}": ${issue?.message ?? 'invalid'}`,
      2,
    );
  }
  return parsed.data;
}

export async function syntCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      all: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      spec: { type: 'string' },
      digest: { type: 'string' },
      executors: { type: 'string' },
      workspace: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [sub, id] = positionals;
  if (values.help || !sub) {
    io.out(SYNT_HELP);
    return values.help ? 0 : 2;
  }
  if (!['list', 'show', 'approve', 'reject', 'suggest'].includes(sub))
    throw new CliFailure(`unknown synt command "${sub}"\n\n${SYNT_HELP}`, 2);
  if (['show', 'approve', 'reject'].includes(sub) && !id)
    throw new CliFailure(`usage: metnos synt ${sub} <id>`, 2);
  const context = await runtime({ executors: values.executors, workspace: values.workspace });
  const spec = values.spec ? await readSpec(userPath(context.place, values.spec)) : undefined;
  const { synt, close } = await openSynt(context, (line) => io.err(line));
  const by = context.config.runtime.actor;
  const print = (detail: ProposalDetail) => {
    if (values.json) io.out(JSON.stringify(detail, null, 2));
    else for (const line of describeDetail(detail)) io.out(line);
    return 0;
  };
  try {
    switch (sub) {
      case 'list': {
        const cards = synt.list(values.all ? {} : { states: ['open', 'running', 'waiting'] });
        io.out(values.json ? JSON.stringify(cards, null, 2) : listing(cards));
        return 0;
      }
      case 'show':
        return print(synt.show(id!));
      case 'approve':
        return print(
          await synt.approve(id!, {
            by,
            ...(spec ? { spec } : {}),
            ...(values.digest ? { digest: values.digest } : {}),
          }),
        );
      case 'reject':
        return print(synt.reject(id!, by));
      default: {
        const report = await synt.suggest();
        if (values.json) io.out(JSON.stringify(report, null, 2));
        else {
          io.out(`synt_suggest: ${report.summary}`);
          for (const card of report.filed) io.out(`  ${card.id}  ${card.kind}  ${card.title}`);
        }
        return 0;
      }
    }
  } finally {
    close();
  }
}
