import type { JSX } from 'preact';
import type { SessionState } from '../../../src/api/index.js';

export function StateBadge({ state }: { state: SessionState }): JSX.Element {
  return <span class={`badge state-${state}`}>{state}</span>;
}
