/**
 * `GET …/activity?window_ms=N`: whether the instance's session is idle by the agent's real state
 * (not by API silence), and what keeps it busy. The controller polls this to decide suspension.
 * @module
 */
import { z } from 'zod';

/** Bounds of `window_ms` (ms): at least 1 ms, at most a day; 5 minutes when absent. */
export const ACTIVITY_WINDOW = { defaultMs: 5 * 60_000, minMs: 1, maxMs: 24 * 60 * 60_000 } as const;

/**
 * What keeps a session busy:
 * - `turn`: an ACP turn in flight, or an ACP event (turn end, permission answer, …) within the window;
 * - `permission`: an ACP permission request waiting for an answer;
 * - `child-process`: a process the agent started is alive (or was seen alive within the window);
 * - `shell`, `exec`: an interactive shell or a command run in the workspace is open (or ended within the window);
 * - `output`: a raw agent wrote output within the window;
 * - `input`: stdin was written to a process within the window;
 * - `agent`: the agent started or exited within the window.
 */
const ActivityKindSchema = z.enum(['turn', 'permission', 'child-process', 'shell', 'exec', 'output', 'input', 'agent']);
export type ActivityKind = z.infer<typeof ActivityKindSchema>;

export const ActivityReportSchema = z.object({
  /** True when nothing is busy: nothing runs now and nothing happened within the window. */
  idle: z.boolean(),
  /** When idle: when the last activity ended (ISO; null when the instance never had any). */
  idle_since: z.string().nullable(),
  /** The window the report was assessed with. */
  window_ms: z.number().int().positive(),
  /** When the report was assessed (agentctl's clock, ISO). */
  at: z.string(),
  /** Everything that keeps the session busy, with a human-readable detail (e.g. `sleep 1200 (pid 123)`). */
  busy: z.array(z.object({ kind: ActivityKindSchema, detail: z.string() })),
});
export type ActivityReport = z.infer<typeof ActivityReportSchema>;
