// Scripted interleavings of three electors on one Lease: random (seeded, so reproducible) sequences
// of network failures, requests and responses held back and delivered late, crashes, restarts and
// graceful releases. After every step: at most one elector leads, and every new term's generation
// is above every earlier one (so the inventory's fence always moves forward).
import { describe, expect, it } from 'vitest';
import { LeaderElector } from './elector.js';
import { FakeLeaseStore } from './testing/fake-lease.js';
import type { FakeLeasePort, FakePortMode } from './testing/fake-lease.js';
import { ManualTime } from './testing/manual-clock.js';

/** mulberry32: a tiny seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Node {
  id: string;
  port: FakeLeasePort;
  elector: LeaderElector;
  running: boolean;
}

const MODES: FakePortMode[] = ['ok', 'ok', 'fail', 'hold-request', 'hold-response'];

async function runScenario(seed: number, steps: number) {
  const rand = prng(seed);
  const time = new ManualTime();
  const store = new FakeLeaseStore();
  const terms: { id: string; generation: number; at: number }[] = [];
  const violations: string[] = [];
  const nodes: Node[] = ['a', 'b', 'c'].map((id, i) => {
    const port = store.port(id);
    const elector = new LeaderElector({
      port,
      identity: id,
      leaseName: 'l',
      namespace: 'n',
      clock: time.clock((i - 1) * 7_200_000),
      random: rand,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      onStartedLeading: ({ generation }) => {
        const previous = terms.at(-1);
        if (previous && generation <= previous.generation) violations.push(`${id} started generation ${generation} after ${previous.id}'s ${previous.generation}`);
        terms.push({ id, generation, at: time.now });
      },
    });
    return { id, port, elector, running: false };
  });
  const check = (): void => {
    const leaders = nodes.filter((n) => n.elector.isLeader).map((n) => n.id);
    if (leaders.length > 1) violations.push(`at ${time.now}: ${leaders.join(', ')} all lead`);
  };
  time.onStep = check;
  for (const n of nodes) {
    n.elector.start();
    n.running = true;
  }
  for (let step = 0; step < steps && violations.length === 0; step++) {
    const node = nodes[Math.floor(rand() * nodes.length)]!;
    const action = rand();
    if (action < 0.5) {
      await time.advance(Math.floor(rand() * 4_000));
    } else if (action < 0.8) {
      const mode = MODES[Math.floor(rand() * MODES.length)]!;
      if (mode === 'ok') node.port.resume();
      else node.port.mode = mode;
    } else if (action < 0.88 && node.running) {
      node.port.resume();
      await node.elector.stop();
      node.running = false;
    } else if (action < 0.94 && node.running) {
      node.port.resume();
      await node.elector.release();
      node.running = false;
    } else if (!node.running) {
      node.elector.start();
      node.running = true;
    }
    check();
  }
  // Heal everything: someone must lead again.
  for (const n of nodes) {
    n.port.resume();
    if (!n.running) n.elector.start();
  }
  await time.until(() => nodes.some((n) => n.elector.isLeader), 60_000, 100);
  check();
  for (const n of nodes) await n.elector.stop();
  return { violations, terms };
}

describe('LeaderElector interleavings', () => {
  it('never lets two electors lead at once, and generations only go up (40 seeded scenarios)', async () => {
    let totalTerms = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { violations, terms } = await runScenario(seed, 250);
      expect(violations, `seed ${seed}`).toEqual([]);
      totalTerms += terms.length;
    }
    // The scenarios do exercise takeovers, not just one long term.
    expect(totalTerms).toBeGreaterThan(200);
  });
});
