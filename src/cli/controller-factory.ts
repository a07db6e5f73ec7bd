/**
 * Builds the session service `berth serve` exposes: the controller for the data dir, recovered
 * (running sessions reconnected, interrupted launches cleaned up) before the API opens.
 * @module
 */
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../config/index.js';
import { createController, type SessionConversationService, type SessionService, type SessionWorkspaceService } from '../controller/index.js';

interface SessionServiceOptions {
  dataDir: string;
  config: ResolvedConfig;
  logger: Logger;
  /** The leader's claim on the store (serve --lease). */
  fence?: { holder: string; generation: number };
  /** Times each store call (the store latency metric). */
  observeStore?: (op: string, seconds: number, ok: boolean, backend: string) => void;
}

export async function createSessionService(opts: SessionServiceOptions): Promise<SessionService & SessionWorkspaceService & SessionConversationService> {
  const controller = await createController({
    dataDir: opts.dataDir,
    config: opts.config,
    logger: opts.logger,
    ...(opts.fence ? { fence: opts.fence } : {}),
    ...(opts.observeStore ? { observeStore: opts.observeStore } : {}),
  });
  await controller.recover();
  return controller;
}
