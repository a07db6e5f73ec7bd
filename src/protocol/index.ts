/**
 * The agentctl wire protocol: schemas, types, routes and constants shared by the daemon
 * (`src/agentctl`) and the typed client (`src/client`). No Node APIs here.
 * @module
 */
export * from './constants.js';
export * from './errors.js';
export * from './control.js';
export * from './processes.js';
export * from './acp.js';
export * from './files.js';
export * from './git.js';
export * from './activity.js';
export * from './routes.js';
export * from './port-report.js';
