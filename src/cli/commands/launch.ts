/**
 * `berth launch` and `berth resume`: start the session, then follow its stages until it is ready
 * or has failed.
 * @module
 */
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { BerthClient, LaunchRequest, SessionView } from '../../api/index.js';
import { write } from '../context.js';
import { parseEnvPairs, parseEnvNames } from '../env-flags.js';
import { dataDirArgs, ExitCode, lostDuring, UsageError } from '../exit-codes.js';
import { formatData, formatDuration, stagesTotalMs } from '../output.js';
import { LaunchProgress, type LaunchOutcome } from '../progress.js';
import type { CliContext, ParsedCommand } from '../types.js';
import { awaitAcpOpen, describeOpen } from './acp-open.js';

/** A `--repo` value: URLs (scheme:// or scp-like git@host:path) pass through; anything else is a local path. */
export function repositoryFrom(repo: string, branch: string | undefined, cwd: string): LaunchRequest['repository'] {
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[\w.-]+@[\w.-]+:/.test(repo);
  const ref: LaunchRequest['repository'] = isUrl ? { url: repo } : { path: resolve(cwd, repo) };
  if (branch) ref.branch = branch;
  return ref;
}

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const v = cmd.values;
  const repo = v.repo as string | undefined;
  if (repo === '') throw new UsageError('launch: --repo needs a URL or a path', 'launch');
  if (repo === undefined && v.branch !== undefined) throw new UsageError('launch: --branch needs --repo', 'launch');
  // Without --repo the controller decides: a Kubernetes session starts in an empty workspace, a local one needs a repository.
  const repository = repo === undefined ? undefined : repositoryFrom(repo, v.branch as string | undefined, process.cwd());
  if (repository?.path !== undefined && !existsSync(repository.path)) {
    throw new UsageError(`launch: --repo ${repo}: no such directory (give a clone URL or an existing path)`, 'launch');
  }
  const env = parseEnvPairs(v.env as string[] | undefined, '--env', 'launch');
  const req: LaunchRequest = repository ? { repository } : {};
  if (typeof v.agent === 'string') req.agent = v.agent;
  if (typeof v.executor === 'string') req.executor = v.executor;
  if (typeof v.name === 'string') req.name = v.name;
  if (typeof v.prompt === 'string' && typeof v['prompt-file'] === 'string') throw new UsageError('launch: give --prompt or --prompt-file, not both', 'launch');
  if (typeof v.prompt === 'string') req.prompt = v.prompt;
  if (typeof v['prompt-file'] === 'string') req.prompt = await readPromptFile(ctx, v['prompt-file']);
  if (Object.keys(env).length > 0) req.env = env;
  const secretEnv = parseEnvNames(v['secret-env'] as string[] | undefined, '--secret-env', 'launch');
  if (secretEnv.length > 0) req.secretEnv = secretEnv;

  const client = ctx.client();
  const view = await client.launch(req);
  return follow(ctx, client, view, 'launch', v.detach === true);
}

/** The text of --prompt-file (`-`: stdin); UsageError naming the file when it cannot be read. */
async function readPromptFile(ctx: CliContext, file: string): Promise<string> {
  if (file === '-') {
    let text = '';
    for await (const chunk of ctx.io.stdin) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    return text;
  }
  try {
    return await readFile(resolve(process.cwd(), file), 'utf8');
  } catch (err) {
    throw new UsageError(`launch: --prompt-file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'launch');
  }
}

export async function resume(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const client = ctx.client();
  const id = cmd.positionals[0] ?? '';
  const view = await client.resume(id);
  return follow(ctx, client, view, 'resume', cmd.values.detach === true);
}

async function follow(ctx: CliContext, client: BerthClient, view: SessionView, verb: 'launch' | 'resume', detach: boolean): Promise<number> {
  const structured = ctx.output === 'json' || ctx.output === 'yaml' ? ctx.output : null;
  const id = view.id;
  if (detach) {
    if (structured) await write(ctx.io.stdout, formatData(view, structured));
    else {
      await write(ctx.io.stdout, `${id}\n`);
      ctx.io.stderr.write(`${verb === 'launch' ? 'Launching' : 'Resuming'} in the background; follow it with: berth status ${id}\n`);
    }
    return ExitCode.ok;
  }
  const status = new StatusLine(structured ? ctx.io.stderr : ctx.io.stdout);
  const line = (text: string): void => status.line(text);
  line(`${verb === 'launch' ? 'Launching' : 'Resuming'} session ${id} (agent ${view.agent}, executor ${view.executor})`);
  const started = Date.now();
  let outcome = await followStages(ctx, client, id, verb, status);
  if (ctx.interrupted.aborted) {
    line(`Stopped following; the ${verb} continues in the background: berth status ${id}`);
    return 130;
  }
  const final = await client.get(id);
  outcome ??= LaunchProgress.outcomeOf(final);
  if (structured) await write(ctx.io.stdout, formatData(final, structured));
  if (outcome?.kind === 'ready') return reportReady(ctx, client, final, started, line, verb);
  const stage = outcome?.kind === 'failed' && outcome.stage ? ` at stage ${outcome.stage}` : '';
  const message = outcome?.kind === 'failed' ? outcome.message : `the session is ${final.state}`;
  ctx.io.stderr.write(`berth: ${verb} of session ${id} failed${stage}: ${message}\n`);
  ctx.io.stderr.write(`  next: berth status ${id} (details), berth resume ${id} (retry), berth rm ${id} (clean up)\n`);
  return ExitCode.error;
}

/** Lines of output; on a terminal, the stage in progress is shown on a status line rewritten in place. */
class StatusLine {
  private shown = false;
  readonly live: boolean;
  constructor(private readonly out: CliContext['io']['stdout']) {
    this.live = out.isTTY === true;
  }
  clear(): void {
    if (this.shown) this.out.write('\r\x1b[K');
    this.shown = false;
  }
  line(text: string): void {
    this.clear();
    this.out.write(`${text}\n`);
  }
  show(progress: LaunchProgress): void {
    const cur = progress.current;
    this.clear();
    if (!this.live || !cur) return;
    this.out.write(`  ⋯ ${cur.name}  ${cur.detail} ${formatDuration(Math.max(0, Date.now() - cur.startedAt))}`);
    this.shown = true;
  }
}

/** Follows the session's events until the launch is ready or failed (undefined: the stream ended or the user interrupted). */
async function followStages(ctx: CliContext, client: BerthClient, id: string, verb: 'launch' | 'resume', status: StatusLine): Promise<LaunchOutcome | undefined> {
  const progress = new LaunchProgress((text) => status.line(text));
  const ticker = status.live ? setInterval(() => status.show(progress), 250) : undefined;
  const abort = new AbortController();
  const onInterrupt = (): void => abort.abort();
  ctx.interrupted.addEventListener('abort', onInterrupt, { once: true });
  try {
    for await (const e of client.events(id, { signal: abort.signal })) {
      const outcome = progress.onEvent(e);
      if (outcome) return outcome;
      status.show(progress);
    }
    return undefined;
  } catch (err) {
    throw lostDuring(err, `the ${verb} goes on, or is rolled back, when berth serve runs again; check with: berth ${dataDirArgs(ctx.dataDirFlag)}status ${id}`);
  } finally {
    clearInterval(ticker);
    status.clear();
    abort.abort();
    ctx.interrupted.removeEventListener('abort', onInterrupt);
  }
}

/** A ready session: says so (with its total time and how to get in), unless its agent exited at once. */
async function reportReady(ctx: CliContext, client: BerthClient, final: SessionView, started: number, line: (text: string) => void, verb: 'launch' | 'resume'): Promise<number> {
  const id = final.id;
  const exited = await watchAgentStart(client, id, ctx.interrupted);
  if (exited && exited.exitCode !== 0) {
    const how = exited.exitCode === null ? 'was killed by a signal (or lost)' : `exited with code ${exited.exitCode}`;
    ctx.io.stderr.write(`berth: the agent of session ${id} ${how} right after it started${exited.tail.length > 0 ? '; its last output:' : ' (no output)'}\n`);
    for (const l of exited.tail) ctx.io.stderr.write(`  | ${l}\n`);
    ctx.io.stderr.write(`  next: berth logs ${id} (all output), berth resume ${id} (start it again), berth rm ${id} (clean up)\n`);
    return ExitCode.error;
  }
  // The same number `berth status` shows as Total: the sum of the stage durations.
  const total = stagesTotalMs(final.stages);
  line(`Session ${id} is ready (total ${formatDuration(total ?? Date.now() - started)}).`);
  if (exited) line(`  the agent has already finished (exit code 0): berth logs ${id}`);
  else if (final.protocol === 'acp') line(describeOpen(await awaitAcpOpen(client, id, ctx.interrupted), verb).replace('ID', id));
  line(`  get in:         berth shell ${id}`);
  line(`  follow agent:   berth logs -f ${id}`);
  line(`  run a command:  berth exec ${id} -- git status`);
  return ExitCode.ok;
}

/**
 * How long a followed launch keeps watching the agent once the session is ready: an agent that
 * exits this soon did not get going (a missing key, a bad flag), and the user should see that
 * instead of "ready". In ms.
 */
export const AGENT_WATCH_MS = 1000;

/** The agent's exit and its last output lines when it exits within AGENT_WATCH_MS; null while it runs. */
async function watchAgentStart(client: BerthClient, id: string, interrupted: AbortSignal): Promise<{ exitCode: number | null; tail: string[] } | null> {
  // A timer of our own, not AbortSignal.timeout: AbortSignal.any holds its sources weakly, and on
  // Node 20 a garbage collection (frequent under a flood of output) loses the timeout signal, so
  // the watch never ended and `berth launch` of a chatty agent hung.
  const watchWindow = new AbortController();
  const timer = setTimeout(() => watchWindow.abort(new DOMException('the watch window ended', 'TimeoutError')), AGENT_WATCH_MS);
  const watch = AbortSignal.any([interrupted, watchWindow.signal]);
  const decoder = new TextDecoder();
  let text = '';
  try {
    // Follows the output: the stream ends when the agent exits.
    for await (const chunk of client.logs(id, { follow: true, signal: watch })) {
      text = (text + decoder.decode(chunk.data, { stream: true })).slice(-TAIL_CHARS);
    }
  } catch (err) {
    // The window ended (or Ctrl-C) before the stream even started: the agent is still running.
    if (!watch.aborted) throw lostDuring(err, `check the session with: berth status ${id}`);
  } finally {
    clearTimeout(timer);
  }
  if (watch.aborted) return null;
  const agent = (await client.get(id)).agentProcess;
  if (agent?.status !== 'exited') return null;
  return { exitCode: agent.exitCode, tail: lastLines(text, TAIL_LINES) };
}

const TAIL_LINES = 10;
const TAIL_CHARS = 16 * 1024;

/** The last `n` non-empty lines of `text`, without terminal control characters. */
export function lastLines(text: string, n: number): string[] {
  return text
    // eslint-disable-next-line no-control-regex
    .replace(/\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]/g, '')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(-n);
}
