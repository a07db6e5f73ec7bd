/**
 * Recovery of the process records an earlier agentctl run left in the state directory.
 * @module
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { procStartTime } from '../../shared/proc.js';
import { loadMetas, OUTPUT_FILE, processDir, writeMeta, type ProcessMeta } from './meta.js';
import { OutputLog } from './output-log.js';

/**
 * Returns every readable record. Processes that were running when the earlier run died are marked
 * exited and orphaned with an unknown exit status, and their sequence counter is taken from the
 * output log (the metadata is only rewritten at exit). If such a process is still alive (same pid
 * and start time), its process group is killed: no agent keeps running unsupervised.
 */
export function recoverRecords(stateRoot: string, maxOutputBytes: number, log: Logger): ProcessMeta[] {
  const metas = loadMetas(stateRoot, (id, err) => log.warn({ process: id, err }, 'skipping unreadable process record'));
  const recovered: ProcessMeta[] = [];
  for (const meta of metas) {
    if (meta.status !== 'running') {
      recovered.push(meta);
      continue;
    }
    if (meta.pid !== null && meta.proc_start !== null && procStartTime(meta.pid) === meta.proc_start) {
      try {
        process.kill(-meta.pid, 'SIGKILL');
        log.warn({ process: meta.id, pid: meta.pid }, 'killed a process left running by an earlier agentctl');
      } catch {
        // already gone
      }
    }
    const dir = processDir(stateRoot, meta.id);
    const output = OutputLog.load(join(dir, OUTPUT_FILE), maxOutputBytes, meta.next_seq);
    const orphaned: ProcessMeta = {
      ...meta,
      status: 'exited',
      orphaned: true,
      exit_code: null,
      signal: null,
      ended_at: new Date().toISOString(),
      next_seq: output.nextSeq,
    };
    writeMeta(dir, orphaned);
    recovered.push(orphaned);
  }
  if (recovered.length > 0) log.info({ processes: recovered.length }, 'recovered process records');
  return recovered;
}
