import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../config/index.js';
import { checkAgents } from './doctor-agents.js';

const home = mkdtempSync(join(tmpdir(), 'berth-doctor-agents-'));
const bin = join(home, 'bin');
mkdirSync(bin);
writeFileSync(join(bin, 'claude-agent-acp'), '#!/bin/sh\n');
chmodSync(join(bin, 'claude-agent-acp'), 0o755);
const config = (raw: object) => resolveConfig(raw, { source: null, installRoot: '/opt/berth' });
const check = (raw: object, env: NodeJS.ProcessEnv, agent: string) => checkAgents(config(raw), { PATH: bin, HOME: home, ...env }).find((c) => c.name === `agent ${agent}`);

describe('berth doctor: agents', () => {
  it('passes a preset found on PATH with an approved, set key', () => {
    expect(check({ executors: { local: { type: 'local', secret_env: ['ANTHROPIC_API_KEY'] } } }, { ANTHROPIC_API_KEY: 'k' }, 'claude')).toMatchObject({
      ok: true,
      detail: `${join(bin, 'claude-agent-acp')}; credentials: ANTHROPIC_API_KEY (approved for local and set in this environment; berth serve must have it too)`,
    });
    expect(check({ executors: { local: { type: 'local', secret_env: ['ANTHROPIC_API_KEY'] } } }, { ANTHROPIC_API_KEY: 'k' }, 'claude')?.warn).toBeUndefined();
  });

  it('warns, naming the fix, when a key is set but not approved, and accepts a login file instead', () => {
    const warned = check({}, { ANTHROPIC_API_KEY: 'k' }, 'claude');
    expect(warned).toMatchObject({ ok: true, warn: true, detail: expect.stringContaining('credentials: none for launches on local') });
    expect(warned?.fix).toContain('list it in executors.local.secret_env');
    mkdirSync(join(home, '.claude'), { recursive: true });
    writeFileSync(join(home, '.claude', '.credentials.json'), '{}');
    expect(check({}, {}, 'claude')).toMatchObject({ ok: true, detail: expect.stringContaining('the login in ~/.claude/.credentials.json') });
  });

  it('only warns about a preset not installed, but fails the default agent or a configured one that is missing', () => {
    expect(check({}, {}, 'codex')).toMatchObject({ ok: true, warn: true, detail: expect.stringContaining("'codex-acp' is not on PATH") });
    expect(check({ defaults: { agent: 'codex' } }, {}, 'codex')).toMatchObject({ ok: false });
    expect(check({ agents: { mine: { command: ['nowhere-agent'] } } }, {}, 'mine')).toMatchObject({ ok: false, fix: expect.stringContaining('agents.mine.command') });
  });
});
