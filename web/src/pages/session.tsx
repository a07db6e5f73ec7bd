/** A session's page: header and actions, stage waterfall, output, terminal, the change, the network. @module */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BerthApiError, type BerthClient, type SessionView } from '../../../src/api/index.js';
import { epoch, errorMessage, handleError, markDown } from '../berth.js';
import { AcpPanel } from '../components/acp-panel.js';
import { SessionActions } from '../components/actions.js';
import { ChangePanel } from '../components/change.js';
import { NetworkPanel } from '../components/network.js';
import { Output } from '../components/output.js';
import { SendInput } from '../components/send-input.js';
import { StateBadge } from '../components/state-badge.js';
import { TerminalPanel } from '../components/terminal.js';
import { Waterfall } from '../components/waterfall.js';
import { useClient, useNow, useStore } from '../hooks.js';
import { agentStateLabel, formatAge, repositoryLabel, sessionTitle } from '../lib/format.js';
import { applyEvent } from '../lib/session-events.js';
import { Link } from '../router.js';

type Load = { kind: 'loading' } | { kind: 'missing' } | { kind: 'error'; message: string } | { kind: 'ok'; session: SessionView };

export function SessionPage({ id }: { id: string }): JSX.Element {
  const client = useClient();
  const ep = useStore(epoch);
  const [load, setLoad] = useLiveSession(client, id, ep);
  const now = useNow(5_000);

  if (load.kind === 'loading') return <p class="muted loading">Loading the session…</p>;
  if (load.kind === 'missing') {
    return (
      <section class="empty" data-testid="session-page" data-state="missing">
        <h1>Session not found</h1>
        <p>
          There is no session <code>{id}</code> (it may have been removed). <Link href="/">Back to the sessions</Link>
        </p>
      </section>
    );
  }
  if (load.kind === 'error') {
    return (
      <p class="notice error" role="alert">
        Could not load the session: {load.message}
      </p>
    );
  }
  const s = load.session;
  return (
    <article class="session" data-testid="session-page" data-state={s.state} aria-labelledby="session-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <Link href="/">Sessions</Link> <span aria-hidden="true">/</span> <span class="mono">{s.id}</span>
      </nav>
      <header class="session-head">
        <div>
          <h1 id="session-title" data-testid="session-title">
            {sessionTitle(s)} <StateBadge state={s.state} />
          </h1>
          <SessionFacts session={s} now={now} />
        </div>
        <SessionActions client={client} session={s} onChanged={(v) => setLoad({ kind: 'ok', session: v })} />
      </header>
      {s.error && (
        <p class="notice error" role="alert">
          <strong>{s.error.stage ? `Failed at ${s.error.stage}: ` : 'Failed: '}</strong>
          {s.error.message}
        </p>
      )}
      <SessionPanels client={client} session={s} ep={ep} />
    </article>
  );
}

/** The session, kept live: one `get()`, then every event of its stream updates (or refetches) it. */
function useLiveSession(client: BerthClient, id: string, ep: number): [Load, (load: Load) => void] {
  const [load, setLoad] = useState<Load>({ kind: 'loading' });
  useEffect(() => {
    const ac = new AbortController();
    let current: SessionView | null = null;
    const set = (s: SessionView): void => {
      current = s;
      if (!ac.signal.aborted) setLoad({ kind: 'ok', session: s });
    };
    const refetch = (): void => {
      client
        .get(id)
        .then(set)
        .catch((err: unknown) => {
          if (err instanceof BerthApiError && err.status === 404) setLoad({ kind: 'missing' });
          else handleError(err);
        });
    };
    void (async () => {
      try {
        const it = client.events(id, { signal: ac.signal })[Symbol.asyncIterator]();
        const first = it.next();
        first.catch(() => undefined);
        set(await client.get(id));
        for (let r = await first; !r.done; r = await it.next()) {
          const ev = r.value;
          if (ev.type === 'removed') {
            setLoad({ kind: 'missing' });
            continue;
          }
          if (!current) continue;
          const applied = applyEvent(current, ev);
          set(applied.session);
          if (applied.refetch) refetch();
        }
        if (!ac.signal.aborted) markDown();
      } catch (err) {
        if (err instanceof BerthApiError && err.status === 404) setLoad({ kind: 'missing' });
        else if (handleError(err) === 'api') setLoad({ kind: 'error', message: errorMessage(err) });
      }
    })();
    return () => ac.abort();
  }, [client, id, ep]);
  return [load, setLoad];
}

function SessionFacts({ session: s, now }: { session: SessionView; now: number }): JSX.Element {
  return (
    <dl class="facts">
      <div>
        <dt>Repository</dt>
        <dd class="wrap">{repositoryLabel(s)}</dd>
      </div>
      <div>
        <dt>Executor</dt>
        <dd>{s.executor}</dd>
      </div>
      <div>
        <dt>Agent</dt>
        <dd>
          {s.agent} · {agentStateLabel(s)}
          {s.agentProcess?.lostReason ? ` (${s.agentProcess.lostReason})` : ''}
        </dd>
      </div>
      <div>
        <dt>Age</dt>
        <dd>{formatAge(s.createdAt, now)}</dd>
      </div>
      {s.workspacePath && (
        <div>
          <dt>Workspace</dt>
          <dd class="mono wrap">{s.workspacePath}</dd>
        </div>
      )}
    </dl>
  );
}

/** Stages, output and input, terminal, the change, the network. */
function SessionPanels({ client, session: s, ep }: { client: BerthClient; session: SessionView; ep: number }): JSX.Element {
  const running = s.state === 'ready';
  return (
    <>
      <section class="panel" aria-labelledby="h-stages">
        <h2 id="h-stages">Launch stages</h2>
        <Waterfall stages={s.stages} />
      </section>
      {s.protocol === 'acp' ? (
        <section class="panel" aria-labelledby="h-conversation">
          <h2 id="h-conversation">Conversation</h2>
          <AcpPanel client={client} session={s} ep={ep} />
          <details class="raw-output">
            <summary>Raw agent output</summary>
            <Output client={client} id={s.id} runKey={s.agentProcess?.id ?? 'none'} />
          </details>
        </section>
      ) : (
        <section class="panel" aria-labelledby="h-output">
          <h2 id="h-output">Agent output</h2>
          <Output client={client} id={s.id} runKey={s.agentProcess?.id ?? 'none'} />
          <SendInput client={client} id={s.id} enabled={(s.state === 'ready' && s.agentProcess?.status === 'running') || s.state === 'suspended'} />
        </section>
      )}
      <section class="panel" aria-labelledby="h-terminal">
        <h2 id="h-terminal">Terminal</h2>
        <TerminalPanel client={client} id={s.id} enabled={running} />
      </section>
      <section class="panel" aria-labelledby="h-change">
        <h2 id="h-change">The change</h2>
        <ChangePanel key={`${s.state}:${s.agentProcess?.status ?? ''}:${ep}`} client={client} id={s.id} enabled={running} baseBranch={s.repository.branch ?? null} />
      </section>
      <section class="panel" aria-labelledby="h-network">
        <h2 id="h-network">Network</h2>
        <NetworkPanel client={client} id={s.id} refreshKey={`${s.updatedAt}:${s.state}:${s.agentProcess?.status ?? ''}:${ep}`} live={running} />
      </section>
    </>
  );
}
