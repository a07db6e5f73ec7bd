import { describe, expect, it } from 'vitest';
import { requestOperation, ServerMetrics, statusClass, targetLabels, type MetricTarget } from './metrics.js';

const TARGETS: MetricTarget[] = [
  { name: 'local', executor: 'local', profile: '', type: 'local' },
  { name: 'gpu', executor: 'cluster', profile: 'gpu', type: 'kubernetes' },
];

const metrics = (): ServerMetrics => new ServerMetrics({ targets: TARGETS, version: '9.9.9', defaultMetrics: false });

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('ServerMetrics', () => {
  it('shows every target’s stages, both outcomes, each state and the counters at 0 before anything happens', async () => {
    const { text, contentType } = await metrics().render();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const stage of ['initialize', 'workspace', 'agentctl_start', 'agentctl_connect', 'agent_start']) {
      for (const outcome of ['succeeded', 'failed']) {
        expect(sample(text, `berth_launch_stage_duration_seconds_count{executor="local",profile="",stage="${stage}",outcome="${outcome}"}`)).toBe(0);
      }
    }
    expect(sample(text, 'berth_launch_stage_duration_seconds_count{executor="cluster",profile="gpu",stage="pod_ready",outcome="succeeded"}')).toBe(0);
    expect(sample(text, 'berth_launch_stage_duration_seconds_count{executor="cluster",profile="gpu",stage="pod_replaced",outcome="succeeded"}')).toBe(0);
    for (const state of ['launching', 'ready', 'stopping', 'stopped', 'failed', 'removing']) expect(sample(text, `berth_sessions{state="${state}"}`)).toBe(0);
    expect(sample(text, 'berth_session_replacements_total{executor="cluster",profile="gpu"}')).toBe(0);
    expect(sample(text, 'berth_session_reconnects_total{executor="local",profile=""}')).toBe(0);
    expect(sample(text, 'berth_agent_restarts_total{executor="cluster",profile="gpu"}')).toBe(0);
    expect(sample(text, 'berth_session_diagnostics_total{reason="Replaced"}')).toBe(0);
    expect(sample(text, 'berth_ready')).toBe(0);
    expect(sample(text, 'berth_build_info{version="9.9.9"}')).toBe(1);
  });

  it('observes ended stages in seconds under the executor entry and profile of the session’s target', async () => {
    const m = metrics();
    m.observeStage('gpu', 'pod_ready', 'succeeded', 2);
    m.observeStage('gpu', 'pod_ready', 'failed', 400);
    m.observeStage('gone', 'workspace', 'succeeded', 0.02);
    const { text } = await m.render();
    const labels = 'executor="cluster",profile="gpu",stage="pod_ready"';
    expect(sample(text, `berth_launch_stage_duration_seconds_count{${labels},outcome="succeeded"}`)).toBe(1);
    expect(sample(text, `berth_launch_stage_duration_seconds_sum{${labels},outcome="succeeded"}`)).toBe(2);
    expect(sample(text, `berth_launch_stage_duration_seconds_bucket{le="2.5",${labels},outcome="succeeded"}`)).toBe(1);
    expect(sample(text, `berth_launch_stage_duration_seconds_bucket{le="1",${labels},outcome="succeeded"}`)).toBe(0);
    expect(sample(text, `berth_launch_stage_duration_seconds_bucket{le="300",${labels},outcome="failed"}`)).toBe(0);
    // a target the config no longer has labels as itself
    expect(sample(text, 'berth_launch_stage_duration_seconds_count{executor="gone",profile="",stage="workspace",outcome="succeeded"}')).toBe(1);
  });

  it('counts replacements, agent restarts and reconnects per target, and every diagnostic by reason (odd or too many reasons as Other)', async () => {
    const m = metrics();
    m.countDiagnostic('gpu', 'Replaced');
    m.countDiagnostic('gpu', 'AgentRestarted');
    m.countDiagnostic('local', 'Reconnecting');
    m.countDiagnostic('local', 'Reconnecting');
    m.countDiagnostic('local', 'not a reason!');
    for (let i = 0; i < 80; i++) m.countDiagnostic('local', `Reason${i}`);
    const { text } = await m.render();
    expect(sample(text, 'berth_session_replacements_total{executor="cluster",profile="gpu"}')).toBe(1);
    expect(sample(text, 'berth_agent_restarts_total{executor="cluster",profile="gpu"}')).toBe(1);
    expect(sample(text, 'berth_session_reconnects_total{executor="local",profile=""}')).toBe(2);
    expect(sample(text, 'berth_session_diagnostics_total{reason="Reconnecting"}')).toBe(2);
    expect(sample(text, 'berth_session_diagnostics_total{reason="Reason0"}')).toBe(1);
    expect(text.match(/^berth_session_diagnostics_total\{/gm)?.length).toBeLessThanOrEqual(65);
    expect(sample(text, 'berth_session_diagnostics_total{reason="Other"}')).toBeGreaterThan(1);
  });

  it('sets the state gauge from counts and observes requests by operation and status class', async () => {
    const m = metrics();
    m.setSessionCounts(new Map([['ready', 2], ['failed', 1]]));
    m.observeRequest({ method: 'GET', path: '/api/v1/sessions/abc', status: 404, ms: 3 });
    m.observeRequest({ method: 'POST', path: '/api/v1/sessions', status: 202, ms: 10 });
    m.setReady(true);
    const { text } = await m.render();
    expect(sample(text, 'berth_sessions{state="ready"}')).toBe(2);
    expect(sample(text, 'berth_sessions{state="launching"}')).toBe(0);
    expect(sample(text, 'berth_http_request_duration_seconds_count{operation="get",status_class="4xx"}')).toBe(1);
    expect(sample(text, 'berth_http_request_duration_seconds_sum{operation="launch",status_class="2xx"}')).toBe(0.01);
    expect(sample(text, 'berth_ready')).toBe(1);
    // session ids never become label values
    expect(text).not.toContain('abc');
  });

  it('adds the process metrics unless told not to', async () => {
    const { text } = await new ServerMetrics({ targets: [], version: 'x' }).render();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });
});

describe('labels', () => {
  it('names a request by its route operation, the dashboard’s files, or unmatched', () => {
    expect(requestOperation('GET', '/api/v1/sessions/x/logs')).toBe('logs');
    expect(requestOperation('HEAD', '/readyz')).toBe('readyz');
    expect(requestOperation('GET', '/sessions/x')).toBe('dashboard');
    expect(requestOperation('GET', '/api/v1/nope')).toBe('unmatched');
    expect(requestOperation('PUT', '/api/v1/sessions')).toBe('unmatched');
    expect(requestOperation(undefined, undefined)).toBe('unmatched');
  });

  it('classes statuses and resolves targets', () => {
    expect([statusClass(200), statusClass(304), statusClass(503)]).toEqual(['2xx', '3xx', '5xx']);
    const map = new Map(TARGETS.map((t) => [t.name, t]));
    expect(targetLabels(map, 'gpu')).toEqual({ executor: 'cluster', profile: 'gpu' });
    expect(targetLabels(map, 'other')).toEqual({ executor: 'other', profile: '' });
  });
});
