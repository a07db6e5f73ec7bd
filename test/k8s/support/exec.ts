import { PassThrough, Writable } from 'node:stream';
import type { Readable } from 'node:stream';
import { Exec } from '@kubernetes/client-node';
import type { KubeConfig, V1Status } from '@kubernetes/client-node';

export interface ExecOptions {
  namespace: string;
  pod: string;
  container?: string;
  command: string[];
  /** Bytes fed to the command's stdin, which is then closed. Omit for no stdin. */
  stdin?: string | Buffer;
  timeoutMs?: number;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  status: V1Status;
}

/** The exit code carried by the exec status (channel 3): 0 on Success, else the ExitCode cause. */
export function exitCodeOf(status: V1Status): number {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  if (cause?.message !== undefined && /^\d+$/.test(cause.message)) return Number(cause.message);
  throw new Error(`exec failed: ${status.reason ?? ''} ${status.message ?? JSON.stringify(status)}`);
}

class Collector extends Writable {
  private readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(Buffer.from(chunk));
    callback();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Runs a command in a pod over the exec WebSocket and collects stdout, stderr
 * and the exit code. Stdin, if given, is sent and then closed (v5.channel.k8s.io
 * close signal, so the command sees EOF while its output still flows back).
 */
export async function execInPod(kc: KubeConfig, opts: ExecOptions): Promise<ExecResult> {
  const stdout = new Collector();
  const stderr = new Collector();
  let stdin: Readable | null = null;
  if (opts.stdin !== undefined) {
    // Buffered until the socket is open and client-node starts reading it.
    const input = new PassThrough();
    input.end(Buffer.from(opts.stdin));
    stdin = input;
  }
  const timeoutMs = opts.timeoutMs ?? 60_000;
  let status: V1Status | undefined;

  const ws = await new Exec(kc).exec(
    opts.namespace,
    opts.pod,
    opts.container ?? '',
    opts.command,
    stdout,
    stderr,
    stdin,
    false,
    (s) => {
      status = s;
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.close();
      reject(new Error(`exec ${opts.command.join(' ')} in ${opts.namespace}/${opts.pod} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    if (ws.readyState === ws.CLOSED) done();
    ws.on('close', done);
    ws.on('error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  if (!status) {
    throw new Error(`exec ${opts.command.join(' ')} in ${opts.namespace}/${opts.pod}: connection closed without a status (protocol ${ws.protocol})`);
  }
  return { stdout: stdout.text(), stderr: stderr.text(), exitCode: exitCodeOf(status), status };
}
