/**
 * Kubernetes resource quantities (`10Gi`, `500M`, `1.5Gi`, `250m`, `1e3`), parsed to an exact
 * rational value so quantities compare by value: the admission check must see `1024Mi` and `1Gi`
 * as the same size, and a float would round large values.
 * @module
 */

/** An exact quantity: `numerator / denominator` (denominator > 0). */
interface Quantity {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

// <sign>? <digits> [. <digits>] | . <digits>, then a suffix (binary SI, decimal SI or exponent)
const QUANTITY_RE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[mkMGTPE]|[eE][+-]?\d+)?$/;

const BINARY_POWER: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_POWER: Readonly<Record<string, number>> = { m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/** Exponents beyond this are rejected rather than expanded into enormous integers. */
const MAX_EXPONENT = 100;

/** Parses a quantity; null when the text is not one (whitespace, unknown suffix, bad number). */
export function parseQuantity(text: string): Quantity | null {
  const m = QUANTITY_RE.exec(text);
  if (!m) return null;
  const [, sign = '', number = '', suffix = ''] = m;
  const [whole = '', fraction = ''] = number.split('.');
  let numerator = BigInt(`${whole}${fraction}` || '0');
  let exponent = -fraction.length;
  let binary = 0;
  if (suffix in BINARY_POWER) binary = BINARY_POWER[suffix] ?? 0;
  else if (suffix in DECIMAL_POWER) exponent += DECIMAL_POWER[suffix] ?? 0;
  else if (suffix !== '') exponent += Number(suffix.slice(1));
  if (Math.abs(exponent) > MAX_EXPONENT) return null;
  if (sign === '-') numerator = -numerator;
  numerator *= 2n ** BigInt(binary);
  let denominator = 1n;
  if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
  else denominator = 10n ** BigInt(-exponent);
  return reduce(numerator, denominator);
}

/** -1, 0 or 1 as `a` is smaller than, equal to or larger than `b`. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Whether two quantity texts denote the same value (`1024Mi` and `1Gi`); false if either is invalid. */
export function quantitiesEqual(a: string, b: string): boolean {
  const qa = parseQuantity(a);
  const qb = parseQuantity(b);
  return qa !== null && qb !== null && compareQuantities(qa, qb) === 0;
}

/** Whether the text is a quantity greater than zero. */
export function isPositiveQuantity(text: string): boolean {
  const q = parseQuantity(text);
  return q !== null && q.numerator > 0n;
}

function reduce(numerator: bigint, denominator: bigint): Quantity {
  const g = gcd(numerator < 0n ? -numerator : numerator, denominator);
  return g > 1n ? { numerator: numerator / g, denominator: denominator / g } : { numerator, denominator };
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}
