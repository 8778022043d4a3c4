import { describe, expect, it } from 'vitest';
import { compareHlc, createHlc, formatHlc, type HlcTimestamp } from './hlc.ts';

/** A wall clock the test moves by hand. */
function handClock(start: number) {
  let ms = start;
  return { now: () => ms, set: (value: number) => (ms = value) };
}

const increasing = (stamps: HlcTimestamp[]) =>
  stamps.every((stamp, index) => index === 0 || compareHlc(stamp, stamps[index - 1]!) > 0);

describe('the hybrid logical clock', () => {
  it('stays monotonic when the wall clock steps back, and follows it again once it catches up', () => {
    const wall = handClock(10_000);
    const hlc = createHlc({ now: wall.now });
    const stamps = [hlc.now(), hlc.now()];
    wall.set(4_000); // NTP stepped the clock back six seconds
    stamps.push(hlc.now(), hlc.now());
    expect(stamps).toEqual([
      { ms: 10_000, c: 0 },
      { ms: 10_000, c: 1 },
      { ms: 10_000, c: 2 },
      { ms: 10_000, c: 3 },
    ]);
    wall.set(10_001);
    stamps.push(hlc.now());
    expect(stamps.at(-1)).toEqual({ ms: 10_001, c: 0 });
    expect(increasing(stamps)).toBe(true);
  });

  it('orders events of the same millisecond by the counter', () => {
    const hlc = createHlc({ now: () => 5 });
    const stamps = Array.from({ length: 100 }, () => hlc.now());
    expect(increasing(stamps)).toBe(true);
    expect(stamps.at(-1)).toEqual({ ms: 5, c: 99 });
  });

  it('receiving a stamp from ahead moves the clock past it, and later local stamps stay past it', () => {
    const wall = handClock(1_000);
    const hlc = createHlc({ now: wall.now });
    hlc.now();
    const received = hlc.receive({ ms: 9_000, c: 7 });
    expect(received).toEqual({ ms: 9_000, c: 8 });
    expect(compareHlc(hlc.now(), { ms: 9_000, c: 8 })).toBeGreaterThan(0);
    // a stamp from behind changes nothing but the counter
    expect(compareHlc(hlc.receive({ ms: 3, c: 0 }), received)).toBeGreaterThan(0);
  });

  it('formats stamps as text that sorts as the stamps do', () => {
    const a = formatHlc({ ms: Date.UTC(2026, 4, 2, 10), c: 3 });
    const b = formatHlc({ ms: Date.UTC(2026, 4, 2, 10), c: 12 });
    expect(a).toBe('2026-05-02T10:00:00.000Z/0003');
    expect(a < b).toBe(true);
  });
});
