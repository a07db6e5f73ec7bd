/**
 * The routes about the server itself: health (open to anyone, read by `berth doctor`), the
 * OpenAPI description, the launch options the dashboard offers, and the shell route's answer to
 * a request that is not a WebSocket upgrade (the upgrade itself is `shell-route.ts`).
 * @module
 */
import { generateOpenApi, type LaunchOptions } from '../../api/index.js';
import { HttpError, sendJson } from '../../shared/http/index.js';
import type { ApiHandlers } from './types.js';

interface MetaDeps {
  readonly version: string;
  /** sha256 of the config file the service runs with (null: built-in defaults); absent: not told. */
  readonly configSha256?: string | null;
  /** The dashboard cookie's name, described in the OpenAPI document. */
  readonly cookieName: string;
  /** What `GET /api/v1/launch-options` answers; absent: 501. */
  readonly launchOptions?: LaunchOptions;
}

export function metaRoutes(deps: MetaDeps): ApiHandlers<'health' | 'openapi' | 'launchOptions' | 'shell'> {
  const { version, configSha256, launchOptions } = deps;
  const openapi = generateOpenApi(version, { cookieName: deps.cookieName });
  return {
    health: ({ res }) => sendJson(res, 200, { status: 'ok', version, ...(configSha256 !== undefined ? { configSha256 } : {}) }),
    openapi: ({ res }) => sendJson(res, 200, openapi),
    launchOptions: ({ res }) => {
      if (!launchOptions) throw new HttpError('not_implemented', 'this server has no launch options (no config)');
      sendJson(res, 200, launchOptions);
    },
    shell: () => {
      throw new HttpError('bad_request', 'the shell route needs a WebSocket upgrade');
    },
  };
}
