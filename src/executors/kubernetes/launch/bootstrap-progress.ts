/**
 * What the `bootstrap` stage is doing and for how long, and its deadlines: the upload until the
 * start marker, then prepare.sh's steps (the clone, the setup script) as its step lines say. Each
 * step runs under its own budget (`timeouts.upload_seconds`, `clone_seconds`,
 * `setup_script_seconds`); a step that outlives it ends the launch naming the step, and the exec is
 * aborted. The current step is reported as the stage's waiting reason when it starts and again
 * every few seconds with the time so far. No I/O: the caller feeds the exec's stdout.
 * @module
 */
import { LaunchError } from '../../launch-kit/index.js';
import { STAGE } from '../constants.js';
import { AGENTCTL_STARTING_LINE, PREPARE_STEP_PREFIX } from '../compose/index.js';
import type { WaitBudgets } from '../types.js';

type BootstrapStep = 'upload' | 'prepare' | 'clone' | 'setup_script';

interface StepInfo {
  budget: keyof WaitBudgets;
  /** The waiting reason (machine-readable). */
  reason: string;
  /** What it is doing, for the waiting message. */
  doing: string;
  /** What did not finish, for the timeout. */
  what: string;
}

const BOOTSTRAP_STEPS: Readonly<Record<BootstrapStep, StepInfo>> = {
  upload: { budget: 'uploadSeconds', reason: 'Uploading', doing: 'uploading agentctl and the bootstrap files', what: 'the upload' },
  // between the marker and the clone: prepare.sh checks the workspace (a kept checkout: no clone)
  prepare: { budget: 'cloneSeconds', reason: 'Preparing', doing: 'preparing the workspace', what: 'preparing the workspace' },
  clone: { budget: 'cloneSeconds', reason: 'Cloning', doing: 'cloning the repository', what: 'the clone' },
  setup_script: { budget: 'setupScriptSeconds', reason: 'RunningSetupScript', doing: 'running setup_script', what: 'setup_script' },
};

/** How often the waiting reason is refreshed with the time so far. */
const PROGRESS_REFRESH_MS = 10_000;
/** The longest stdout line kept while waiting for its end (step lines are short). */
const MAX_LINE_BYTES = 1024;

interface BootstrapProgressOptions {
  budgets: Readonly<WaitBudgets>;
  /** The dotted path of `timeouts` in the config, e.g. `profiles.k8s.kubernetes.timeouts`. */
  timeoutsPath: string;
  /** Reports the stage's waiting reason. Must not throw. */
  report: (reason: string, message: string) => void;
  refreshMs?: number;
}

export class BootstrapProgress {
  /** Rejects (never resolves) with the LaunchError of the step that outlived its budget. */
  readonly expired: Promise<never>;
  readonly #abort = new AbortController();
  readonly #opts: BootstrapProgressOptions;
  #fail!: (err: LaunchError) => void;
  #step: BootstrapStep = 'upload';
  #since = 0;
  #running = false;
  #deadline: NodeJS.Timeout | null = null;
  #refresh: NodeJS.Timeout | null = null;
  #carry = '';

  constructor(opts: BootstrapProgressOptions) {
    this.#opts = opts;
    this.expired = new Promise<never>((_, reject) => {
      this.#fail = reject;
    });
    this.expired.catch(() => undefined);
  }

  /** Aborted when a step's budget runs out: the bootstrap's execs end. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get step(): BootstrapStep {
    return this.#step;
  }

  /**
   * Starts the clock of the current step (lines seen before, e.g. of an exec started while the Pod
   * came up, already moved it on).
   */
  start(): void {
    if (this.#running || this.#abort.signal.aborted) return;
    this.#running = true;
    this.#enter(this.#step);
    this.#refresh = setInterval(() => this.#report(), this.#opts.refreshMs ?? PROGRESS_REFRESH_MS);
    this.#refresh.unref();
  }

  /** Stops every timer (the bootstrap ended, either way). Idempotent. */
  stop(): void {
    this.#running = false;
    if (this.#deadline !== null) clearTimeout(this.#deadline);
    if (this.#refresh !== null) clearInterval(this.#refresh);
    this.#deadline = null;
    this.#refresh = null;
  }

  /** A stdout listener for the bootstrap's execs. */
  readonly onStdout = (chunk: Uint8Array): void => {
    const text = this.#carry + Buffer.from(chunk).toString('utf8');
    const lines = text.split('\n');
    this.#carry = (lines.pop() ?? '').slice(-MAX_LINE_BYTES);
    for (const line of lines) this.onLine(line);
  };

  /** One line the exec printed. */
  onLine(line: string): void {
    if (line === AGENTCTL_STARTING_LINE) {
      if (this.#step === 'upload') this.#enter('prepare');
      return;
    }
    if (!line.startsWith(PREPARE_STEP_PREFIX)) return;
    const name = line.slice(PREPARE_STEP_PREFIX.length);
    if (name === 'clone' || name === 'setup_script') this.#enter(name);
  }

  #enter(step: BootstrapStep): void {
    if (this.#abort.signal.aborted) return;
    if (step !== this.#step || this.#since === 0) this.#since = Date.now();
    this.#step = step;
    if (!this.#running) return;
    if (this.#deadline !== null) clearTimeout(this.#deadline);
    const info = BOOTSTRAP_STEPS[step];
    const seconds = this.#opts.budgets[info.budget];
    this.#deadline = setTimeout(() => this.#expire(step, seconds), seconds * 1000);
    this.#deadline.unref();
    this.#report();
  }

  #report(): void {
    if (!this.#running) return;
    const info = BOOTSTRAP_STEPS[this.#step];
    const elapsed = Math.floor((Date.now() - this.#since) / 1000);
    try {
      this.#opts.report(info.reason, `${info.doing} (${elapsed} s so far)`);
    } catch {
      // a listener's bug must not fail the launch
    }
  }

  #expire(step: BootstrapStep, seconds: number): void {
    const info = BOOTSTRAP_STEPS[step];
    const key = info.budget.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    this.stop();
    // rejected before the abort: whoever races `expired` sees this error, not the aborted exec's
    this.#fail(new LaunchError(STAGE.bootstrap, 'TimedOut', `${info.what} did not finish within ${seconds} s (${this.#opts.timeoutsPath}.${key})`));
    this.#abort.abort();
  }
}
