/**
 * The executor contract: one set of cases every executor (local, Kubernetes) is held to, driven
 * through the `Executor` interface exactly as the manager drives it (`createInstance`,
 * `stopInstance`, `refreshInstance`, `status`, `close`) with recording stage/checkpoint/release
 * callbacks. An entry file per executor calls {@link executorContract} with a factory for its
 * subject and the cases it skips with the reason. A skip is printed and shown in the suite title,
 * and only a case backed by a capability may be skipped: in its place runs a case asserting that the
 * subject declares the capability absent (so do the cases of the optional methods, each of which
 * only an executor implementing the method runs). The cases run concurrently; the teardown destroys every
 * instance and fails the suite when any session left something behind.
 * @module
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { lifecycleCases, SKIPPABLE } from './cases-lifecycle.js';
import { OPTIONAL_CASES, optionalCases } from './cases-optional.js';
import { runningCases } from './cases-running.js';
import { CONTRACT_CASES, ContractRun, type ContractCase, type ContractFactory } from './run.js';

export type { HeldResource } from './recording.js';
export { CONTRACT_CASES, type ContractCase, type ContractFactory, type ContractSubject } from './run.js';

/** A case an executor skips, and why (printed). */
export interface ContractSkip {
  case: ContractCase;
  reason: string;
}

export function executorContract(name: string, factory: ContractFactory, skips: readonly ContractSkip[] = []): void {
  for (const s of skips) {
    if (!(s.case in CONTRACT_CASES)) throw new Error(`${name}: skip of unknown contract case '${s.case}'`);
    if (!SKIPPABLE[s.case] && !(s.case in OPTIONAL_CASES)) throw new Error(`${name}: contract case '${s.case}' cannot be skipped (it depends on no optional capability)`);
    if (s.reason.trim() === '') throw new Error(`${name}: the skip of '${s.case}' must say why`);
  }
  const skipped = new Map(skips.map((s) => [s.case, s.reason]));
  const skipNote = skips.length === 0 ? '' : ` — skips: ${skips.map((s) => `${s.case} (${s.reason})`).join('; ')}`;
  if (skips.length > 0) console.info(`executor contract ${name}${skipNote}`);

  describe.concurrent(`executor contract: ${name}${skipNote}`, () => {
    const run = new ContractRun(name);
    beforeAll(() => run.start(factory));
    afterAll(async () => {
      const problems = await run.teardown();
      if (problems.length > 0) throw new Error(`executor contract ${name}: teardown found ${problems.join('; ')}`);
    });
    runningCases(run);
    lifecycleCases(run, skipped);
    optionalCases(run, skipped);
  });
}
