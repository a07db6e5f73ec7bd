import { describe, expect, it } from 'vitest';
import { isDns1123Label, isDns1123Subdomain, isLabelValue, isQualifiedName } from './identifiers.js';

describe('Kubernetes identifiers', () => {
  it.each([
    ['agent', true, true],
    ['a1-b2', true, true],
    ['0abc', true, true],
    ['a.b', false, true],
    ['fast.ssd-1.example', false, true],
    ['A', false, false],
    ['-a', false, false],
    ['a-', false, false],
    ['a_b', false, false],
    ['a..b', false, false],
    ['', false, false],
    ['a'.repeat(63), true, true],
    ['a'.repeat(64), false, true],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, false, true],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`, false, false],
  ])('%s: DNS-1123 label %s, subdomain %s', (value, label, subdomain) => {
    expect(isDns1123Label(value)).toBe(label);
    expect(isDns1123Subdomain(value)).toBe(subdomain);
  });

  it.each([
    ['', true],
    ['v1.2_rc-3', true],
    ['A', true],
    ['-a', false],
    ['a.', false],
    ['a b', false],
    ['a/b', false],
    ['x'.repeat(63), true],
    ['x'.repeat(64), false],
  ])('label value %j → %s', (value, expected) => {
    expect(isLabelValue(value)).toBe(expected);
  });

  it.each([
    ['team', true],
    ['example.com/tier', true],
    ['app.kubernetes.io/name', true],
    ['Example.com/tier', false],
    ['/tier', false],
    ['example.com/', false],
    ['a/b/c', false],
    ['', false],
    ['bad key', false],
  ])('qualified name %j → %s', (value, expected) => {
    expect(isQualifiedName(value)).toBe(expected);
  });
});
