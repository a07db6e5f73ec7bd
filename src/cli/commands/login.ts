/**
 * `berth login URL`, `berth logout [NAME]` and `berth context [ls | use NAME]`: the named remote
 * controllers of `~/.config/berth/config.yaml` (see remote-config.ts). A token is read from stdin
 * or a prompt without echo, checked against the server, stored with mode 0600 and never printed.
 * @module
 */
import { resolve } from 'node:path';
import { write } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { formatData, formatTable } from '../output.js';
import { remoteClient } from '../remote-client.js';
import {
  checkContextName,
  defaultContextName,
  LOCAL_CONTEXT,
  loadRemoteConfig,
  normalizeServerUrl,
  remoteConfigPath,
  resolveTarget,
  saveRemoteConfig,
} from '../remote-config.js';
import { ContextNotFoundError, describeRemoteError } from '../remote-errors.js';
import type { CliContext, CliIo, ParsedCommand } from '../types.js';

export async function login(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const server = normalizeServerUrl(cmd.positionals[0] ?? '');
  const name = typeof cmd.values.name === 'string' ? cmd.values.name : defaultContextName(server);
  checkContextName(name);
  const ca = typeof cmd.values.ca === 'string' ? resolve(process.cwd(), cmd.values.ca) : undefined;
  const token = cmd.values['token-stdin'] === true ? await readAll(ctx.io.stdin) : await promptHidden(ctx.io, `API token for ${server}: `);
  if (token === '') throw new UsageError('login: the token is empty', 'login');
  if (/\s/.test(token)) throw new UsageError('login: the token must be one word (no spaces or line breaks)', 'login');
  // Checked before it is stored: the URL answers, TLS verifies and the token is accepted.
  try {
    await remoteClient(server, token, ca).list();
  } catch (err) {
    if ((err as { status?: number }).status === 401) {
      await write(ctx.io.stderr, `berth: ${server} refused the token; nothing was stored\n  hint: the token is in the controller's data dir, <data-dir>/state/api-token (berth serve writes a new one each time it starts)\n`);
      return ExitCode.error;
    }
    const report = describeRemoteError(err as Error, server, typeof cmd.values.name === 'string' ? name : null);
    if (report === null) throw err;
    await write(ctx.io.stderr, `berth: ${report.message}; nothing was stored\n${report.hint ? `  hint: ${report.hint}\n` : ''}`);
    return report.code;
  }
  const file = remoteConfigPath(ctx.env);
  const cfg = loadRemoteConfig(file);
  cfg.contexts[name] = { server, token, ...(ca !== undefined ? { ca } : {}) };
  cfg.current = name;
  saveRemoteConfig(file, cfg);
  await write(ctx.io.stdout, `logged in to ${server} as context ${name} (now current; stored in ${file})\n`);
  return ExitCode.ok;
}

export async function logout(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const file = remoteConfigPath(ctx.env);
  const cfg = loadRemoteConfig(file);
  const name = cmd.positionals[0] ?? cfg.current;
  if (name === undefined) throw new UsageError('logout: no current context; name one (berth context ls)', 'logout');
  if (!(name in cfg.contexts)) throw new ContextNotFoundError(name, Object.keys(cfg.contexts));
  delete cfg.contexts[name];
  const wasCurrent = cfg.current === name;
  if (wasCurrent) delete cfg.current;
  saveRemoteConfig(file, cfg);
  await write(ctx.io.stdout, `logged out of ${name} (its token is removed)${wasCurrent ? '; berth now uses the local data dir' : ''}\n`);
  return ExitCode.ok;
}

export async function context(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const [action, name] = cmd.positionals;
  const file = remoteConfigPath(ctx.env);
  const cfg = loadRemoteConfig(file);
  if (action === 'ls') {
    const rows = Object.entries(cfg.contexts).map(([n, c]) => ({ name: n, server: c.server, ...(c.ca !== undefined ? { ca: c.ca } : {}), current: n === cfg.current }));
    if (ctx.output === 'json' || ctx.output === 'yaml') await write(ctx.io.stdout, formatData({ contexts: rows }, ctx.output));
    else await write(ctx.io.stdout, formatTable(['CURRENT', 'NAME', 'SERVER', 'CA'], rows.map((r) => [r.current ? '*' : '', r.name, r.server, r.ca ?? '-'])));
    return ExitCode.ok;
  }
  if (action === 'use') {
    if (name === undefined) throw new UsageError(`context use: missing NAME (a context, or ${LOCAL_CONTEXT} for the local data dir)`, 'context');
    if (name === LOCAL_CONTEXT) delete cfg.current;
    else if (!(name in cfg.contexts)) throw new ContextNotFoundError(name, Object.keys(cfg.contexts));
    else cfg.current = name;
    saveRemoteConfig(file, cfg);
    await write(ctx.io.stdout, name === LOCAL_CONTEXT ? 'berth now uses the local data dir\n' : `berth now uses ${name} (${cfg.contexts[name]?.server ?? ''})\n`);
    return ExitCode.ok;
  }
  if (action !== undefined) throw new UsageError(`context: unknown action '${action}' (ls, use NAME)`, 'context');
  if (name !== undefined) throw new UsageError(`context: unexpected argument '${name}'`, 'context');
  const target = resolveTarget({ server: ctx.serverFlag, dataDir: ctx.dataDirFlag }, ctx.env, () => cfg);
  const line =
    target.kind === 'local'
      ? `local data dir ${ctx.dataDir}`
      : `${target.server}${target.context !== null ? ` (context ${target.context})` : ' (no stored token: berth login URL)'}${target.source === 'context' ? '' : target.source === 'flag' ? ', from --server' : ', from $BERTH_SERVER'}`;
  if (ctx.output === 'json' || ctx.output === 'yaml') {
    const data = target.kind === 'local' ? { kind: 'local', dataDir: ctx.dataDir } : { kind: 'remote', server: target.server, context: target.context, source: target.source };
    await write(ctx.io.stdout, formatData(data, ctx.output));
  } else await write(ctx.io.stdout, `${line}\n`);
  return ExitCode.ok;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
  return text.trim();
}

/** Reads one line from the terminal without echoing it (Ctrl-C aborts). */
async function promptHidden(io: CliIo, prompt: string): Promise<string> {
  const { stdin } = io;
  if (stdin.isTTY !== true || typeof stdin.setRawMode !== 'function') {
    throw new UsageError('login: stdin is not a terminal to prompt on; pipe the token with --token-stdin', 'login');
  }
  await write(io.stderr, prompt);
  stdin.setRawMode(true);
  stdin.resume();
  try {
    return await new Promise<string>((resolveLine, reject) => {
      let line = '';
      const onData = (chunk: Buffer | string): void => {
        for (const ch of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n' || ch === '\u0004') {
            stdin.off('data', onData);
            resolveLine(line.trim());
            return;
          }
          if (ch === '\u0003') {
            stdin.off('data', onData);
            reject(Object.assign(new Error('interrupted'), { name: 'AbortError' }));
            return;
          }
          if (ch === '\u007f' || ch === '\b') line = line.slice(0, -1);
          else line += ch;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    await write(io.stderr, '\n');
  }
}
