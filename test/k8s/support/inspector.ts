/**
 * Asks a Node process started with a loopback-only inspector (`--inspect=127.0.0.1:0`) for a full
 * GC and reads the heap that survives it: RSS alone is a sawtooth that hides or fakes a slow leak.
 * Used by the soak test and the fleet benchmark.
 * @module
 */
import WebSocket from 'ws';

/** Heap used (MiB) in the inspected process after a full garbage collection. */
export async function heapAfterGcMiB(inspector: string): Promise<number> {
  const ws = new WebSocket(inspector);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  try {
    let next = 0;
    const call = (method: string, params: object = {}): Promise<{ result?: { result?: { value?: unknown } } }> =>
      new Promise((resolve, reject) => {
        const id = ++next;
        const timer = setTimeout(() => reject(new Error(`inspector ${method} timed out`)), 60_000);
        const onMessage = (raw: WebSocket.RawData): void => {
          const msg = JSON.parse(raw.toString()) as { id?: number; result?: { result?: { value?: unknown } } };
          if (msg.id !== id) return;
          ws.off('message', onMessage);
          clearTimeout(timer);
          resolve(msg);
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ id, method, params }));
      });
    await call('HeapProfiler.enable');
    await call('HeapProfiler.collectGarbage');
    const r = await call('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true });
    await call('HeapProfiler.disable');
    return Number(r.result?.result?.value) / (1 << 20);
  } finally {
    ws.close();
  }
}
