/**
 * `npm run demo` as a user runs it (local executor): it must finish and show what it promises —
 * the raw demo agent answering a line, and the ACP scene: a session waiting for a person, the
 * transcript with the edit's diff, the approval, and a second turn of the same conversation.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers.js';

const ROOT = join(import.meta.dirname, '../../..');

describe('npm run demo', () => {
  it('runs to its end and shows the ACP scene with one approval', () => {
    ensureBuilt();
    const env = { ...process.env };
    delete env.BERTH_DATA_DIR;
    const run = spawnSync('bash', [join(ROOT, 'scripts/demo.sh')], { cwd: ROOT, env, encoding: 'utf8', timeout: 240_000 });
    const out = `${run.stdout}\n${run.stderr}`;
    expect(run.status, out).toBe(0);
    expect(out).toContain('agent> you said: status');
    expect(out).toMatch(/talk\s+ready\s+demo-acp\s+waits for approval \(1\)/);
    expect(out).toContain('?? permission requested (perm-1): Write PLAN.md');
    expect(out).toContain('Allowed: Write PLAN.md (request perm-1).');
    expect(out).toContain('This conversation had 1 earlier turn(s); the first was: write PLAN.md for hello.js');
    expect(out).toContain('?? PLAN.md');
  });
});
