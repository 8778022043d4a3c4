import { parseArgs } from 'node:util';
import {
  type ChainReport,
  type PublicKey,
  ReceiptError,
  readPublicKey,
  receiptsDirOf,
  verifyReceiptChain,
} from '@metnos/executor-sdk';
import { CliFailure, type CliIo } from '../output.ts';
import { openReceiptChain, RECEIPT_KEY, receiptPublicKeys } from '../receipts.ts';
import { resolvePlace } from '../workspace.ts';

export const RECEIPTS_HELP = `metnos receipts — the signed chain of what Metnos did

Usage:
  metnos receipts verify [--from YYYY-MM-DD] [--key <file.pub>]... [--json] [--workspace <dir>]
  metnos receipts repair [--workspace <dir>]

Every model call and every executor invocation (ask, serve, the scheduler, agents, MCP) appends a
receipt to <workspace>/.audit/receipts/<day>.jsonl: signed with this installation's Ed25519 key
(${RECEIPT_KEY} in the key store), linked to the one before by its signature, numbered, HLC-stamped.
Receipts hold digests and counts, never arguments, prompts or answers.

verify   checks the whole chain offline with public keys only (default: ${RECEIPT_KEY}.pub and
         ${RECEIPT_KEY}-*.pub of the key store; --key to check with others): every signature, every
         link, the order, the HLC stamps, and the signed head. Names the first broken link (file,
         line, receipt, why). --from starts at that day, anchored on its first receipt.
         Exit 0: the chain verifies (or is empty); 1: a link is broken; 3: the last line is torn.
repair   settles what stops new receipts, with a signed repair receipt that stays in the chain:
         a torn or invalid last line (moved to <day>.jsonl.removed-<stamp>), receipts cut off the
         end (the gap is recorded). Until then Metnos refuses the calls it would receipt.
`;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function describe(report: ChainReport): string[] {
  const span =
    report.first && report.last
      ? `receipts ${report.first.seq}–${report.last.seq}, ${report.first.hlc} to ${report.last.hlc}`
      : 'no receipts';
  const lines: string[] = [];
  if (report.status === 'ok')
    lines.push(
      `ok: ${report.receipts} receipt${report.receipts === 1 ? '' : 's'} in ${report.files} file(s) verify (${span})`,
    );
  if (report.status === 'empty') lines.push('ok: the chain holds no receipts yet');
  if (report.anchored)
    lines.push('  anchored at its first receipt read (--from): earlier days were not checked');
  for (const repair of report.repairs)
    lines.push(`  repair at receipt ${repair.seq} (${repair.file}:${repair.line}): ${repair.reason}`);
  if (report.status === 'broken' && report.broken) {
    const where = report.broken.line ? `${report.broken.file}:${report.broken.line}` : report.broken.file;
    const seq = report.broken.seq === undefined ? '' : ` (receipt ${report.broken.seq})`;
    lines.unshift(
      `broken: ${where}${seq}: ${report.broken.reason}: ${report.broken.message}`,
      `  ${report.receipts} receipt(s) before it verify (${span})`,
    );
  }
  if (report.status === 'torn_tail' && report.tornTail)
    lines.unshift(
      `torn tail: the last line of ${report.tornTail.file} (line ${report.tornTail.line}, ${report.tornTail.bytes} bytes) was cut short, likely by a crash; the ${report.receipts} receipt(s) before it verify (${span})`,
      '  no receipt is chained onto it: run `metnos receipts repair` to move it aside with a signed repair receipt',
    );
  return lines;
}

async function keysFor(files: string[] | undefined): Promise<PublicKey[]> {
  if (files && files.length > 0) return Promise.all(files.map((file) => readPublicKey(file)));
  const keys = await receiptPublicKeys();
  if (keys.length === 0)
    throw new CliFailure(
      `there is no ${RECEIPT_KEY}.pub in the key store: give the installation's public key with --key <file.pub>`,
    );
  return keys;
}

export async function receiptsCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      from: { type: 'string' },
      key: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      workspace: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [action, ...rest] = positionals;
  if (values.help || (action !== 'verify' && action !== 'repair') || rest.length > 0) {
    (values.help ? io.out : io.err)(RECEIPTS_HELP);
    return values.help ? 0 : 2;
  }
  if (values.from !== undefined && !DAY.test(values.from))
    throw new CliFailure(`--from takes a day as YYYY-MM-DD, not "${values.from}"`, 2);
  const place = await resolvePlace({ workspace: values.workspace });
  const dir = receiptsDirOf(place.workspace);
  if (action === 'verify') {
    const report = await verifyReceiptChain({
      dir,
      keys: await keysFor(values.key),
      ...(values.from ? { from: values.from } : {}),
    });
    if (values.json) io.out(JSON.stringify(report, null, 2));
    else
      for (const line of describe(report))
        (report.status === 'ok' || report.status === 'empty' ? io.out : io.err)(line);
    return report.status === 'broken' ? 1 : report.status === 'torn_tail' ? 3 : 0;
  }
  let repaired: Awaited<ReturnType<Awaited<ReturnType<typeof openReceiptChain>>['repair']>>;
  try {
    repaired = await (await openReceiptChain(place.workspace)).repair();
  } catch (error) {
    if (ReceiptError.isInstance(error)) throw new CliFailure(error.message);
    throw error;
  }
  if (values.json) io.out(JSON.stringify(repaired, null, 2));
  else if (repaired.repairs.length === 0) io.out('nothing to repair: the chain can take receipts');
  else
    for (const receipt of repaired.repairs)
      io.out(
        `repaired: receipt ${receipt.seq} records ${receipt.data.reason}${receipt.data.kept_as ? ` (the removed bytes are in ${dir}/${receipt.data.kept_as})` : ''}`,
      );
  return 0;
}
