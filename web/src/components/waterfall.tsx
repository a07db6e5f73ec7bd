/** The stage waterfall: one bar per stage on a common time axis, waits under each. @module */
import type { JSX } from 'preact';
import type { StageRecord } from '../../../src/api/index.js';
import { useNow } from '../hooks.js';
import { formatDuration, waterfallGeometry } from '../lib/waterfall.js';

export function Waterfall({ stages }: { stages: StageRecord[] }): JSX.Element {
  const live = stages.some((s) => s.endedAt === null && (s.status === 'running' || s.status === 'waiting'));
  const now = useNow(250, live);
  const w = waterfallGeometry(stages, now);
  if (stages.length === 0) {
    return (
      <div class="waterfall empty-small" data-testid="stage-waterfall">
        <p class="muted">No launch stages yet.</p>
      </div>
    );
  }
  return (
    <div class="waterfall" data-testid="stage-waterfall">
      <div class="axis" aria-hidden="true">
        <span>0</span>
        <span>{formatDuration(w.totalMs / 2)}</span>
        <span>{formatDuration(w.totalMs)}</span>
      </div>
      <ol class="stages">
        {w.bars.map((b) => (
          <li class={`stage status-${b.stage.status}`} data-testid="stage-bar" data-stage={b.stage.name} data-status={b.stage.status}>
            <div class="stage-head">
              <span class="stage-name">{b.stage.name}</span>
              <span class="stage-status">{b.stage.status}</span>
              <span class="stage-duration" data-testid="stage-duration">
                {formatDuration(b.durationMs)}
                {b.live ? '…' : ''}
              </span>
            </div>
            <div
              class="track"
              role="img"
              aria-label={`${b.stage.name} ${b.stage.status}, started at +${formatDuration(b.startMs)}, took ${formatDuration(b.durationMs)}`}
            >
              <div class={`bar${b.live ? ' live' : ''}`} style={{ left: `${b.leftPct}%`, width: `${b.widthPct}%` }} />
              {b.waits.map((wt) => (
                <span class="wait-tick" style={{ left: `${wt.leftPct}%` }} title={`${wt.reason}: ${wt.message}`} />
              ))}
            </div>
            {(b.stage.status === 'failed' || b.stage.status === 'waiting') && (b.stage.reason || b.stage.message) && (
              <p class={`stage-reason ${b.stage.status}`}>
                <strong>{b.stage.reason ?? b.stage.status}</strong>
                {b.stage.message ? `: ${b.stage.message}` : ''}
              </p>
            )}
            {b.waits.length > 0 && (
              <ul class="waits">
                {b.waits.map((wt) => (
                  <li data-testid="stage-wait">
                    <span class="wait-offset">+{formatDuration(wt.offsetMs)}</span> <strong class="wait-reason">{wt.reason}</strong>{' '}
                    <span class="wait-message">{wt.message}</span>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}
