/**
 * Builds the session service `berth serve` exposes: the controller for the data dir, recovered
 * (running sessions reconnected, interrupted launches cleaned up) before the API opens.
 * @module
 */
import type { Logger } from 'pino';
import type { ResolvedConfig } from '../config/index.js';
import { createController, type SessionConversationService, type SessionService, type SessionWorkspaceService } from '../controller/index.js';

export async function createSessionService(opts: { dataDir: string; config: ResolvedConfig; logger: Logger }): Promise<SessionService & SessionWorkspaceService & SessionConversationService> {
  const controller = await createController({ dataDir: opts.dataDir, config: opts.config, logger: opts.logger });
  await controller.recover();
  return controller;
}
