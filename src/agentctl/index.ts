/**
 * agentctl as a library: start the daemon in process (tests, a future all-in-one local mode).
 * The executable entry point is main.ts.
 * @module
 */
