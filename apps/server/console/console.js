// The Metnos web console: one hand-written module, no build step, no dependency.
//
// Rules this file keeps:
// - every value that comes from the API becomes a text node (`textContent`, `h(…)` children),
//   never markup: nothing here turns a string into HTML (the test reads this file for such calls);
// - the bearer token lives in this tab's sessionStorage only and travels in the
//   Authorization header, never in an address, a cookie or the page.

import { loadDevices } from './devices.js';
import { loadProposals } from './proposals.js';

const TOKEN_KEY = 'metnos.token';
const VIEWS = ['chat', 'approvals', 'proposals', 'memory', 'executors', 'devices', 'schedules', 'audit'];

const $ = (id) => document.getElementById(id);

/**
 * An element with attributes and children. Strings and numbers become text
 * nodes; `on<event>` attributes take functions; `dataset` an object.
 */
function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'className') element.className = value;
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Puts `children` in place of what `element` held. */
function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/** A value shown as text: JSON for objects, '—' for nothing. */
function text(value) {
  if (value === undefined || value === null || value === '') return '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** An instant as local date and time, the ISO form in its tooltip. */
function when(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return text(iso);
  return h('time', { datetime: date.toISOString(), title: date.toISOString() }, date.toLocaleString());
}

/** A table: `columns` are headers, `row(item)` returns the cells (text or elements). */
function table(columns, items, row, empty = 'nothing here') {
  if (items.length === 0) return h('p', { className: 'muted' }, empty);
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((column) => h('th', {}, column)),
      ),
    ),
    h(
      'tbody',
      {},
      items.map((item) =>
        h(
          'tr',
          {},
          row(item).map((cell) => h('td', {}, cell)),
        ),
      ),
    ),
  );
}

function errorLine(error) {
  return h(
    'p',
    { className: 'error', role: 'alert' },
    error instanceof Error ? error.message : String(error),
  );
}

/** Runs `task` with `button` disabled; a failure is shown in `where`. */
async function busy(button, where, task) {
  button.disabled = true;
  try {
    await task();
  } catch (error) {
    if (where) fill(where, errorLine(error));
  } finally {
    button.disabled = false;
  }
}

// ---- the token and the API ----------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ? `${body.message} (${body.error ?? status})` : `the server answered ${status}`);
    this.status = status;
    this.code = body?.error;
  }
}

const token = () => sessionStorage.getItem(TOKEN_KEY);

function headers(extra = {}) {
  return { authorization: `Bearer ${token()}`, ...extra };
}

/** Calls the API with the token; a 401 forgets the token and asks for it again. */
async function api(path, { method = 'GET', body, accept } = {}) {
  const response = await fetch(path, {
    method,
    headers: headers({
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(accept ? { accept } : {}),
    }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    cache: 'no-store',
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  if (response.status === 401) {
    logout('the server refused the token: paste it again');
    throw new ApiError(401, { error: 'unauthorized', message: 'the token was refused' });
  }
  if (accept === 'text/event-stream' && response.ok) return response;
  const data = await response.json().catch(() => undefined);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/** The server-sent events of a response body, as `{ event, data }` with `data` parsed. */
async function* events(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (value) buffer += value;
    let end = buffer.search(/\r?\n\r?\n/);
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      let event = 'message';
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) {
        let parsed;
        try {
          parsed = JSON.parse(data.join('\n'));
        } catch {
          parsed = data.join('\n');
        }
        yield { event, data: parsed };
      }
      end = buffer.search(/\r?\n\r?\n/);
    }
    if (done) return;
  }
}

// ---- login and navigation ----------------------------------------------------------------

function logout(reason = '') {
  sessionStorage.removeItem(TOKEN_KEY);
  $('nav').hidden = true;
  $('logout').hidden = true;
  for (const view of VIEWS) $(`view-${view}`).hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = reason;
  $('status').textContent = '';
  $('token').focus();
}

async function login(event) {
  event.preventDefault();
  const field = $('token');
  const value = field.value.trim();
  field.value = '';
  if (!value) return;
  const response = await fetch('/api/health', {
    headers: { authorization: `Bearer ${value}` },
    cache: 'no-store',
    credentials: 'omit',
  }).catch(() => undefined);
  if (!response?.ok) {
    $('login-error').textContent = response
      ? response.status === 401
        ? 'that is not this server’s token'
        : `the server answered ${response.status}`
      : 'the server cannot be reached';
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, value);
  start();
}

function start() {
  $('login').hidden = true;
  $('nav').hidden = false;
  $('logout').hidden = false;
  $('status').textContent = 'connected';
  show();
}

const loaders = {
  chat: () => $('chat-input').focus(),
  approvals: loadApprovals,
  memory: loadMemory,
  executors: loadExecutors,
  devices: () => loadDevices({ h, fill, api, text, when, table, busy, errorLine }, $('devices-list')),
  schedules: loadSchedules,
  audit: () => undefined,
  proposals: () =>
    loadProposals({ h, fill, api, text, when, table, busy, errorLine }, $('proposals-list'), {
      all: () => $('proposals-all').checked,
    }),
};

function show() {
  if (!token()) return logout();
  const wanted = location.hash.slice(1);
  const view = VIEWS.includes(wanted) ? wanted : 'chat';
  for (const name of VIEWS) $(`view-${name}`).hidden = name !== view;
  for (const link of $('nav').querySelectorAll('a'))
    link.classList.toggle('active', link.dataset.view === view);
  Promise.resolve(loaders[view]()).catch(() => undefined);
}

// ---- chat ----------------------------------------------------------------------------------

/** A layer's name as a CSS class: letters, digits and dashes only. */
const layerClass = (layer) => `layer-${String(layer).replace(/[^a-z0-9-]/gi, '') || 'unknown'}`;

function progressLine(event, data) {
  switch (event) {
    case 'started':
      return 'started';
    case 'layer':
      return `trying ${data.layer}`;
    case 'pass':
      return `${data.layer} passed: ${data.reason}`;
    case 'step':
      return data.phase === 'started'
        ? `step ${data.number}: ${data.tool}…`
        : `step ${data.number}: ${data.tool} ${data.ok ? '✓' : `✗ ${data.errorClass ?? ''}`}`.trimEnd();
    case 'approval':
      return h(
        'span',
        {},
        `waiting for your approval: ${data.tool} (step ${data.step}) — `,
        h('a', { href: '#approvals' }, 'open approvals'),
      );
    default:
      return undefined;
  }
}

function renderAnswer(result) {
  const feedbackStatus = h('span', { className: 'feedback-status muted', role: 'status' });
  const box = h('div', { className: 'answer', dataset: { turn: result.turnId } });
  const retried = h('div', { className: 'retried' });
  const button = (label, kind, title) =>
    h(
      'button',
      {
        type: 'button',
        className: `feedback feedback-${kind}`,
        title,
        'aria-label': title,
        onclick: (event) =>
          busy(event.currentTarget, feedbackStatus, async () => {
            const outcome = await api(`/api/turns/${encodeURIComponent(result.turnId)}/feedback`, {
              method: 'POST',
              body: { kind },
            });
            const said = [`feedback “${outcome.kind}” recorded`];
            if (outcome.droppedShortcuts > 0)
              said.push(`${outcome.droppedShortcuts} remembered shortcut(s) dropped`);
            if (outcome.anti) said.push('this plan will not be used for this request again');
            fill(feedbackStatus, said.join(' · '));
            if (outcome.retried)
              fill(retried, h('p', { className: 'muted' }, 'asked again:'), renderAnswer(outcome.retried));
          }),
      },
      label,
    );
  fill(
    box,
    h(
      'div',
      { className: 'meta' },
      h(
        'span',
        { className: `badge ${layerClass(result.layer)}`, dataset: { layer: result.layer } },
        result.layer,
      ),
      ` ${result.finalKind} · ${result.modelCalls} model call${result.modelCalls === 1 ? '' : 's'} · ${result.latencyMs} ms`,
      result.termination ? ` · stopped: ${result.termination.cause}` : '',
    ),
    h('div', { className: 'message' }, result.finalMessage ?? ''),
    result.steps?.length
      ? h(
          'ol',
          { className: 'steps muted' },
          result.steps.map((step) =>
            h(
              'li',
              {},
              `${step.tool} ${step.ok ? '✓' : `✗ ${step.errorClass ?? ''}`} · ${step.durationMs} ms`,
            ),
          ),
        )
      : null,
    h(
      'div',
      { className: 'row' },
      button('✓', 'up', 'good answer'),
      button('✗', 'down', 'wrong answer'),
      button('↺', 'retry', 'ask again without memory'),
      feedbackStatus,
    ),
    retried,
  );
  return box;
}

async function sendTurn(event) {
  event.preventDefault();
  const input = $('chat-input');
  const request = input.value.trim();
  if (!request) return;
  input.value = '';
  const progress = h('ol', { className: 'progress' });
  const answer = h('div');
  const card = h(
    'article',
    { className: 'turn card' },
    h('p', { className: 'request' }, request),
    progress,
    answer,
  );
  $('turns').prepend(card);
  const submit = event.submitter ?? $('chat-form').querySelector('button');
  await busy(submit, answer, async () => {
    const response = await api('/api/turns', {
      method: 'POST',
      body: { request },
      accept: 'text/event-stream',
    });
    for await (const { event: name, data } of events(response.body)) {
      if (name === 'answer') {
        fill(answer, renderAnswer(data));
        continue;
      }
      const line = progressLine(name, data);
      if (line !== undefined) progress.append(h('li', { dataset: { event: name } }, line));
    }
  });
}

// ---- approvals -----------------------------------------------------------------------------

async function loadApprovals() {
  const where = $('approvals-list');
  try {
    const { approvals } = await api('/api/approvals');
    if (approvals.length === 0) return fill(where, h('p', { className: 'muted' }, 'nothing waits for you'));
    fill(
      where,
      approvals.map((approval) => {
        const said = h('div', { className: 'decision muted', role: 'status' });
        const decide = (decision) => (event) => {
          const buttons = event.currentTarget.parentElement;
          return busy(event.currentTarget, said, async () => {
            // the decision carries the hash of the call shown here, and holds only for that call
            const decided = await api(`/api/approvals/${encodeURIComponent(approval.id)}`, {
              method: 'POST',
              body: { decision, callHash: approval.callHash },
            });
            buttons.remove();
            // the server may run the request again once approved: its answer comes with the decision
            fill(
              said,
              decision === 'approve' ? 'approved' : 'denied',
              decided.resumed ? renderAnswer(decided.resumed) : null,
            );
          });
        };
        return h(
          'article',
          { className: 'card approval', dataset: { id: approval.id } },
          h('h3', {}, `${approval.tool}@${approval.version}`),
          h(
            'p',
            { className: 'muted' },
            `step ${text(approval.step)} of turn ${text(approval.turnId)} · `,
            approval.sideEffects ? 'has side effects' : 'no side effects',
            approval.idempotent ? ' · idempotent' : ' · not idempotent',
            ' · expires ',
            when(approval.expiresAt),
          ),
          h('pre', {}, JSON.stringify(approval.args, null, 2)),
          h('p', { className: 'muted' }, 'call hash ', h('code', {}, approval.callHash)),
          h(
            'div',
            { className: 'row' },
            h('button', { type: 'button', className: 'approve', onclick: decide('approve') }, 'Approve'),
            h('button', { type: 'button', className: 'deny', onclick: decide('deny') }, 'Deny'),
          ),
          said,
        );
      }),
    );
  } catch (error) {
    fill(where, errorLine(error));
  }
}

// ---- memory --------------------------------------------------------------------------------

const tools = (list) => list.map((tool) => `${tool.name}@${tool.version}`).join(', ');

function forgetButton(kind, id, what) {
  return h(
    'button',
    {
      type: 'button',
      className: 'forget',
      onclick: (event) => {
        if (!confirm(`Forget ${what} ${id}?`)) return;
        busy(event.currentTarget, $(`memory-${kind}`), async () => {
          await api(`/api/memory/${kind}/${encodeURIComponent(id)}`, { method: 'DELETE' });
          await loadMemory();
        });
      },
    },
    'Forget',
  );
}

async function section(id, load) {
  try {
    fill($(id), await load());
  } catch (error) {
    fill($(id), errorLine(error));
  }
}

function loadMemory() {
  return Promise.all([
    section('memory-fastpaths', async () => {
      const { entries, total } = await api('/api/memory/fastpaths');
      return [
        h('p', { className: 'muted' }, `${total} remembered`),
        table(['id', 'request', 'tools', 'uses', 'created', 'last used', ''], entries, (entry) => [
          h('code', {}, entry.id),
          entry.request,
          tools(entry.tools),
          entry.uses,
          when(entry.createdAt),
          when(entry.lastUsedAt),
          forgetButton('fastpaths', entry.id, 'remembered plan'),
        ]),
      ];
    }),
    section('memory-autopaths', async () => {
      const data = await api('/api/memory/autopaths');
      fill(
        $('memory-clusters'),
        table(['id', 'members', 'embedder', 'champions', 'created'], data.clusters, (cluster) => [
          h('code', {}, cluster.id),
          cluster.members,
          cluster.embedderId,
          cluster.champions.join(', ') || '—',
          when(cluster.createdAt),
        ]),
      );
      return table(['id', 'status', 'tools', 'uses', 'ok / failed', 'score', ''], data.autopaths, (entry) => [
        h('code', {}, entry.id),
        entry.status,
        tools(entry.tools),
        entry.uses,
        `${entry.successes} / ${entry.failures}`,
        typeof entry.score === 'number' ? entry.score.toFixed(2) : text(entry.score),
        forgetButton('autopaths', entry.id, 'autopath'),
      ]);
    }),
    section('memory-anti', async () => {
      const { entries } = await api('/api/memory/anti');
      return table(['intent', 'plan', 'failures', 'expires'], entries, (entry) => [
        h('code', {}, entry.intentHash),
        h('code', {}, entry.planHash),
        entry.failures,
        when(entry.expiresAt),
      ]);
    }),
    section('memory-gaps', async () => {
      try {
        const { entries } = await api('/api/memory/gaps');
        return table(['cause', 'example', 'count', 'first seen', 'last seen'], entries, (gap) => [
          gap.cause,
          gap.example,
          gap.count,
          when(gap.firstSeen),
          when(gap.lastSeen),
        ]);
      } catch (error) {
        if (error.status === 404) return h('p', { className: 'muted' }, 'this server keeps no gap log');
        throw error;
      }
    }),
  ]);
}

// ---- executors -----------------------------------------------------------------------------

async function loadExecutors() {
  const where = $('executors-list');
  const said = h('p', { role: 'status' });
  try {
    const { executors } = await api('/api/executors');
    const move = (action, row, version) => (event) =>
      busy(event.currentTarget, said, async () => {
        await api(`/api/executors/${encodeURIComponent(row.name)}/${action}`, {
          method: 'POST',
          body: version === undefined ? {} : { version },
        });
        await loadExecutors();
      });
    fill(
      where,
      said,
      table(
        ['name', 'version', 'state', 'default', 'side effects', 'summary', 'why', ''],
        executors,
        (row) => [
          h('strong', {}, row.name),
          row.version,
          h('span', { className: `state state-${String(row.state).replace(/[^a-z]/g, '')}` }, row.state),
          row.current ? 'yes' : '',
          row.sideEffects === null ? '—' : row.sideEffects ? 'yes' : 'no',
          text(row.summary),
          row.quarantine ? `${row.quarantine.reason}` : text(row.reason),
          h(
            'span',
            { className: 'actions', dataset: { executor: `${row.name}@${row.version}` } },
            row.state !== 'archived'
              ? h('button', { type: 'button', onclick: move('archive', row, row.version) }, 'Archive')
              : null,
            row.state === 'archived' || row.state === 'quarantined'
              ? h(
                  'button',
                  { type: 'button', onclick: move('rehabilitate', row, row.version) },
                  'Rehabilitate',
                )
              : null,
            row.state !== 'archived' && row.state !== 'quarantined' && !row.current
              ? h('button', { type: 'button', onclick: move('promote', row, row.version) }, 'Promote')
              : null,
          ),
        ],
      ),
    );
  } catch (error) {
    fill(where, errorLine(error));
  }
}

// ---- schedules -----------------------------------------------------------------------------

function targetOf(schedule) {
  const target = schedule.target;
  const to = schedule.channel ? ` → ${schedule.channel}` : '';
  if (target.kind === 'request') return `ask: ${target.text}${to}`;
  if (target.kind === 'executor') return `run ${target.executor} ${JSON.stringify(target.args ?? {})}${to}`;
  if (target.kind === 'reminder') return `remind: ${target.text}${to}`;
  return `built in: ${target.task ?? schedule.name}${to}`;
}

/** The body the form describes, or a message saying what is wrong with it. */
function scheduleBody() {
  const kind = $('schedule-kind').value;
  const what = $('schedule-target').value.trim();
  const body = { text: $('schedule-when').value.trim() };
  const zone = $('schedule-timezone').value.trim();
  if (zone) body.timezone = zone;
  // where the result goes (`telegram`, `telegram:<chat id>`); none: it is only recorded
  const channel = $('schedule-channel').value.trim();
  if (channel) body.channel = channel;
  if (kind === 'request') body.target = { kind: 'request', text: what };
  else {
    let args = {};
    const raw = $('schedule-args').value.trim();
    if (raw) {
      try {
        args = JSON.parse(raw);
      } catch {
        throw new Error('the arguments are not JSON');
      }
    }
    body.target = { kind: 'executor', executor: what, args };
  }
  return body;
}

async function checkSchedule(event) {
  event.preventDefault();
  const preview = $('schedule-preview');
  const submit = event.submitter ?? $('schedule-form').querySelector('button[type=submit]');
  await busy(submit, preview, async () => {
    const body = scheduleBody();
    const parsed = await api('/api/schedules', { method: 'POST', body });
    const create = h(
      'button',
      {
        type: 'button',
        className: 'confirm',
        onclick: (click) =>
          busy(click.currentTarget, preview, async () => {
            const made = await api('/api/schedules', { method: 'POST', body: { ...body, confirm: true } });
            fill(preview, h('p', { role: 'status' }, `created ${made.schedule.id}: ${made.description}`));
            $('schedule-form').reset();
            $('schedule-args').hidden = true;
            await loadSchedules();
          }),
      },
      'Create',
    );
    fill(
      preview,
      h(
        'div',
        { className: 'preview' },
        h(
          'p',
          {},
          'Read as ',
          h('code', { className: 'cadence' }, parsed.cadence),
          ` — ${parsed.description}`,
        ),
        h('p', { className: 'muted' }, 'next: ', when(parsed.next_fire)),
        h(
          'div',
          { className: 'row' },
          create,
          h('button', { type: 'button', onclick: () => fill(preview) }, 'Cancel'),
        ),
      ),
    );
  });
}

async function loadSchedules() {
  const where = $('schedules-list');
  const said = h('p', { role: 'status', className: 'schedule-status' });
  try {
    const { schedules } = await api('/api/schedules?all=true');
    const act = (schedule, action) => (event) =>
      busy(event.currentTarget, said, async () => {
        const answer = await api(`/api/schedules/${encodeURIComponent(schedule.id)}/${action}`, {
          method: 'POST',
        });
        await loadSchedules();
        const status = where.querySelector('.schedule-status');
        if (answer.outcome)
          fill(
            status,
            `${schedule.id} fired: ${answer.outcome.ok ? 'ok' : 'failed'} — ${answer.outcome.summary ?? answer.outcome.error ?? ''}`,
          );
        else fill(status, `${schedule.id}: ${answer.schedule.state}`);
        if (!$('schedule-history').hidden && $('schedule-history').dataset.id === schedule.id)
          await loadHistory(schedule.id);
      });
    fill(
      where,
      said,
      table(
        ['id', 'what', 'cadence', 'state', 'next', 'fired', ''],
        schedules,
        (schedule) => {
          const live = schedule.state === 'active' || schedule.state === 'paused';
          return [
            h('code', {}, schedule.id),
            targetOf(schedule),
            `${schedule.cadence} (${schedule.timezone})`,
            schedule.state,
            when(schedule.next_fire),
            schedule.fired,
            h(
              'span',
              { className: 'actions', dataset: { schedule: schedule.id } },
              schedule.state === 'active'
                ? h('button', { type: 'button', onclick: act(schedule, 'pause') }, 'Pause')
                : null,
              schedule.state === 'paused'
                ? h('button', { type: 'button', onclick: act(schedule, 'resume') }, 'Resume')
                : null,
              live && schedule.target.kind !== 'builtin'
                ? h('button', { type: 'button', onclick: act(schedule, 'cancel') }, 'Cancel')
                : null,
              schedule.state === 'active'
                ? h('button', { type: 'button', onclick: act(schedule, 'run-now') }, 'Run now')
                : null,
              h('button', { type: 'button', onclick: () => loadHistory(schedule.id) }, 'History'),
            ),
          ];
        },
        'no schedules',
      ),
    );
  } catch (error) {
    fill(where, errorLine(error));
  }
}

async function loadHistory(id) {
  const where = $('schedule-history');
  where.hidden = false;
  where.dataset.id = id;
  try {
    const { slots, runs } = await api(`/api/schedules/${encodeURIComponent(id)}/runs`);
    fill(
      where,
      h('h3', {}, `History of ${id}`),
      table(
        ['slot', 'status', 'attempts', 'summary'],
        slots.toReversed(),
        (slot) => [
          when(slot.slot_at),
          h('span', { className: `slot slot-${String(slot.status).replace(/[^a-z]/g, '')}` }, slot.status),
          slot.attempts,
          text(slot.summary ?? slot.error),
        ],
        'not fired yet',
      ),
      h(
        'details',
        {},
        h('summary', {}, `${runs.length} events`),
        table(['at', 'event', 'slot', 'detail'], runs.toReversed(), (run) => [
          when(run.at),
          run.event,
          when(run.slot_at),
          text(run.detail),
        ]),
      ),
    );
  } catch (error) {
    fill(where, errorLine(error));
  }
}

// ---- audit ---------------------------------------------------------------------------------

async function searchAudit(event) {
  event?.preventDefault();
  const where = $('audit-results');
  const params = new URLSearchParams();
  const trace = $('audit-trace').value.trim();
  const day = $('audit-day').value;
  if (trace) params.set('trace', trace);
  else if (day) params.set('day', day);
  else return fill(where, errorLine('give a day or a trace'));
  const folder = $('audit-folder').value;
  if (folder) params.set('folder', folder);
  params.set('limit', '500');
  try {
    const data = await api(`/api/audit?${params}`);
    fill(
      where,
      h(
        'p',
        { className: 'muted' },
        `${data.total} line${data.total === 1 ? '' : 's'}`,
        data.truncated ? ' (only the latest shown)' : '',
        data.unreadable ? ` · ${data.unreadable} unreadable` : '',
      ),
      table(
        ['time', 'folder', 'executor', 'caller', 'exit', 'ms', 'trace', ''],
        data.entries.toReversed(),
        (entry) => [
          when(entry.ts),
          entry.folder,
          entry.executor ? `${entry.executor}@${text(entry.version)}` : text(entry.event),
          text(entry.caller?.kind ?? entry.caller),
          text(entry.exit),
          text(entry.duration_ms),
          entry.trace_id
            ? h(
                'a',
                {
                  href: '#audit',
                  onclick: (click) => {
                    click.preventDefault();
                    $('audit-trace').value = entry.trace_id;
                    searchAudit();
                  },
                },
                text(entry.trace_id),
              )
            : '—',
          h('details', {}, h('summary', {}, 'line'), h('pre', {}, JSON.stringify(entry, null, 2))),
        ],
        'no lines',
      ),
    );
  } catch (error) {
    fill(where, errorLine(error));
  }
}

// ---- start ---------------------------------------------------------------------------------

function wire() {
  $('login-form').addEventListener('submit', login);
  $('logout').addEventListener('click', () => logout());
  $('chat-form').addEventListener('submit', sendTurn);
  $('schedule-form').addEventListener('submit', checkSchedule);
  $('schedule-kind').addEventListener('change', () => {
    $('schedule-args').hidden = $('schedule-kind').value !== 'executor';
  });
  $('audit-form').addEventListener('submit', searchAudit);
  $('audit-day').value = new Date().toISOString().slice(0, 10);
  for (const button of document.querySelectorAll('[data-refresh]'))
    button.addEventListener('click', () => loaders[button.dataset.refresh]());
  $('proposals-all').addEventListener('change', () => loaders.proposals());
  window.addEventListener('hashchange', show);
  if (token()) start();
  else logout();
}

wire();
