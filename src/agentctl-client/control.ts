/**
 * The client of agentctl's control server: health, the nonce handshake and instances.
 * @module
 */
import {
  HandshakeResponseSchema,
  HealthResponseSchema,
  InstanceInfoSchema,
  InstanceListSchema,
  HEADER,
  controlRoutes,
} from '../protocol/index.js';
import type { CreateInstanceRequest, HealthResponse, InstanceInfo } from '../protocol/index.js';
import { AgentctlReconcileError, ProtocolError, isAgentctlHttpError, mayHaveBeenApplied } from './errors.js';
import type { RequestDescription } from './errors.js';
import { HttpTransport, normalizeBaseUrl } from './http.js';
import type { CallOptions, HttpClientOptions } from './http.js';
import { InstanceClient } from './instance.js';
import type { RetryOptions } from './retry.js';
import type { WebSocketFactory } from './websocket.js';

interface ControlClientOptions extends HttpClientOptions {
  /** A token from an earlier handshake with the same agentctl process (reconnect without the nonce). */
  readonly token?: string;
  /** Passed on to instance clients. @default the `ws` package */
  readonly webSocket?: WebSocketFactory;
  /**
   * Base URL of an instance's server. Through a port-forward each instance port is forwarded on its
   * own, so the controller maps the instance to its local listener here.
   * @default the control base URL's host with the instance's port
   */
  readonly instanceBaseUrl?: (info: Pick<InstanceInfo, 'id' | 'port'>) => string;
}

/** Per-instance overrides of `ControlClient.instance`. */
interface InstanceClientOverrides {
  /** Overrides `ControlClientOptions.instanceBaseUrl` for this client. */
  readonly baseUrl?: string;
  readonly timeoutMs?: number;
  readonly retry?: RetryOptions;
}

/**
 * Typed client of agentctl's control API. After `handshake` it keeps the token and sends it on
 * every call; instance clients made by `instance()` read the current token, so a re-handshake
 * (after agentctl restarted) reaches them too.
 */
export class ControlClient {
  #token: string | undefined;
  readonly #transport: HttpTransport;
  readonly #options: ControlClientOptions;

  constructor(options: ControlClientOptions) {
    this.#options = options;
    if (options.token !== undefined) this.setToken(options.token);
    this.#transport = new HttpTransport(
      options,
      (): Record<string, string> =>
        this.#token === undefined ? {} : { [HEADER.authorization]: `Bearer ${this.#token}` },
      () => [this.#token],
    );
  }

  get baseUrl(): string {
    return this.#transport.baseUrl;
  }

  /** True once a token is known (from `handshake` or the options). */
  get hasToken(): boolean {
    return this.#token !== undefined;
  }

  /** Replaces the token (e.g. one restored from the inventory). */
  setToken(token: string): void {
    if (token === '') throw new TypeError('token must not be empty');
    this.#token = token;
  }

  /** `GET /health` (no auth). */
  health(options: CallOptions = {}): Promise<HealthResponse> {
    return this.#transport.request(
      { method: 'GET', path: controlRoutes.health, schema: HealthResponseSchema, idempotent: true },
      options,
    );
  }

  /**
   * Trades the one-shot bootstrap nonce for the token, keeps it and returns it (for the caller to
   * store). Never retried: a repeated nonce is rejected with 403. Errors never contain either value.
   */
  async handshake(nonce: string, options: CallOptions = {}): Promise<string> {
    if (nonce === '') throw new TypeError('nonce must not be empty');
    const response = await this.#transport.request(
      {
        method: 'POST',
        path: controlRoutes.handshake,
        body: { nonce },
        schema: HandshakeResponseSchema,
        idempotent: false,
        secrets: [nonce],
      },
      options,
    );
    this.#token = response.token;
    return response.token;
  }

  /**
   * Creates an instance. Never retried: when the outcome is ambiguous (timeout, reset after
   * sending, 5xx) the instance is re-read and accepted only if its workspace matches the request;
   * otherwise AgentctlReconcileError. A 404 on that read rethrows the original error.
   * A caller abort is not reconciled: the caller should `getInstance` before creating again.
   */
  async createInstance(request: CreateInstanceRequest, options: CallOptions = {}): Promise<InstanceInfo> {
    const req: RequestDescription = { method: 'POST', path: controlRoutes.instances };
    let info: InstanceInfo;
    try {
      info = await this.#transport.request(
        { method: 'POST', path: req.path, body: request, schema: InstanceInfoSchema, idempotent: false },
        options,
      );
    } catch (err) {
      if (!mayHaveBeenApplied(err)) throw err;
      return this.#reconcileCreate(req, request, err);
    }
    if (info.id !== request.id) throw new ProtocolError(req, 'instance id does not match the request');
    return info;
  }

  async #reconcileCreate(req: RequestDescription, request: CreateInstanceRequest, createError: unknown): Promise<InstanceInfo> {
    let found: InstanceInfo;
    try {
      // Detached from the caller's signal: the create may have happened, and we must find out.
      found = await this.getInstance(request.id);
    } catch (readError) {
      if (isAgentctlHttpError(readError) && readError.status === 404) throw createError;
      throw new AgentctlReconcileError(req, {
        instanceId: request.id,
        reason: 'read_failed',
        cause: createError,
        readError,
      });
    }
    if (found.id !== request.id || found.workspace_path !== request.workspace_path) {
      throw new AgentctlReconcileError(req, { instanceId: request.id, reason: 'workspace_mismatch', cause: createError });
    }
    return found;
  }

  getInstance(instanceId: string, options: CallOptions = {}): Promise<InstanceInfo> {
    return this.#transport.request(
      { method: 'GET', path: controlRoutes.instance(instanceId), schema: InstanceInfoSchema, idempotent: true },
      options,
    );
  }

  async listInstances(options: CallOptions = {}): Promise<InstanceInfo[]> {
    const list = await this.#transport.request(
      { method: 'GET', path: controlRoutes.instances, schema: InstanceListSchema, idempotent: true },
      options,
    );
    return list.instances;
  }

  /** Deletes an instance (stopping its processes). Retried; a 404 on a retry counts as deleted. */
  deleteInstance(instanceId: string, options: CallOptions = {}): Promise<void> {
    return this.#transport.request(
      {
        method: 'DELETE',
        path: controlRoutes.instance(instanceId),
        idempotent: true,
        notFoundAfterRetryIsSuccess: true,
      },
      options,
    );
  }

  /** A client of the instance's own server, sharing this client's token, fetch and WebSocket factory. */
  instance(info: Pick<InstanceInfo, 'id' | 'port'>, overrides: InstanceClientOverrides = {}): InstanceClient {
    const baseUrl = overrides.baseUrl ?? this.#options.instanceBaseUrl?.(info) ?? this.#defaultInstanceUrl(info.port);
    return new InstanceClient({
      baseUrl,
      token: () => {
        if (this.#token === undefined) throw new TypeError('no token: call handshake first');
        return this.#token;
      },
      instanceId: info.id,
      fetch: this.#options.fetch,
      webSocket: this.#options.webSocket,
      timeoutMs: overrides.timeoutMs ?? this.#options.timeoutMs,
      retry: overrides.retry ?? this.#options.retry,
    });
  }

  #defaultInstanceUrl(port: number): string {
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new TypeError(`instance port ${port} is invalid`);
    const url = new URL(normalizeBaseUrl(this.#transport.baseUrl));
    url.port = String(port);
    return url.origin;
  }
}
