// The console's Proposals page: the synt's cards, a card's run (stages, model lineage, spec),
// the artefacts to approve as diffs, and the person's decisions. console.js hands it its helpers,
// so there is one `h`, one `api` and one rule: every value from the API becomes a text node.

/** A unified diff as lines, each a text node in a span classed by its first character. */
function diffBlock(ui, diff) {
  const kind = (line) =>
    line.startsWith('+++') || line.startsWith('---')
      ? 'diff-file'
      : line.startsWith('@@')
        ? 'diff-hunk'
        : line.startsWith('+')
          ? 'diff-add'
          : line.startsWith('-')
            ? 'diff-del'
            : 'diff-same';
  return ui.h(
    'pre',
    { className: 'diff' },
    String(diff)
      .split('\n')
      .map((line) => ui.h('span', { className: kind(line) }, line, '\n')),
  );
}

const WAITING = { spec: 'your word on the spec', approval: 'your approval', fix: 'a fix' };

/** The run of a card: where it stands, each stage's outcome, every model call's lineage. */
function runBlock(ui, detail) {
  const run = detail.run;
  if (!run) return null;
  return ui.h(
    'div',
    { className: 'run' },
    ui.h(
      'p',
      { className: 'muted' },
      `run ${run.id}: ${run.state} at ${run.stage}`,
      run.waitingFor ? `, waiting for ${WAITING[run.waitingFor] ?? run.waitingFor}` : '',
    ),
    run.reason && run.state === 'waiting' ? ui.h('p', { className: 'reason' }, run.reason) : null,
    ui.table(
      ['stage', 'outcome', 'note', 'when'],
      detail.stages,
      (stage) => [stage.stage, stage.outcome, stage.note, ui.when(stage.at)],
      'no stage ran yet',
    ),
    detail.modelCalls.length > 0
      ? ui.h(
          'details',
          { className: 'lineage' },
          ui.h('summary', {}, `model calls (${detail.modelCalls.length})`),
          ui.table(['stage', 'provider', 'model', 'tier', 'prompt', 'answer'], detail.modelCalls, (call) => [
            call.stage,
            call.provider,
            call.model,
            call.tier,
            ui.h('code', {}, String(call.promptHash).slice(0, 12)),
            call.error
              ? `error: ${call.error}`
              : ui.h(
                  'details',
                  {},
                  ui.h('summary', {}, `${call.answer?.length ?? 0} chars`),
                  ui.h('pre', {}, call.answer ?? ''),
                ),
          ]),
        )
      : null,
    run.installed
      ? ui.h(
          'p',
          {},
          `installed ${run.installed.name}@${run.installed.version} (${run.installed.state}), signed with ${run.installed.keyId}`,
        )
      : null,
  );
}

/** What the person is asked to approve: each artefact as a diff, the profile against the proposal. */
function reviewBlock(ui, detail) {
  const review = detail.review;
  if (!review || detail.run?.state !== 'waiting') return null;
  return ui.h(
    'div',
    { className: 'review' },
    ui.h('h4', {}, 'Artefacts to approve'),
    ui.h('p', { className: 'muted' }, 'review ', ui.h('code', { className: 'digest' }, review.digest)),
    review.files.map((file) =>
      ui.h('div', { className: 'artefact', dataset: { path: file.path } }, diffBlock(ui, file.diff)),
    ),
    ui.h('h4', {}, 'Profile'),
    diffBlock(ui, review.profile.diff),
  );
}

/** The buttons a card in its state takes; an amended spec where the run can take one. */
function actions(ui, card, detail, reload) {
  const said = ui.h('div', { className: 'decision muted', role: 'status' });
  const decide = (body) => (event) =>
    ui.busy(event.currentTarget, said, async () => {
      ui.fill(said, 'working… (the model and the sandbox may take a while)');
      await ui.api(`/api/proposals/${encodeURIComponent(card.id)}`, { method: 'POST', body });
      await reload();
    });
  const waiting = detail.run?.waitingFor;
  const label =
    card.state === 'open'
      ? card.kind === 'compose'
        ? 'Accept the chain'
        : card.kind === 'archive'
          ? 'Archive'
          : 'Start'
      : waiting === 'spec'
        ? 'Approve the spec'
        : waiting === 'approval'
          ? 'Approve, sign and install'
          : 'Try again';
  const approveBody =
    waiting === 'approval' && detail.review
      ? { decision: 'approve', digest: detail.review.digest }
      : { decision: 'approve' };
  const amend =
    card.state === 'waiting' && (waiting === 'spec' || waiting === 'fix') && detail.run?.spec
      ? (() => {
          const area = ui.h('textarea', { rows: 16, spellcheck: 'false', className: 'spec-edit' });
          area.value = JSON.stringify(detail.run.spec, null, 2);
          const send = (event) => {
            let spec;
            try {
              spec = JSON.parse(area.value);
            } catch {
              ui.fill(said, 'the amended spec is not JSON');
              return;
            }
            return decide({ decision: 'approve', spec })(event);
          };
          return ui.h(
            'details',
            {},
            ui.h('summary', {}, 'Amend the spec'),
            area,
            ui.h('button', { type: 'button', onclick: send }, 'Send the amended spec'),
          );
        })()
      : null;
  if (card.state !== 'open' && card.state !== 'waiting') return null;
  return ui.h(
    'div',
    {},
    amend,
    ui.h(
      'div',
      { className: 'row' },
      ui.h('button', { type: 'button', className: 'approve', onclick: decide(approveBody) }, label),
      ui.h(
        'button',
        { type: 'button', className: 'deny', onclick: decide({ decision: 'reject' }) },
        'Reject',
      ),
    ),
    said,
  );
}

/** One card, with its run and review loaded. */
async function cardView(ui, card, reload) {
  const detail = await ui.api(`/api/proposals/${encodeURIComponent(card.id)}`);
  return ui.h(
    'article',
    { className: `card proposal proposal-${card.kind}`, dataset: { id: card.id, state: card.state } },
    ui.h('h3', {}, card.title),
    ui.h(
      'p',
      { className: 'muted' },
      ui.h('span', { className: `badge kind-${String(card.kind).replace(/[^a-z]/g, '')}` }, card.kind),
      ` ${card.state} · ${card.id} · updated `,
      ui.when(card.updatedAt),
    ),
    ui.h('p', { className: 'note' }, card.note),
    ui.h(
      'details',
      {},
      ui.h('summary', {}, 'evidence'),
      ui.h('pre', {}, JSON.stringify(detail.proposal.evidence, null, 2)),
    ),
    detail.run?.waitingFor === 'spec' && detail.run.spec
      ? ui.h(
          'details',
          { open: true },
          ui.h('summary', {}, 'the spec'),
          ui.h('pre', { className: 'spec' }, JSON.stringify(detail.run.spec, null, 2)),
        )
      : null,
    runBlock(ui, detail),
    reviewBlock(ui, detail),
    actions(ui, card, detail, reload),
  );
}

/**
 * Loads the Proposals page into `where`: every card (open, under way and
 * waiting; decided ones too when `all` is ticked), each with what it waits for.
 */
export async function loadProposals(ui, where, options = {}) {
  const reload = () => loadProposals(ui, where, options);
  try {
    const { proposals } = await ui.api(`/api/proposals${options.all?.() ? '?all=true' : ''}`);
    if (proposals.length === 0)
      return ui.fill(
        where,
        ui.h('p', { className: 'muted' }, 'no proposals: Metnos files them nightly at 04:30'),
      );
    ui.fill(where, await Promise.all(proposals.map((card) => cardView(ui, card, reload))));
  } catch (error) {
    ui.fill(where, ui.errorLine(error));
  }
}
