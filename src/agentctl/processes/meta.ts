/**
 * Durable per-process metadata: `<state>/processes/<id>/meta.json`, written atomically
 * (temp file + rename) at start and at exit.
 * @module
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ProcessKindSchema, ProcessProtocolSchema, ProcessStatusSchema } from '../../protocol/index.js';

/** What survives a restart. The environment is deliberately not stored: it may hold secrets. */
export const ProcessMetaSchema = z.object({
  id: z.string(),
  kind: ProcessKindSchema,
  command: z.array(z.string()),
  cwd: z.string(),
  status: ProcessStatusSchema,
  pid: z.number().int().nullable(),
  /** Start time of `pid` from /proc/<pid>/stat (Linux), to tell the process from a reused pid. */
  proc_start: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  next_seq: z.number().int().nonnegative(),
  orphaned: z.boolean(),
  /** Absent in records of earlier versions: raw. */
  protocol: ProcessProtocolSchema.optional(),
});
export type ProcessMeta = z.infer<typeof ProcessMetaSchema>;

export const META_FILE = 'meta.json';
export const OUTPUT_FILE = 'output.jsonl';

export function processDir(stateRoot: string, id: string): string {
  return join(stateRoot, 'processes', id);
}

export function writeMeta(dir: string, meta: ProcessMeta): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `${META_FILE}.tmp`);
  writeFileSync(temp, JSON.stringify(meta), { mode: 0o600 });
  renameSync(temp, join(dir, META_FILE));
}

/** Loads every readable process record under `stateRoot`; unreadable ones are reported, not fatal. */
export function loadMetas(stateRoot: string, onBroken: (id: string, err: unknown) => void): ProcessMeta[] {
  let ids: string[];
  try {
    ids = readdirSync(join(stateRoot, 'processes'));
  } catch {
    return [];
  }
  const metas: ProcessMeta[] = [];
  for (const id of ids.sort()) {
    try {
      const raw = JSON.parse(readFileSync(join(processDir(stateRoot, id), META_FILE), 'utf8')) as unknown;
      const meta = ProcessMetaSchema.parse(raw);
      if (meta.id === id) metas.push(meta);
    } catch (err) {
      onBroken(id, err);
    }
  }
  return metas;
}
