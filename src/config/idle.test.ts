import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config.js';
import { parseDuration } from './idle.js';
import { idlePolicy } from './profiles.js';

const resolveRaw = (raw: unknown) => resolveConfig(raw, { source: '/etc/berth.yaml', installRoot: '/opt/berth' });

describe('idle: suspend_after', () => {
  it('parses durations in ms, s, m, h and d, combined', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1500ms')).toBe(1500);
    expect(parseDuration(' 2h ')).toBe(7_200_000);
    for (const bad of ['', '30', 'm', '1.5h', '-5m', '30 m', '5w', '1h-30m']) expect(parseDuration(bad), bad).toBeNull();
  });

  it("takes a profile's idle over its executor's, and an executor's when the profile has none", () => {
    const cfg = resolveRaw({
      executors: { box: { type: 'local', idle: { suspend_after: '2h' } } },
      profiles: { quick: { executor: 'box', idle: { suspend_after: '10m' } }, plain: { executor: 'box' } },
    });
    expect(idlePolicy(cfg, 'quick')).toEqual({ suspendAfterMs: 600_000 });
    expect(idlePolicy(cfg, 'plain')).toEqual({ suspendAfterMs: 7_200_000 });
    expect(idlePolicy(cfg, 'box')).toEqual({ suspendAfterMs: 7_200_000 });
    expect(idlePolicy(cfg, 'local'), 'never suspended unless configured').toBeNull();
    expect(idlePolicy(cfg, 'nope')).toBeNull();
  });

  it('names the field of a bad duration, one out of bounds and an unknown key', () => {
    expect(() => resolveRaw({ profiles: { p: { executor: 'local', idle: { suspend_after: 'soon' } } } })).toThrow(/profiles\.p\.idle\.suspend_after: must be a duration such as 30m, 2h or 90s/);
    expect(() => resolveRaw({ executors: { box: { type: 'local', idle: { suspend_after: '500ms' } } } })).toThrow(/executors\.box\.idle\.suspend_after: must be between 1s and 24h/);
    expect(() => resolveRaw({ executors: { box: { type: 'local', idle: { suspend_after: '2d' } } } })).toThrow(/executors\.box\.idle\.suspend_after: must be between 1s and 24h/);
    expect(() => resolveRaw({ profiles: { p: { executor: 'local', idle: { after: '5m' } } } })).toThrow(/profiles\.p\.idle/);
  });
});
