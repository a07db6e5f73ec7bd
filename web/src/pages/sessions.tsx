/** The sessions list: live over `allEvents()`, filtered by state and executor, searchable. @module */
import type { JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { BerthApiError, type BerthClient, type SessionState, type SessionView } from '../../../src/api/index.js';
import { epoch, errorMessage, handleError, markDown } from '../berth.js';
import { StateBadge, WaitingBadge } from '../components/state-badge.js';
import { useClient, useNow, useStore } from '../hooks.js';
import { agentStateLabel, currentStage, describeStage, formatAge, repositoryLabel, sessionTitle } from '../lib/format.js';
import { applyEvent, pollsAgentProgress } from '../lib/session-events.js';
import { Link } from '../router.js';

const STATES: SessionState[] = ['launching', 'ready', 'stopping', 'stopped', 'suspended', 'failed', 'removing'];

/** The list's filters; empty strings match everything. */
interface Filters {
  state: string;
  executor: string;
  query: string;
}

const NO_FILTERS: Filters = { state: '', executor: '', query: '' };

/** How often running ACP sessions are read again (their permission requests are no session events). */
const AGENT_POLL_MS = 3_000;

export function SessionsPage(): JSX.Element {
  const client = useClient();
  const ep = useStore(epoch);
  const sessions = useLiveSessions(client, ep);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const now = useNow(15_000);

  const all = sessions.list ?? [];
  const executors = useMemo(() => [...new Set(all.map((s) => s.executor))].sort(), [all]);
  const { state, executor, query } = filters;
  const shown = all.filter((s) => (!state || s.state === state) && (!executor || s.executor === executor) && matches(s, query));

  return (
    <section aria-labelledby="sessions-title">
      <div class="page-head">
        <h1 id="sessions-title">Sessions</h1>
      </div>
      <SessionFilters filters={filters} executors={executors} onChange={(change) => setFilters((f) => ({ ...f, ...change }))} />
      {sessions.error && (
        <p class="notice error" role="alert">
          Could not load the sessions: {sessions.error}
        </p>
      )}
      {sessions.list === null && !sessions.error && <p class="muted loading">Loading sessions…</p>}
      {sessions.list !== null && all.length === 0 && (
        <div class="empty" data-testid="sessions-empty">
          <h2>No sessions yet</h2>
          <p>
            A session is a workspace with an agent in it. <Link href="/launch">Launch one</Link>, or run{' '}
            <code>berth launch</code>.
          </p>
        </div>
      )}
      {sessions.list !== null && all.length > 0 && shown.length === 0 && (
        <div class="empty" data-testid="sessions-empty">
          <p>No session matches these filters.</p>
          <button type="button" class="button" onClick={() => setFilters(NO_FILTERS)}>
            Clear filters
          </button>
        </div>
      )}
      {shown.length > 0 && <SessionTable sessions={shown} now={now} />}
    </section>
  );
}

function SessionFilters(props: { filters: Filters; executors: readonly string[]; onChange: (change: Partial<Filters>) => void }): JSX.Element {
  const { filters, onChange } = props;
  return (
    <div class="filters" role="search">
      <label>
        <span>State</span>
        <select data-testid="filter-state" value={filters.state} onChange={(e) => onChange({ state: e.currentTarget.value })}>
          <option value="">All states</option>
          {STATES.map((s) => (
            <option value={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        <span>Executor</span>
        <select data-testid="filter-executor" value={filters.executor} onChange={(e) => onChange({ executor: e.currentTarget.value })}>
          <option value="">All executors</option>
          {props.executors.map((x) => (
            <option value={x}>{x}</option>
          ))}
        </select>
      </label>
      <label class="grow">
        <span>Search</span>
        <input
          type="search"
          data-testid="search"
          placeholder="Name, id, repository, branch, agent"
          value={filters.query}
          onInput={(e) => onChange({ query: e.currentTarget.value })}
        />
      </label>
    </div>
  );
}

function SessionTable({ sessions, now }: { sessions: readonly SessionView[]; now: number }): JSX.Element {
  return (
    <table class="sessions" data-testid="sessions-list">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Repository</th>
          <th scope="col">Executor</th>
          <th scope="col">State</th>
          <th scope="col">Agent</th>
          <th scope="col">Age</th>
          <th scope="col">Stage</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((s) => (
          <SessionRow key={s.id} session={s} now={now} />
        ))}
      </tbody>
    </table>
  );
}

function SessionRow({ session: s, now }: { session: SessionView; now: number }): JSX.Element {
  const stage = currentStage(s.stages);
  return (
    <tr data-testid="session-row" data-session-id={s.id} data-state={s.state}>
      <td data-label="Name" data-testid="session-name">
        <div>
          <Link href={`/sessions/${encodeURIComponent(s.id)}`} class="strong">
            {sessionTitle(s)}
          </Link>
          {s.name && <div class="muted mono small">{s.id}</div>}
        </div>
      </td>
      <td data-label="Repository" class="wrap">
        <div>{repositoryLabel(s)}</div>
      </td>
      <td data-label="Executor">
        <div>{s.executor}</div>
      </td>
      <td data-label="State" data-testid="session-state">
        <div>
          <StateBadge state={s.state} />
        </div>
      </td>
      <td data-label="Agent" data-testid="session-agent-state">
        <div>
          {agentStateLabel(s)} <span class="muted small">({s.agent})</span> <WaitingBadge session={s} />
        </div>
      </td>
      <td data-label="Age">
        <div>
          <time dateTime={s.createdAt} title={new Date(s.createdAt).toLocaleString()}>
            {formatAge(s.createdAt, now)}
          </time>
        </div>
      </td>
      <td data-label="Stage" data-testid="session-stage" class={`wrap stage-cell status-${stage?.status ?? 'none'}`}>
        <div>{describeStage(stage)}</div>
      </td>
    </tr>
  );
}

function matches(s: SessionView, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  return [s.id, s.name, s.agent, s.executor, s.repository.url, s.repository.path, s.repository.branch, s.state]
    .filter((x): x is string => typeof x === 'string')
    .some((x) => x.toLowerCase().includes(q));
}

/** The list, kept live: one `list()`, then every event updates (or refetches) its session. */
function useLiveSessions(client: BerthClient, ep: number): { list: SessionView[] | null; error: string | null } {
  const [map, setMap] = useState<Map<string, SessionView> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ac = new AbortController();
    const current = new Map<string, SessionView>();
    let loaded = false;
    const publish = (): void => {
      if (loaded && !ac.signal.aborted) setMap(new Map(current));
    };
    const inflight = new Map<string, boolean>(); // id → refetch again after this one
    const refetch = (id: string): void => {
      if (inflight.has(id)) {
        inflight.set(id, true);
        return;
      }
      inflight.set(id, false);
      client
        .get(id)
        .then((s) => {
          current.set(s.id, s);
          publish();
        })
        .catch((err: unknown) => {
          if (err instanceof BerthApiError && err.status === 404) {
            current.delete(id);
            publish();
          } else handleError(err);
        })
        .finally(() => {
          const again = inflight.get(id);
          inflight.delete(id);
          if (again && !ac.signal.aborted) refetch(id);
        });
    };
    const poll = setInterval(() => {
      for (const s of loaded ? current.values() : []) if (pollsAgentProgress(s)) refetch(s.id);
    }, AGENT_POLL_MS);
    ac.signal.addEventListener('abort', () => clearInterval(poll));
    void (async () => {
      try {
        const it = client.allEvents({ signal: ac.signal })[Symbol.asyncIterator]();
        const first = it.next(); // opens the stream before the list is read: no event is missed
        first.catch(() => undefined);
        const list = await client.list();
        if (ac.signal.aborted) return;
        for (const s of list) current.set(s.id, s);
        loaded = true;
        setError(null);
        publish();
        for (let r = await first; !r.done; r = await it.next()) {
          const ev = r.value;
          if (ev.type === 'removed') {
            current.delete(ev.sessionId);
            publish();
            continue;
          }
          const cur = current.get(ev.sessionId);
          if (!cur) {
            refetch(ev.sessionId);
            continue;
          }
          const applied = applyEvent(cur, ev);
          current.set(cur.id, applied.session);
          publish();
          if (applied.refetch) refetch(ev.sessionId);
        }
        if (!ac.signal.aborted) markDown(); // the server ended the stream: it is going away
      } catch (err) {
        if (handleError(err) === 'api') setError(errorMessage(err));
      }
    })();
    return () => ac.abort();
  }, [client, ep]);
  const list = useMemo(
    () => (map ? [...map.values()].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt)) : null),
    [map],
  );
  return { list, error };
}
