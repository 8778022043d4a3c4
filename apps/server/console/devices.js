// The console's Devices page: paired laptops, a new one-time pairing code (shown once, with the
// command the laptop runs), rename and revoke. console.js hands it its helpers, so there is one
// `h`, one `api` and one rule: every value from the API becomes a text node.

/** The form that asks the server for a code, and where the code is shown. */
function pairingForm(ui, reload) {
  const executors = ui.h('input', {
    placeholder: 'executors the device may run, e.g. photo_organize',
    value: 'photo_organize',
    maxlength: '500',
    spellcheck: 'false',
  });
  const shown = ui.h('div', { className: 'pairing', role: 'status' });
  const ask = (event) => {
    event.preventDefault();
    return ui.busy(event.submitter ?? event.target, shown, async () => {
      const names = executors.value.split(/[\s,]+/).filter(Boolean);
      const answer = await ui.api('/api/devices/pairings', { method: 'POST', body: { executors: names } });
      ui.fill(
        shown,
        ui.h(
          'p',
          {},
          'Pairing code ',
          ui.h('code', { className: 'code' }, answer.code),
          ', until ',
          ui.when(answer.expiresAt),
          ', for one device.',
        ),
        ui.h('p', { className: 'muted' }, 'On the laptop:'),
        ui.h('pre', {}, answer.command),
      );
      await reload(false);
    });
  };
  return ui.h(
    'form',
    { className: 'card row', onsubmit: ask },
    executors,
    ui.h('button', { type: 'submit' }, 'New pairing code'),
    shown,
  );
}

/** The buttons of one device: rename, revoke. */
function deviceActions(ui, device, reload) {
  if (device.state !== 'active') return '';
  const said = ui.h('span', { className: 'muted', role: 'status' });
  const revoke = (event) =>
    ui.busy(event.currentTarget, said, async () => {
      await ui.api(`/api/devices/${encodeURIComponent(device.id)}/revoke`, { method: 'POST', body: {} });
      await reload();
    });
  const rename = (event) =>
    ui.busy(event.currentTarget, said, async () => {
      const name = window.prompt('New name', device.name);
      if (!name) return;
      await ui.api(`/api/devices/${encodeURIComponent(device.id)}`, { method: 'POST', body: { name } });
      await reload();
    });
  return ui.h(
    'span',
    {},
    ui.h('button', { type: 'button', onclick: rename }, 'Rename'),
    ui.h('button', { type: 'button', className: 'deny', onclick: revoke }, 'Revoke'),
    said,
  );
}

/**
 * Loads the Devices page into `root`: the pairing form (kept across reloads,
 * so a code just shown stays on screen), then the devices and open codes.
 */
export async function loadDevices(ui, root) {
  const list = ui.h('div', {});
  const reload = async (withForm = true) => {
    const answer = await ui.api('/api/devices');
    ui.fill(
      list,
      ui.h(
        'p',
        { className: 'muted' },
        answer.channel
          ? `Laptops dial ${answer.channel}.`
          : 'The device channel is not running: set [devices] listen in metnos.toml.',
      ),
      ui.table(
        ['name', 'id', 'state', 'may run', 'platform', 'tier', 'last seen', ''],
        answer.devices,
        (device) => [
          device.name,
          ui.h('code', {}, device.id),
          device.state,
          device.executors.join(', '),
          ui.text(device.platform),
          ui.text(device.tier),
          ui.when(device.lastSeenAt),
          deviceActions(ui, device, reload),
        ],
        'no paired device yet',
      ),
      answer.pairings.length > 0
        ? ui.h(
            'p',
            { className: 'muted' },
            `${answer.pairings.length} pairing code(s) open (codes are shown once, when made).`,
          )
        : null,
    );
    if (withForm && !root.contains(list)) ui.fill(root, pairingForm(ui, reload), list);
  };
  try {
    await reload();
  } catch (error) {
    ui.fill(root, ui.errorLine(error));
  }
}
