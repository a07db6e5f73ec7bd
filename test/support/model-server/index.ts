/** The scripted model server for tests of real agents (Claude Code, Codex): see server.ts. @module */
export { startModelServer, type ModelServer, type ModelServerOptions } from './server.js';
export { DEFAULT_REPLY_TEXT, type RecordedRequest, type Reply, type Turn } from './core.js';
export { claudeWorkingDirectory, messagesToolResult } from './anthropic.js';
export { responsesToolResult } from './openai.js';
