/**
 * Berth's scripted demo agent, built into agentctl (`agentctl demo-agent`) so it runs wherever
 * agentctl runs — a local workspace, a Pod with Node, a Pod without Node (the SEA binary) — and shows
 * the main job (launch, watch, get in, stop, resume) without any API key. It reads BERTH_PROMPT,
 * looks around, writes NOTES.md, shows `git status`/`git diff`, prints a summary, then answers stdin
 * lines ("agent> …") until stdin closes or it gets SIGTERM. BERTH_DEMO_STEP_MS sets the pause between
 * steps (default 2000 ms; tests use 0).
 * @module
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function git(cwd: string, args: string[]): string {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trimEnd();
  } catch (err) {
    const e = err as { stderr?: unknown; message?: string };
    return `(git ${args[0] ?? ''} failed: ${String(e.stderr ?? e.message ?? err).trim()})`;
  }
}

export async function runDemoAgent(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const cwd = process.cwd();
  const prompt = (env.BERTH_PROMPT ?? '').trim() || 'look around and take notes';
  const stepMs = Number.parseInt(env.BERTH_DEMO_STEP_MS ?? '2000', 10);
  const pause = () => new Promise((r) => setTimeout(r, Number.isFinite(stepMs) && stepMs >= 0 ? stepMs : 2000));
  let stopping = false;
  process.on('SIGTERM', () => {
    stopping = true;
    say('agent> received SIGTERM, saving state and exiting');
    process.exit(0);
  });

  say(`agent> starting in ${cwd} (pid ${process.pid})`);
  say(`agent> task: ${prompt}`);
  await pause();

  const entries = readdirSync(cwd, { withFileTypes: true })
    .filter((e) => e.name !== '.git' && e.name !== '.agentctl' && e.name !== 'lost+found')
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort();
  say(`agent> listing files: ${entries.length} entries`);
  for (const e of entries) say(`  ${e}`);
  await pause();

  const marker = join(cwd, 'BERTH_MARKER');
  if (existsSync(marker)) say(`agent> marker: ${readFileSync(marker, 'utf8').trim()}`);
  const readme = entries.find((e) => /^readme/i.test(e));
  if (readme) {
    const first = readFileSync(join(cwd, readme), 'utf8').split('\n').find((l) => l.trim() !== '') ?? '';
    say(`agent> reading ${readme}: "${first.trim().slice(0, 80)}"`);
  }
  await pause();

  const notes = join(cwd, 'NOTES.md');
  const existed = existsSync(notes);
  const stamp = new Date().toISOString();
  const body = `${existed ? readFileSync(notes, 'utf8') : '# Notes\n'}\n## ${stamp}\n\nTask: ${prompt}\n\nFiles seen: ${entries.join(', ') || '(none)'}\n`;
  writeFileSync(notes, body);
  say(`agent> ${existed ? 'updated' : 'created'} NOTES.md`);
  await pause();

  say('agent> $ git status --short');
  say(git(cwd, ['status', '--short']) || '(clean)');
  await pause();
  say('agent> $ git diff --stat');
  say(git(cwd, ['diff', '--stat']) || '(no tracked changes; NOTES.md is new)');
  await pause();

  say(`agent> summary: looked at ${entries.length} entries, wrote NOTES.md for "${prompt}"`);
  // The words name the command that reaches this stdin (berth send), not a terminal nobody has.
  const session = process.env.BERTH_SESSION_ID ?? 'ID';
  say(`agent> ready for instructions (send one with: berth send ${session} TEXT; finish with: berth send --eof ${session})`);

  const rl = createInterface({ input: process.stdin, terminal: false });
  rl.on('line', (line) => {
    const text = line.trim();
    if (text === '') return;
    say(`agent> you said: ${text}`);
    if (text === 'status') say(git(cwd, ['status', '--short']) || '(clean)');
  });
  rl.on('close', () => {
    if (!stopping) say('agent> stdin closed, done');
    process.exit(0);
  });
}
