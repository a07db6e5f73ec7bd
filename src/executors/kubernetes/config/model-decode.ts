/**
 * Strict decoding of plain YAML/JSON values into `@kubernetes/client-node` model classes, driven by
 * the type information the client ships (each model's static `getAttributeTypeMap()`), so the
 * accepted fields follow the client's Kubernetes version instead of a hand-written PodSpec schema.
 * Unknown fields anywhere are errors naming their path, and every value is checked for its basic
 * type (string, number/integer, boolean, list, map) — the API server would otherwise drop an
 * unknown field silently, and a misspelled `imagee:` would launch a Pod without the user's setting.
 * @module
 */
import * as k8s from '@kubernetes/client-node';
import { closestKey } from '../../../shared/edit-distance.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { parseQuantity } from './quantity.js';
import { field, item } from './paths.js';

interface AttributeType {
  name: string;
  baseName: string;
  type: string;
  format: string;
}
interface ModelClass {
  new (): object;
  getAttributeTypeMap(): AttributeType[];
}

const ARRAY_PREFIX = 'Array<';
const MAP_PREFIX = '{ [key: string]: ';
const MAP_SUFFIX = '; }';

/**
 * Attributes holding Kubernetes quantities. The client types them as strings, but the API accepts
 * plain numbers too (`cpu: 1`), so these take either and are normalised to the string form.
 */
const QUANTITY_ATTRIBUTES = new Set([
  'V1ResourceRequirements.limits',
  'V1ResourceRequirements.requests',
  'V1VolumeResourceRequirements.limits',
  'V1VolumeResourceRequirements.requests',
  'V1PodSpec.overhead',
  'V1EmptyDirVolumeSource.sizeLimit',
]);

const registry = k8s as unknown as Readonly<Record<string, unknown>>;

function modelClass(type: string): ModelClass | null {
  const candidate = registry[type];
  return typeof candidate === 'function' && 'getAttributeTypeMap' in candidate ? (candidate as unknown as ModelClass) : null;
}

/**
 * Decodes `value` as the client-node model `type` (e.g. `V1PodSpec`), returning an instance of the
 * model class. `null` counts as absent (as in Kubernetes' own decoding). Throws ConfigFieldError
 * at the first problem, in document order, with its path under `path`.
 */
export function decodeModel(value: unknown, type: string, path: string, file: string | null = null): unknown {
  return new Decoder(file).decode(value, type, '', path, false);
}

class Decoder {
  constructor(private readonly file: string | null) {}

  decode(value: unknown, type: string, format: string, path: string, quantity: boolean): unknown {
    if (value === null || value === undefined) return undefined;
    const t = type.replace(/ \| (null|undefined)$/, '');
    if (t.startsWith(ARRAY_PREFIX)) {
      if (!Array.isArray(value)) throw this.fail(path, 'must be a list');
      const sub = t.slice(ARRAY_PREFIX.length, -1);
      return value.map((v, i) => this.required(v, sub, format, item(path, i), quantity));
    }
    if (t.startsWith(MAP_PREFIX)) {
      if (!isPlainObject(value)) throw this.fail(path, 'must be a map');
      const sub = t.slice(MAP_PREFIX.length, -MAP_SUFFIX.length);
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) out[key] = this.required(v, sub, format, field(path, key), quantity);
      return out;
    }
    if (quantity) {
      const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
      if (typeof text !== 'string' || parseQuantity(text) === null) throw this.fail(path, 'must be a Kubernetes quantity (e.g. 500m, 1Gi)');
      return text;
    }
    switch (t) {
      case 'string':
        if (typeof value !== 'string') throw this.fail(path, 'must be a string (quote numbers and booleans)');
        return value;
      case 'boolean':
        if (typeof value !== 'boolean') throw this.fail(path, 'must be true or false');
        return value;
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value)) throw this.fail(path, 'must be a number');
        if ((format === 'int32' || format === 'int64') && !Number.isInteger(value)) throw this.fail(path, 'must be an integer');
        return value;
      case 'IntOrString':
        if (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))) return value;
        throw this.fail(path, 'must be an integer or a string');
      case 'Date':
        if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw this.fail(path, 'must be a date-time string');
        return new Date(value);
      case 'any':
        return value;
    }
    const cls = modelClass(t);
    // a type the client names but does not describe would let anything through: refuse loudly
    if (cls === null) throw new Error(`no client-node model named ${t} (at ${path})`);
    if (!isPlainObject(value)) throw this.fail(path, 'must be a map');
    const attributes = cls.getAttributeTypeMap();
    const byKey = new Map(attributes.map((a) => [a.baseName, a]));
    const instance = new cls() as Record<string, unknown>;
    for (const [key, v] of Object.entries(value)) {
      const attr = byKey.get(key);
      if (attr === undefined) {
        const suggestion = closestKey(key, byKey.keys());
        throw this.fail(field(path, key), `is not a known field${suggestion === undefined ? '' : ` (did you mean '${suggestion}'?)`}`);
      }
      const decoded = this.decode(v, attr.type, attr.format, field(path, key), QUANTITY_ATTRIBUTES.has(`${t}.${attr.name}`));
      if (decoded !== undefined) instance[attr.name] = decoded;
    }
    return instance;
  }

  /** List items and map values: a null there is a mistake, not an absent field. */
  private required(value: unknown, type: string, format: string, path: string, quantity: boolean): unknown {
    if (value === null || value === undefined) throw this.fail(path, 'must not be empty');
    return this.decode(value, type, format, path, quantity);
  }

  private fail(path: string, detail: string): ConfigFieldError {
    return new ConfigFieldError(path, detail, this.file);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
