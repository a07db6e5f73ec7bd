import type { JSX } from 'preact';
import type { SessionState, SessionView } from '../../../src/api/index.js';
import { pendingApprovals } from '../lib/format.js';

export function StateBadge({ state }: { state: SessionState }): JSX.Element {
  return <span class={`badge state-${state}`}>{state}</span>;
}

/** "waiting for approval" while an ACP agent waits on a person; nothing otherwise. */
export function WaitingBadge({ session }: { session: SessionView }): JSX.Element | null {
  const n = pendingApprovals(session);
  if (n === 0) return null;
  return (
    <span class="badge waiting" data-testid="session-waiting" title={`${n} permission request${n === 1 ? '' : 's'} waiting for an answer`}>
      waiting for approval{n > 1 ? ` (${n})` : ''}
    </span>
  );
}
