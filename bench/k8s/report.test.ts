import { describe, expect, it } from 'vitest';
import { carrySections } from './report.js';

describe('carrySections', () => {
  const next = '# Benchmarks\n\n## Kubernetes\n\nnew k8s\n\n## What each figure means\n\nmeaning\n\n## How to reproduce\n\nsteps\n';

  it('keeps the sections other benchmarks wrote, before "What each figure means", and replaces the ones regenerated', () => {
    const previous = '# Benchmarks\n\n## Kubernetes\n\nold k8s\n\n## Fleet\n\nfleet table\n\n## By hand\n\nbaseline\n\n## What each figure means\n\nold meaning\n';
    const md = carrySections(previous, next);
    expect(md).toContain('new k8s');
    expect(md).not.toContain('old k8s');
    expect(md).not.toContain('old meaning');
    expect(md.indexOf('## Fleet')).toBeGreaterThan(md.indexOf('## Kubernetes'));
    expect(md.indexOf('## By hand')).toBeGreaterThan(md.indexOf('## Fleet'));
    expect(md.indexOf('## What each figure means')).toBeGreaterThan(md.indexOf('## By hand'));
    expect(md).toContain('fleet table');
    expect(md).toContain('baseline');
  });

  it('is the new file when there was none', () => {
    expect(carrySections('', next)).toBe(next);
  });
});
