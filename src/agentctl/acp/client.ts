/**
 * agentctl as the ACP client of one agent process, over the child's stdin/stdout: initialize,
 * session/new in the workspace, turns (session/prompt) one at a time, cancel, permission requests
 * held until answered (by a person through the routes, or by the `approve` policy), fs/* inside the
 * workspace. `terminal/*` is not offered (clientCapabilities.terminal false; the requests answer
 * method-not-found). Every update, permission request and answer, turn end and failure is
 * appended to the process's EventLog as it happens.
 *
 * Ordering: the SDK dispatches each message through awaited handler chains, so a handler may run
 * after the response to a later message was already seen. Updates are therefore recorded where the
 * messages come off the wire (a pass-through on the stream, in arrival order), before the SDK sees
 * them: a turn's end, recorded when its response resolves, always follows its updates.
 * @module
 */
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import type { Logger } from 'pino';
import type { AcpEvent, AcpResume, AcpUsage, ApprovePolicy, PermissionAnswer, PermissionRequestInfo, ProcessInfo } from '../../protocol/index.js';
import { protocolError } from '../errors.js';
import type { Workspace } from '../workspace/files.js';
import type { EventLog } from './events.js';
import { readTextFile, writeTextFile } from './fs.js';
import { chooseOption, policyChoice } from './policy.js';
import { NO_USAGE, tally } from './usage.js';

type AcpInfo = NonNullable<ProcessInfo['acp']>;
type PermissionOutcome = acp.RequestPermissionResponse['outcome'];

interface AcpClientOptions {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly workspace: Workspace;
  readonly approve: ApprovePolicy;
  /** The session mode to set once the session is open (null: the agent's default). */
  readonly mode: string | null;
  readonly events: EventLog;
  readonly log: Logger;
}

/** The conversation a process continues (see resume.ts). */
export interface ResumeTarget {
  /** The earlier process. */
  readonly from: string;
  /** Its last ACP session, null when it never opened one. */
  readonly sessionId: string | null;
  /** The conversation's usage when it ended. */
  readonly usage: AcpUsage;
}

interface PendingPermission {
  readonly info: PermissionRequestInfo;
  readonly resolve: (outcome: PermissionOutcome) => void;
}

export class AcpClient {
  readonly #opts: AcpClientOptions;
  readonly #conn: acp.ClientConnection;
  readonly #pending = new Map<string, PendingPermission>();
  #ready: Promise<string> | null = null;
  #sessionId: string | null = null;
  #state: AcpInfo['state'] = 'starting';
  #turns = 0;
  /** The turn in flight (0: none). */
  #turn = 0;
  #nextRequest = 1;
  /** While session/load runs: the updates are the history the agent streams back. */
  #replaying = false;
  #usage: AcpUsage = NO_USAGE;

  constructor(options: AcpClientOptions) {
    this.#opts = options;
    const app = acp
      .client({ name: 'berth-agentctl' })
      // recorded in arrival order by #tap (see the module comment)
      .onNotification(acp.methods.client.session.update, () => undefined)
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => this.#ask(params))
      .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => ({
        content: await readTextFile(options.workspace, params.path, params.line, params.limit),
      }))
      .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
        await writeTextFile(options.workspace, params.path, params.content);
        return {};
      })
      .onRequest('*', ({ method }) => {
        throw acp.RequestError.methodNotFound(method);
      })
      .onNotification('*', ({ method }) => options.log.debug({ method }, 'ACP notification ignored'));
    const stream = acp.ndJsonStream(Writable.toWeb(options.stdin) as WritableStream<Uint8Array>, Readable.toWeb(options.stdout) as ReadableStream<Uint8Array>);
    const tap = new TransformStream<acp.AnyMessage, acp.AnyMessage>({
      transform: (message, controller) => {
        this.#tap(message);
        controller.enqueue(message);
      },
    });
    this.#conn = app.connect({ writable: stream.writable, readable: stream.readable.pipeThrough(tap) });
  }

  info(): AcpInfo {
    return { session_id: this.#sessionId, state: this.#state, turns: this.#turns, pending_permissions: this.#pending.size, next_event_seq: this.#opts.events.nextSeq, usage: this.#usage };
  }

  /**
   * Opens the ACP session (initialize, then session/new in the workspace, or session/load of
   * `resume`'s session when the agent can), then runs `prompt` as the first turn.
   */
  start(prompt: string | undefined, resume?: ResumeTarget): void {
    if (resume !== undefined) this.#usage = resume.usage;
    this.#ready = this.#open(resume);
    this.#ready.catch((err: unknown) => {
      this.#record({ type: 'error', turn: null, message: `opening the ACP session failed: ${errorText(err)}` });
      this.#state = 'closed';
    });
    if (prompt !== undefined) this.prompt(prompt);
    else void this.#ready.then(() => this.#idle(), () => undefined);
  }

  async #open(resume: ResumeTarget | undefined): Promise<string> {
    const init = await this.#conn.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: 'berth-agentctl', version: '1' },
    });
    const agent = init.agentInfo ? { name: init.agentInfo.name, version: init.agentInfo.version } : null;
    const loaded = resume === undefined ? null : await this.#load(resume, init.agentCapabilities?.loadSession === true);
    const sessionId = loaded?.loaded === true && loaded.session_id !== null ? loaded.session_id : await this.#newSession();
    // a mode that asks (rather than one where the agent decides alone) is a promise to the person: no turn without it
    if (this.#opts.mode !== null) await this.#conn.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: this.#opts.mode }).catch((err: unknown) => {
      throw new Error(`cannot set the session mode '${this.#opts.mode}': ${errorText(err)}`);
    });
    this.#sessionId = sessionId;
    this.#record({ type: 'session', session_id: sessionId, agent, ...(loaded !== null ? { resume: loaded } : {}) });
    return sessionId;
  }

  async #newSession(): Promise<string> {
    const session = await this.#conn.agent.request(acp.methods.agent.session.new, { cwd: this.#opts.workspace.declaredRoot, mcpServers: [] });
    return session.sessionId;
  }

  /** session/load of `resume`'s session when there is one and the agent can; why not, otherwise. */
  async #load(resume: ResumeTarget, canLoad: boolean): Promise<AcpResume> {
    const base = { from: resume.from, session_id: resume.sessionId, usage: resume.usage };
    if (resume.sessionId === null) return { ...base, loaded: false, reason: `process ${resume.from} never opened an ACP session` };
    if (!canLoad) return { ...base, loaded: false, reason: 'the agent cannot load sessions (its initialize offers no loadSession)' };
    this.#replaying = true;
    try {
      await this.#conn.agent.request(acp.methods.agent.session.load, { sessionId: resume.sessionId, cwd: this.#opts.workspace.declaredRoot, mcpServers: [] });
      return { ...base, loaded: true, reason: null };
    } catch (err) {
      return { ...base, loaded: false, reason: `session/load failed: ${errorText(err)}` };
    } finally {
      this.#replaying = false;
    }
  }

  #idle(): void {
    if (this.#state !== 'closed') this.#state = 'idle';
  }

  /** Starts turn `text` (the session opens first if it is not open yet); returns its number. */
  prompt(text: string): number {
    if (this.#state === 'closed') throw protocolError('conflict', 'the ACP session is closed');
    if (this.#turn !== 0) throw protocolError('conflict', `turn ${this.#turn} is still running; cancel it or wait for its end`);
    const ready = this.#ready;
    if (ready === null) throw protocolError('conflict', 'the ACP session is not started');
    const turn = ++this.#turns;
    this.#turn = turn;
    this.#state = 'prompting';
    void this.#run(ready, turn, text);
    return turn;
  }

  async #run(ready: Promise<string>, turn: number, text: string): Promise<void> {
    try {
      const sessionId = await ready;
      this.#record({ type: 'prompt', turn, text });
      const response = await this.#conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
      const usage = (response as { usage?: unknown }).usage;
      this.#record({ type: 'turn_end', turn, stop_reason: response.stopReason, usage: isRecord(usage) ? usage : null });
    } catch (err) {
      // the agent went away (stdout closed before its exit is seen): its requests are moot
      if (this.#conn.signal.aborted) this.#settleAll('exit');
      if (this.#state !== 'closed') this.#record({ type: 'error', turn, message: `turn ${turn} failed: ${errorText(err)}` });
    } finally {
      if (this.#turn === turn) this.#turn = 0;
      this.#idle();
    }
  }

  /** Cancels the turn in flight: session/cancel, and its pending permission requests answer `cancelled`. */
  async cancel(): Promise<void> {
    if (this.#turn === 0 || this.#sessionId === null) throw protocolError('conflict', 'no turn is running');
    this.#settleAll('cancel');
    await this.#conn.agent.notify(acp.methods.agent.session.cancel, { sessionId: this.#sessionId });
  }

  permissions(): PermissionRequestInfo[] {
    return [...this.#pending.values()].map((p) => p.info);
  }

  /** Answers pending request `id` (not_found when there is none). */
  answer(id: string, answer: PermissionAnswer): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) throw protocolError('not_found', `no pending permission request ${id}`);
    const options = pending.info.options.map((o) => ({ optionId: o.option_id, kind: o.kind }));
    let optionId = answer.option_id ?? null;
    if (optionId !== null && !options.some((o) => o.optionId === optionId)) throw protocolError('bad_request', `option_id: request ${id} has no option ${optionId}`);
    if (optionId === null && answer.decision !== undefined) optionId = chooseOption(options, answer.decision, answer.always ?? false);
    if (optionId === null) throw protocolError('bad_request', `request ${id} offers no option to ${answer.decision ?? 'answer'}`);
    this.#settle(id, pending, { outcome: 'selected', optionId }, 'person');
  }

  /** The agent exited: pending requests are cancelled and the connection closes. */
  close(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#settleAll('exit');
    if (this.#turn !== 0) this.#record({ type: 'error', turn: this.#turn, message: `the agent exited during turn ${this.#turn}` });
    this.#conn.close();
  }

  #ask(params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    const id = `perm-${this.#nextRequest++}`;
    const info: PermissionRequestInfo = {
      id,
      turn: this.#turn === 0 ? null : this.#turn,
      tool_call: params.toolCall as unknown as Record<string, unknown>,
      options: params.options.map((o) => ({ option_id: o.optionId, name: o.name, kind: o.kind })),
      requested_at: new Date().toISOString(),
    };
    this.#record({ type: 'permission', request: info });
    return new Promise((resolve) => {
      const pending: PendingPermission = { info, resolve: (outcome) => resolve({ outcome }) };
      this.#pending.set(id, pending);
      const auto = policyChoice(this.#opts.approve, params.toolCall.kind, params.options);
      if (auto !== null) this.#settle(id, pending, { outcome: 'selected', optionId: auto }, 'policy');
      else if (this.#state === 'closed') this.#settle(id, pending, { outcome: 'cancelled' }, 'exit');
    });
  }

  #settle(id: string, pending: PendingPermission, outcome: PermissionOutcome, by: 'person' | 'policy' | 'cancel' | 'exit'): void {
    if (!this.#pending.delete(id)) return;
    const optionId = outcome.outcome === 'selected' ? outcome.optionId : null;
    this.#record({ type: 'permission_answer', id, outcome: outcome.outcome, option_id: optionId, by });
    pending.resolve(outcome);
  }

  #settleAll(by: 'cancel' | 'exit'): void {
    for (const [id, pending] of [...this.#pending]) this.#settle(id, pending, { outcome: 'cancelled' }, by);
  }

  /** Records a `session/update` notification as it arrives (the SDK validates it afterwards). */
  #tap(message: acp.AnyMessage): void {
    if (!('method' in message) || 'id' in message || message.method !== acp.methods.client.session.update) return;
    const update = isRecord(message.params) ? message.params['update'] : undefined;
    if (!isRecord(update) || typeof update['sessionUpdate'] !== 'string') return;
    this.#record({ type: 'update', turn: this.#turn === 0 ? null : this.#turn, update, ...(this.#replaying ? { replay: true as const } : {}) });
  }

  #record(event: AcpEvent): void {
    this.#usage = tally(this.#usage, event);
    try {
      this.#opts.events.append(event);
    } catch (err) {
      this.#opts.log.error({ err, event: event.type }, 'cannot record an ACP event');
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (isRecord(err) && typeof err['message'] === 'string') return err['message'];
  return String(err);
}
