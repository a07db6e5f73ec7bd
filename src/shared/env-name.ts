/**
 * What a valid environment variable name is, written once: the config file, the API's wire
 * schemas, the controller's launch checks and agentctl's `AGENTCTL_PASS_ENV` all use it.
 * Pure (browser-safe).
 * @module
 */

/** A portable environment variable name: letters, digits and `_`, not starting with a digit. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
