/**
 * The session's network: the connections its agent made through Berth's egress proxy (a profile
 * with `network:`), the latest first, denied ones marked with their reason, and the summary. Read
 * again whenever the page's session changes (`refreshKey`), every 10 s while it runs, and on Refresh.
 * @module
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BerthApiError, type BerthClient, type EgressPage } from '../../../src/api/index.js';
import { errorMessage, handleError } from '../berth.js';
import { brokerLabel, egressSummaryLabel, egressVerdict, formatBytes } from '../lib/egress.js';

/** Records shown (the latest ones). */
const SHOWN = 50;
const POLL_MS = 10_000;

type Load = { kind: 'loading' } | { kind: 'none' } | { kind: 'error'; message: string } | { kind: 'ok'; page: EgressPage };

export function NetworkPanel({ client, id, refreshKey, live }: { client: BerthClient; id: string; refreshKey: string; live: boolean }): JSX.Element {
  const [load, setLoad] = useState<Load>({ kind: 'loading' });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setTick((n) => n + 1), POLL_MS);
    return () => clearInterval(t);
  }, [live]);
  useEffect(() => {
    const ac = new AbortController();
    client.egress
      .get(id, { tail: SHOWN }, ac.signal)
      .then((page) => !ac.signal.aborted && setLoad({ kind: 'ok', page }))
      .catch((err: unknown) => {
        if (ac.signal.aborted) return;
        // a server that keeps no egress records (501) has nothing to show
        if (err instanceof BerthApiError && err.status === 501) setLoad({ kind: 'none' });
        else if (handleError(err) === 'api') setLoad({ kind: 'error', message: errorMessage(err) });
      });
    return () => ac.abort();
  }, [client, id, refreshKey, tick]);

  if (load.kind === 'loading') return <p class="muted">Loading the connections…</p>;
  if (load.kind === 'error') return <p class="notice error">Could not load the connections: {load.message}</p>;
  if (load.kind === 'none' || load.page.summary.connections === 0) {
    return (
      <p class="muted" data-testid="egress-empty">
        No connection recorded. Only sessions whose profile has <code>network:</code> go through the egress proxy.
      </p>
    );
  }
  const { summary, records } = load.page;
  return (
    <div class="network">
      <div class="section-tools">
        <button type="button" class="button small" onClick={() => setTick((n) => n + 1)}>
          Refresh
        </button>
      </div>
      <p class="network-summary" data-testid="egress-summary">
        {egressSummaryLabel(summary)}
      </p>
      <table class="egress" data-testid="egress-records">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Verdict</th>
            <th scope="col">Request</th>
            <th scope="col">Status</th>
            <th scope="col">Up / down</th>
            <th scope="col">Broker</th>
          </tr>
        </thead>
        <tbody>
          {[...records].reverse().map((r) => (
            <tr key={r.seq} class={r.allowed ? 'allowed' : 'denied'} data-allowed={String(r.allowed)}>
              <td class="mono" title={r.startedAt}>
                {new Date(r.startedAt).toLocaleTimeString('en-GB')}
              </td>
              <td class="verdict">{egressVerdict(r)}</td>
              <td class="mono wrap">
                {r.method} {r.host}:{r.port}
              </td>
              <td>{r.status ?? '—'}</td>
              <td>
                {formatBytes(r.bytesUp)} / {formatBytes(r.bytesDown)}
              </td>
              <td>{brokerLabel(r) || '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {summary.connections > records.length && <p class="muted small">The latest {records.length} of {summary.connections.toLocaleString('en-US')} shown (berth egress {id} lists more).</p>}
    </div>
  );
}
