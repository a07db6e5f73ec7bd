/**
 * The ACP part of an instance client: for a process agentctl drives over the Agent Client Protocol
 * (started with `protocol: 'acp'`), a new turn, cancelling the turn in flight, its recorded typed
 * events (paged by sequence number) and its pending permission requests with their answers.
 * @module
 */
import { EventPageSchema, instanceRoutes, PermissionListSchema, PromptAcceptedSchema } from '../protocol/index.js';
import type { EventPage, PermissionAnswer, PermissionRequestInfo, PromptAccepted } from '../protocol/index.js';
import type { CallOptions, HttpTransport } from './http.js';

interface EventsOptions extends CallOptions {
  /** First event sequence number. @default 0 */
  readonly from?: number;
  /** Max events (max LIMITS.maxOutputPage). @default LIMITS.maxOutputPage */
  readonly limit?: number;
  /** Long-poll: with no event from `from` yet, wait up to this many ms for one (max LIMITS.maxEventWaitMs). */
  readonly wait?: number;
}

/** The timeout of an events request besides its `wait`. */
const DEFAULT_EVENTS_TIMEOUT_MS = 10_000;

/** `InstanceClient.acp`: turns, cancel, events and permissions of ACP processes. */
export class AcpProcessClient {
  constructor(private readonly transport: HttpTransport) {}

  /** Starts a new turn with `text` (409 while a turn runs). Never retried: a second call would be a second turn. */
  prompt(processId: string, text: string, options: CallOptions = {}): Promise<PromptAccepted> {
    return this.transport.request(
      { method: 'POST', path: instanceRoutes.processPrompt(processId), body: { text }, schema: PromptAcceptedSchema, idempotent: false },
      options,
    );
  }

  /** Cancels the turn in flight (409 when none runs); a pending permission request is answered as cancelled. */
  cancel(processId: string, options: CallOptions = {}): Promise<void> {
    return this.transport.request({ method: 'POST', path: instanceRoutes.processCancel(processId), idempotent: false }, options);
  }

  /** One page of the recorded events from `from`. */
  events(processId: string, options: EventsOptions = {}): Promise<EventPage> {
    return this.transport.request(
      {
        method: 'GET',
        path: instanceRoutes.processEvents(processId),
        query: { from: options.from, limit: options.limit, wait: options.wait },
        schema: EventPageSchema,
        idempotent: true,
      },
      // the request may take `wait` longer than an ordinary one
      options.wait !== undefined && options.wait > 0 && options.timeoutMs === undefined ? { ...options, timeoutMs: DEFAULT_EVENTS_TIMEOUT_MS + options.wait } : options,
    );
  }

  /** The permission requests the agent waits on, oldest first. */
  async permissions(processId: string, options: CallOptions = {}): Promise<PermissionRequestInfo[]> {
    const list = await this.transport.request(
      { method: 'GET', path: instanceRoutes.processPermissions(processId), schema: PermissionListSchema, idempotent: true },
      options,
    );
    return list.permissions;
  }

  /** Answers permission request `requestId` (404 when it is not pending). */
  answer(processId: string, requestId: string, answer: PermissionAnswer, options: CallOptions = {}): Promise<void> {
    return this.transport.request(
      { method: 'POST', path: instanceRoutes.processPermission(processId, requestId), body: answer, idempotent: false },
      options,
    );
  }
}
