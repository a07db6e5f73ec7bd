/**
 * Test-only hooks of the controller. `BERTH_TEST_CRASH_AT=<checkpoint>` (honoured only with
 * `BERTH_TEST_HOOKS=1`) exits the process right after that checkpoint is durably written, so tests
 * can kill the controller at every step of a launch; `BERTH_TEST_CRASH_AT=before:<checkpoint>` exits
 * right before that checkpoint is written (after the side effect it records, e.g. a committed create).
 * @module
 */

/** Every checkpoint a launch passes, in order (executor checkpoints are the local executor's). */
export const LAUNCH_CHECKPOINTS = [
  'session_created',
  'workspace_created',
  'agentctl_started',
  'agentctl_connected',
  'secrets_stored',
  'ready',
  'agent_started',
] as const;

export interface TestHooks {
  /** Exit the process (code 137) right after this checkpoint is written. */
  crashAt?: string;
  /** Called after every checkpoint (tests record the order). */
  onCheckpoint?: (name: string, sessionId: string) => void;
}

/** Reads the hooks from an environment; ignored unless BERTH_TEST_HOOKS=1. */
export function testHooksFromEnv(env: Readonly<Record<string, string | undefined>>): TestHooks {
  if (env.BERTH_TEST_HOOKS !== '1') return {};
  const crashAt = env.BERTH_TEST_CRASH_AT?.trim();
  return crashAt ? { crashAt } : {};
}

/** Called before an executor checkpoint is written: `crashAt: 'before:<state>'` exits there. */
export function beforeCheckpoint(hooks: TestHooks, name: string): void {
  if (hooks.crashAt === `before:${name}`) process.exit(137);
}

export function reachedCheckpoint(hooks: TestHooks, name: string, sessionId: string): void {
  hooks.onCheckpoint?.(name, sessionId);
  if (hooks.crashAt === name) {
    // Deliberately abrupt: no cleanup, no flush beyond what SQLite already made durable.
    process.exit(137);
  }
}
