/**
 * The session service: what the controller offers to its API server (and through it to the CLI).
 * The manager implements it; the HTTP API server in src/server is a thin shell over it. The
 * sessions' wire types (SessionView, SessionEvent, LaunchRequest …) come from src/api.
 * @module
 */
import type { FilesClient, GitClient } from '../agentctl-client/index.js';
import type { AgentEventPage, ApproveRequest, ApproveResult, EgressPage, EgressQuery, LaunchRequest, PoolRemoveResult, PoolView, SessionEvent, SessionState, SessionView } from '../api/index.js';

// The wire types are the API's (derived from its zod schemas); the controller speaks them.
export type {
  AgentEventPage,
  AgentProcessView,
  ApproveRequest,
  ApproveResult,
  LaunchRequest,
  RepositoryRef,
  SessionError,
  SessionEvent,
  SessionState,
  SessionView,
  StageRecord,
} from '../api/index.js';

/** How many waits one stage record keeps (`StageRecord.waits`). */
export const MAX_STAGE_WAITS = 40;

/** One chunk of output as the service streams it (the API sends `data` base64: OutputChunkWire). */
export interface OutputChunkView {
  seq: number;
  stream: 'stdout' | 'stderr';
  /** Raw bytes. */
  data: Uint8Array;
}

export interface ExecOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: Uint8Array | string;
  /**
   * Called with each chunk of output, in order. A returned promise is awaited before more output
   * is read (so a slow consumer slows the stream down instead of having it buffered for it).
   */
  onOutput?: (chunk: OutputChunkView) => unknown;
  signal?: AbortSignal;
}

/** Options of `SessionService.openShell`. */
export interface ShellOptions {
  /** Initial size of the PTY, in character cells. */
  rows: number;
  cols: number;
  /** TERM inside the PTY. @default 'xterm-256color' */
  term?: string;
  /** What to run under the PTY. @default the workspace user's interactive shell (`$SHELL -i`, else `/bin/sh -i`) */
  argv?: string[];
  /** Working directory, relative to the workspace. @default the workspace root */
  cwd?: string;
  env?: Record<string, string>;
  /** Detaches and ends the shell. */
  signal?: AbortSignal;
}

/**
 * An interactive program under a real PTY in the workspace, with streamed input. Iterate `output`
 * (once) to drive it: the iteration ends when the program exits, and `exit` settles then (it
 * rejects when the connection is lost or the session stops first). Breaking out of the iteration
 * early ends the program.
 */
export interface ShellSession {
  /** The PTY's output (the terminal's screen bytes; stderr only for wrapper errors). */
  readonly output: AsyncIterable<OutputChunkView>;
  /** Typed input (raw bytes, as from a terminal in raw mode; text as UTF-8). Ignored after the end. */
  write(data: Uint8Array | string): void;
  /** End of input as at a terminal: a ^D through the PTY's line discipline. */
  end(): void;
  /** Resizes the PTY (the program gets SIGWINCH); input written afterwards reaches it after the resize. */
  resize(rows: number, cols: number): void;
  /** Ends the program: the PTY hangs up (SIGHUP to the shell and its jobs). */
  close(): void;
  readonly exit: Promise<{ exitCode: number | null; signal: string | null }>;
}

export interface SessionService {
  /** Records the session and starts its launch in the background; resolves once the session exists (state `launching`). */
  launch(req: LaunchRequest): Promise<SessionView>;
  list(): Promise<SessionView[]>;
  /** Throws SessionNotFoundError. */
  get(id: string): Promise<SessionView>;
  /** Stops the agent and agentctl, keeps the workspace. Idempotent. */
  stop(id: string): Promise<SessionView>;
  /** Brings a stopped or failed session back (reconnects or restarts agentctl, restarts the agent). */
  resume(id: string): Promise<SessionView>;
  /** Destroys the workspace and forgets the session. `force` also removes a session whose cleanup fails partially. */
  remove(id: string, opts?: { force?: boolean }): Promise<void>;
  /** Runs a command in the workspace; resolves with its exit code (null if killed by a signal). */
  exec(id: string, argv: string[], opts?: ExecOptions): Promise<{ exitCode: number | null; signal: string | null }>;
  /**
   * Starts an interactive shell (or `opts.argv`) under a real PTY in the workspace; resolves once
   * it runs. Exits 125 with a message on stderr when the workspace lacks util-linux `script`.
   */
  openShell(id: string, opts: ShellOptions): Promise<ShellSession>;
  /**
   * The agent's output from `from` (a sequence number); with `follow`, keeps streaming until the agent
   * exits or `signal` aborts. `previous` reads the agent run before the current one instead (a
   * finished run: `follow` just ends after it). A stopped or failed session answers from the output
   * its last run recorded, where the executor can read it without agentctl (local).
   */
  logs(
    id: string,
    opts: { from?: number; follow?: boolean; previous?: boolean; signal?: AbortSignal },
  ): AsyncIterable<OutputChunkView>;
  /** Live events (all sessions, or one). Returns an unsubscribe function. */
  subscribe(listener: (event: SessionEvent) => void, filter?: { sessionId?: string }): () => void;
  /** Stops background work and closes connections; running workspaces keep running. */
  close(): Promise<void>;
}

/** Thrown when a session id is unknown. */
export class SessionNotFoundError extends Error {
  override readonly name = 'SessionNotFoundError';
  constructor(readonly sessionId: string) {
    super(`session not found: '${sessionId}' (list sessions with: berth ls)`);
  }
}

/** Thrown for a profile that has no warm pool (and no members left of one). */
export class PoolNotFoundError extends Error {
  override readonly name = 'PoolNotFoundError';
  constructor(readonly profile: string, pooled: readonly string[]) {
    super(`profile '${profile}' has no warm pool (${pooled.length > 0 ? `pooled: ${pooled.join(', ')}` : 'no profile has one: set profiles.<name>.pool in berth.yaml'})`);
  }
}

/** The warm pools of the Kubernetes profiles (`profiles.<name>.pool`). */
export interface SessionPoolService {
  /** Each pooled profile (and any profile that still has members) with its members. */
  pools(): Promise<PoolView[]>;
  /** Deletes the ready members of `profile`'s pool now (it refills while its size is above 0). PoolNotFoundError for none. */
  removePool(profile: string): Promise<PoolRemoveResult>;
}

/** Thrown when an operation does not fit the session's state (e.g. exec on a stopped session). */
export class SessionStateError extends Error {
  override readonly name = 'SessionStateError';
  constructor(
    readonly sessionId: string,
    readonly state: SessionState,
    action: string,
    hint: string,
    /** Replaces the generated message where a plainer one exists. */
    message?: string,
  ) {
    super(message ?? `cannot ${action} session '${sessionId}' while it is ${state}: ${hint}`);
  }
}

/**
 * Thrown for a launch request that fails validation before anything is created. `field` and the
 * message name the first problem; `problems` lists every problem found (the first one included).
 */
export class LaunchValidationError extends Error {
  override readonly name = 'LaunchValidationError';
  readonly problems: readonly { field: string; message: string }[];
  constructor(
    readonly field: string,
    detail: string,
    problems?: readonly { field: string; message: string }[],
  ) {
    super(`${field}: ${detail}`);
    this.problems = problems ?? [{ field, message: detail }];
  }
}

/**
 * Additions beyond SessionService that the controller also offers (additive: SessionService itself
 * is unchanged, so fakes of it keep compiling).
 */
export interface SessionWorkspaceService {
  /**
   * Writes to the agent's stdin (text as UTF-8); `eof` closes it. An ACP agent gets the text as a new
   * turn instead (one trailing newline dropped; `eof` refused). Throws SessionStateError unless ready.
   */
  sendInput(id: string, data: string | Uint8Array, opts?: { eof?: boolean }): Promise<void>;
  /** Files and git of a ready session's workspace (the typed agentctl clients). */
  workspace(id: string): Promise<SessionWorkspace>;
  /** Resolves once the session is no longer launching/stopping/removing (e.g. after `launch`). */
  waitUntilSettled(id: string, opts?: { signal?: AbortSignal }): Promise<SessionView>;
  /** The connections its agent made through the egress proxy: the summary and one page of records (any state; SessionNotFoundError). */
  egress(id: string, query?: EgressQuery): Promise<EgressPage>;
}

/**
 * Sessions whose agent speaks the Agent Client Protocol (`protocol: acp`): the turn in flight, the
 * permission requests that wait for a person, and the agent's typed events. Each throws
 * SessionStateError for a raw agent, a session that is not ready, or when there is nothing to act on.
 */
export interface SessionConversationService {
  /** Cancels the turn in flight (it ends as `cancelled`). */
  cancel(id: string): Promise<void>;
  /** Answers a pending permission request: `requestId`, else the oldest; allow unless `deny`. */
  approve(id: string, answer: ApproveRequest): Promise<ApproveResult>;
  /** One page of the agent's recorded events from `from`. */
  agentEvents(id: string, opts: { from?: number; limit?: number; wait?: number; signal?: AbortSignal }): Promise<AgentEventPage>;
}

export interface SessionWorkspace {
  files: FilesClient;
  git: GitClient;
}
