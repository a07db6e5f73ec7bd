/**
 * Routes of an instance server (paths from src/protocol/routes.ts): health, processes (ACP ones: acp/routes.ts), files, git, activity.
 * @module
 */
import {
  GitCommitRequestSchema,
  instanceRoutes,
  LIMITS,
  SignalRequestSchema,
  StartProcessRequestSchema,
  StdinRequestSchema,
  WriteFileRequestSchema,
  type OutputPage,
} from '../protocol/index.js';
import { VERSION } from './version.js';
import { readJson, Router } from '../shared/http/index.js';
import { intParam, boolParam, requiredParam, stringParam } from './http/query.js';
import type { Route } from './http/server.js';
import { toWireChunk } from './processes/output-log.js';
import type { ProcessSupervisor } from './processes/supervisor.js';
import { deletePath, listTree, MAX_TREE_DEPTH, readFileContent, writeFileContent, type Workspace } from './workspace/files.js';
import { gitCommit, gitDiff, gitLog, gitStatus } from './workspace/git.js';
import { protocolError } from './errors.js';
import { addAcpRoutes } from './acp/routes.js';
import { addActivityRoute } from './activity/routes.js';

const P = ':id';
const GIT_LOG_MAX = 1000;

export interface InstanceContext {
  readonly id: string;
  readonly workspace: Workspace;
  readonly processes: ProcessSupervisor;
}

export function instanceRouter(ctx: InstanceContext): Router<Route> {
  const { workspace: ws, processes } = ctx;
  const r = new Router<Route>();

  r.add('GET', instanceRoutes.health, { handler: () => ({ status: 200, body: { status: 'ok', version: VERSION } }) });

  r.add('GET', instanceRoutes.processes, { handler: () => ({ status: 200, body: { processes: processes.list() } }) });
  r.add('POST', instanceRoutes.processes, {
    handler: async ({ req }) => {
      const request = await readJson(req, StartProcessRequestSchema, LIMITS.maxBodyBytes);
      const { created, info } = await processes.start(request);
      return { status: created ? 201 : 200, body: info };
    },
  });
  r.add('GET', instanceRoutes.process(P), { handler: ({ params }) => ({ status: 200, body: processes.get(params['id'] as string) }) });
  r.add('POST', instanceRoutes.processStdin(P), {
    handler: async ({ req, params }) => {
      const body = await readJson(req, StdinRequestSchema, LIMITS.maxBodyBytes);
      if (body.encoding === 'base64' && !/^[A-Za-z0-9+/]*={0,2}$/.test(body.data)) throw protocolError('bad_request', 'data: must be valid base64');
      await processes.writeStdin(params['id'] as string, Buffer.from(body.data, body.encoding), body.eof);
      return { status: 204 };
    },
  });
  r.add('POST', instanceRoutes.processSignal(P), {
    handler: async ({ req, params }) => {
      const body = await readJson(req, SignalRequestSchema, LIMITS.maxBodyBytes);
      processes.signal(params['id'] as string, body.signal);
      return { status: 204 };
    },
  });
  r.add('GET', instanceRoutes.processOutput(P), {
    handler: ({ params, query }) => {
      const from = intParam(query, 'from', 0, 0, Number.MAX_SAFE_INTEGER);
      const limit = intParam(query, 'limit', LIMITS.maxOutputPage, 1, LIMITS.maxOutputPage);
      const { info, slice } = processes.page(params['id'] as string, from, limit);
      const page: OutputPage = {
        chunks: slice.chunks.map(toWireChunk),
        next: slice.next,
        first_available: slice.firstAvailable,
        complete: info.status === 'exited' && slice.next >= info.next_seq,
      };
      return { status: 200, body: page };
    },
  });
  addAcpRoutes(r, processes);

  r.add('GET', instanceRoutes.filesTree, {
    handler: async ({ query }) => {
      const depth = intParam(query, 'depth', 1, 1, MAX_TREE_DEPTH);
      return { status: 200, body: await listTree(ws, stringParam(query, 'path') ?? '.', depth) };
    },
  });
  r.add('GET', instanceRoutes.filesContent, {
    handler: async ({ query }) => ({ status: 200, body: await readFileContent(ws, requiredParam(query, 'path')) }),
  });
  r.add('PUT', instanceRoutes.filesContent, {
    handler: async ({ req }) => ({ status: 200, body: await writeFileContent(ws, await readJson(req, WriteFileRequestSchema, LIMITS.maxBodyBytes)) }),
  });
  r.add('DELETE', instanceRoutes.filesContent, {
    handler: async ({ query }) => {
      await deletePath(ws, requiredParam(query, 'path'), boolParam(query, 'recursive'));
      return { status: 204 };
    },
  });

  r.add('GET', instanceRoutes.gitStatus, { handler: async () => ({ status: 200, body: await gitStatus(ws) }) });
  r.add('GET', instanceRoutes.gitDiff, {
    handler: async ({ query }) => ({ status: 200, body: await gitDiff(ws, stringParam(query, 'base'), stringParam(query, 'path')) }),
  });
  r.add('GET', instanceRoutes.gitLog, {
    handler: async ({ query }) => ({
      status: 200,
      body: await gitLog(ws, stringParam(query, 'ref') ?? 'HEAD', intParam(query, 'limit', 50, 1, GIT_LOG_MAX)),
    }),
  });
  r.add('POST', instanceRoutes.gitCommit, {
    handler: async ({ req }) => ({ status: 201, body: await gitCommit(ws, await readJson(req, GitCommitRequestSchema, LIMITS.maxBodyBytes)) }),
  });
  addActivityRoute(r, processes);
  return r;
}
