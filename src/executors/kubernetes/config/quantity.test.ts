import { describe, expect, it } from 'vitest';
import { compareQuantities, isPositiveQuantity, parseQuantity, quantitiesEqual } from './quantity.js';

const value = (text: string) => {
  const q = parseQuantity(text);
  if (q === null) throw new Error(`not a quantity: ${text}`);
  return Number(q.numerator) / Number(q.denominator);
};

describe('parseQuantity', () => {
  it.each([
    ['10Gi', 10 * 2 ** 30],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['500M', 500e6],
    ['1e3', 1000],
    ['1E3', 1000],
    ['2e-3', 0.002],
    ['250m', 0.25],
    ['1k', 1000],
    ['1E', 1e18],
    ['0', 0],
    ['.5', 0.5],
    ['5.', 5],
    ['+3', 3],
    ['-1Ki', -1024],
    ['123', 123],
  ])('reads %s as %d', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it.each(['', ' 1Gi', '1Gi ', '1 Gi', '1gi', '1GB', 'Gi', '1.2.3', '1e', '1e1000', 'ten', '0x10', '1K'])('rejects %j', (text) => {
    expect(parseQuantity(text)).toBeNull();
  });
});

describe('compareQuantities', () => {
  it.each([
    ['1024Mi', '1Gi', 0],
    ['1Gi', '1073741824', 0],
    ['1G', '1Gi', -1],
    ['1000m', '1', 0],
    ['1.5Gi', '1536Mi', 0],
    ['10Gi', '9Gi', 1],
    ['1e3', '1k', 0],
    ['100Ei', '99Ei', 1],
  ])('compares %s with %s by value (%d)', (a, b, expected) => {
    expect(compareQuantities(parseQuantity(a)!, parseQuantity(b)!)).toBe(expected);
  });

  it('is exact for values a float would round', () => {
    expect(quantitiesEqual('9007199254740993', '9007199254740992')).toBe(false);
    expect(quantitiesEqual('8Ei', '9223372036854775808')).toBe(true);
  });

  it('treats an invalid text as equal to nothing', () => {
    expect(quantitiesEqual('1Gi', 'one gig')).toBe(false);
  });
});

describe('isPositiveQuantity', () => {
  it.each([
    ['10Gi', true],
    ['1m', true],
    ['0', false],
    ['0Gi', false],
    ['-1Gi', false],
    ['lots', false],
  ])('%s → %s', (text, expected) => {
    expect(isPositiveQuantity(text)).toBe(expected);
  });
});
