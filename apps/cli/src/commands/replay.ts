import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import {
  createReplayStore,
  type Divergence,
  type ReplayBundle,
  ReplayError,
  type ReplayReport,
  readReplayBundle,
  replayTurn,
} from '@metnos/planner';
import { createVerifier } from '@metnos/vaglio';
import { CliFailure, type CliIo } from '../output.ts';
import { userPath } from '../workspace.ts';
import { replayDir, runtime } from './ask.ts';

export const REPLAY_HELP = `metnos replay — run a recorded turn again and check it step by step

Usage:
  metnos replay <turn-id> [--bundle <file>] [--json] [--executors <dir>] [--workspace <dir>]

Every turn of the learning engine (metnos ask) leaves a replay bundle in <data>/replay/<turn-id>.json:
the plans it ran, the executors pinned by digest, its clock, each step's arguments and result hash.
replay runs those plans again through the sandbox, on the workspace as it is now, and compares.
Steps of executors with side effects are not run again: their recorded result stands in.

Options:
  --bundle <file>     the bundle to replay (default: the turn's bundle in the data folder)
  --json              print the whole report as JSON
  --executors <dir>   the executors folder
  --workspace <dir>   the workspace the executors work in

Exit codes: 0 every step matched the record, 1 the replay diverged (the first difference is
printed: where, what, expected and actual), 2 no such turn or bundle.
`;

/** The bundle a replay runs: `--bundle`, else the data folder's bundle of the turn. */
function loadBundle(
  turnId: string | undefined,
  file: string | undefined,
  place: { cwd: string },
  data: string,
): ReplayBundle {
  try {
    const bundle = file
      ? readReplayBundle(userPath(place, file))
      : createReplayStore({ dir: replayDir(data) }).load(turnId!);
    if (turnId !== undefined && bundle.turnId !== turnId)
      throw new ReplayError(`the bundle ${file} is of turn ${bundle.turnId}, not ${turnId}`);
    return bundle;
  } catch (error) {
    if (!(error instanceof ReplayError)) throw error;
    const missing = !file && error.message.startsWith('no replay bundle');
    const hint = missing
      ? ' (metnos ask saves one per turn of the learning engine; the id ends its answer)'
      : '';
    throw new CliFailure(`${error.message}${hint}`, 2);
  }
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** A value of a divergence on one line: hashes as they are, anything with line breaks quoted. */
const shown = (value: string) => (/[\n\r]/.test(value) ? JSON.stringify(value) : value);

/** Where a divergence is: run, step and tool, as far as it names them. */
function whereOf(divergence: Divergence): string {
  const parts = [
    divergence.run !== undefined ? `run ${divergence.run}` : undefined,
    divergence.step !== undefined ? `step ${divergence.step}` : undefined,
    divergence.tool,
  ].filter((part) => part !== undefined);
  return parts.length > 0 ? parts.join(', ') : 'the turn';
}

function printReport(io: CliIo, report: ReplayReport, runs: number): void {
  const { divergence, matched, notRerun } = report;
  if (!divergence) {
    const skipped =
      notRerun.length > 0
        ? ` (${notRerun.length} not re-run: side effects — ${notRerun.map((step) => step.tool).join(', ')})`
        : '';
    const nothing = runs === 0 ? ' (the turn ran no plan)' : '';
    io.out(`turn ${report.turnId}: replayed, ${plural(matched, 'step')} matched${skipped}${nothing}`);
    return;
  }
  io.err(
    [
      `turn ${report.turnId}: diverged — ${divergence.message}`,
      `  where:    ${whereOf(divergence)} (${divergence.at})`,
      `  expected: ${shown(divergence.expected)}`,
      `  actual:   ${shown(divergence.actual)}`,
      `  ${plural(matched, 'step')} matched before it`,
    ].join('\n'),
  );
}

export async function replayCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      bundle: { type: 'string' },
      json: { type: 'boolean', default: false },
      executors: { type: 'string' },
      workspace: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(REPLAY_HELP);
    return 0;
  }
  const [turnId] = positionals;
  if (positionals.length > 1 || (turnId === undefined && values.bundle === undefined)) {
    io.err(REPLAY_HELP);
    return 2;
  }
  const context = await runtime({ executors: values.executors, workspace: values.workspace });
  // the bundle first: a missing one is said at once, before the catalog is loaded
  const bundle = loadBundle(turnId, values.bundle, context.place, context.data);
  const { catalog, invoker, vaglio } = await context.execution();
  const report = await replayTurn(bundle, {
    executors: catalog.executors(),
    invoker,
    reviewer: vaglio,
    workspace: context.place.workspace,
    // the engine's default home, as `ask` runs it
    home: homedir(),
    verifier: createVerifier(),
  });
  if (values.json) io.out(JSON.stringify(report, null, 2));
  else printReport(io, report, bundle.runs.length);
  return report.divergence ? 1 : 0;
}
