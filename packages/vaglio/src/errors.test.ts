import { MetnosError } from '@metnos/executor-sdk';
import { describe, expect, it } from 'vitest';
import { ApprovalStoreError, VaglioSettingsError, VerdictLogError } from './errors.ts';

describe('errors', () => {
  it('are Metnos errors with a code, recognised by marker rather than by class identity', () => {
    const settings = new VaglioSettingsError({ setting: 'threshold', message: 'bad' });
    const store = new ApprovalStoreError({ message: 'corrupt', path: '/x/approvals.json' });
    const log = new VerdictLogError({ file: '/x/2026-04.jsonl', cause: new Error('EROFS') });
    expect([settings.code, store.code, log.code]).toEqual([
      'vaglio_settings',
      'approval_store',
      'vaglio_log',
    ]);
    for (const error of [settings, store, log]) expect(MetnosError.isInstance(error)).toBe(true);
    expect(VaglioSettingsError.isInstance(store)).toBe(false);
    expect(ApprovalStoreError.isInstance(log)).toBe(false);
    expect(VerdictLogError.isInstance(log)).toBe(true);
    expect(log.message).toBe('cannot append to the vaglio log /x/2026-04.jsonl');
    expect((log.cause as Error).message).toBe('EROFS');
  });

  it('recognise a copy from another instance of the package by its Symbol.for marker', () => {
    const foreign = Object.assign(new Error('bad'), {
      [Symbol.for('metnos.error')]: true,
      [Symbol.for('metnos.error.VaglioSettingsError')]: true,
    });
    expect(VaglioSettingsError.isInstance(foreign)).toBe(true);
    expect(ApprovalStoreError.isInstance(foreign)).toBe(false);
  });
});
