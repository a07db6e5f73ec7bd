/**
 * Parsing a profile's Pod template text (spec §3.1, adapted): exactly one YAML document that is a
 * `v1 Pod`, a `v1 PodTemplate` (its `template:`), or a bare `{metadata?, spec}`; at most 256 KiB;
 * decoded strictly against client-node's model types into a `V1PodTemplateSpec`. Reserved-field
 * rules are separate (`reserved.ts`). Errors never echo template content, only paths and positions.
 * @module
 */
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { MAX_TEMPLATE_BYTES } from '../constants.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { decodeModel, isPlainObject } from './model-decode.js';
import { field } from './paths.js';

interface ParsedTemplate {
  template: V1PodTemplateSpec;
  /**
   * Path of the `V1PodTemplateSpec` inside the document: the template field itself for a Pod or a
   * bare spec, `<field>.template` for a PodTemplate. Reserved-field errors and warnings start here.
   */
  root: string;
}

/** Top-level fields of a `kind: Pod` document a template may carry (`status` is the server's). */
const POD_FIELDS = ['apiVersion', 'kind', 'metadata', 'spec'];
const POD_TEMPLATE_FIELDS = ['apiVersion', 'kind', 'metadata', 'template'];

/**
 * Parses and strictly decodes the template text; `path` names the field it came from
 * (`profiles.k8s.kubernetes.pod_template` or `….pod_template_file`).
 */
export function parsePodTemplate(text: string, path: string, file: string | null = null): ParsedTemplate {
  const fail = (at: string, detail: string) => new ConfigFieldError(at, detail, file);
  if (Buffer.byteLength(text, 'utf8') > MAX_TEMPLATE_BYTES) throw fail(path, `must not exceed ${MAX_TEMPLATE_BYTES / 1024} KiB`);
  if (text.trim() === '') throw fail(path, 'is required');
  const doc = singleDocument(text, path, file);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch {
    throw fail(path, 'must be valid YAML (too many aliases)');
  }
  if (value === null || value === undefined) throw fail(path, 'is required');
  if (!isPlainObject(value)) throw fail(path, 'must be a YAML map: a Pod, a PodTemplate or {metadata, spec}');

  if (!('apiVersion' in value) && !('kind' in value)) {
    return finish(decodeModel(value, 'V1PodTemplateSpec', path, file) as V1PodTemplateSpec, path, fail);
  }
  if (value.apiVersion !== 'v1') throw fail(field(path, 'apiVersion'), 'must be v1 (with kind Pod or PodTemplate)');
  if (value.kind === 'Pod') {
    onlyFields(value, POD_FIELDS, path, fail);
    const { metadata, spec } = value;
    return finish(decodeModel({ metadata, spec }, 'V1PodTemplateSpec', path, file) as V1PodTemplateSpec, path, fail);
  }
  if (value.kind === 'PodTemplate') {
    onlyFields(value, POD_TEMPLATE_FIELDS, path, fail);
    // the PodTemplate object's own metadata names that object, not the Pod: checked, then unused
    decodeModel(value.metadata, 'V1ObjectMeta', field(path, 'metadata'), file);
    const root = field(path, 'template');
    const template = decodeModel(value.template, 'V1PodTemplateSpec', root, file) as V1PodTemplateSpec | undefined;
    if (template === undefined) throw fail(root, 'is required');
    return finish(template, root, fail);
  }
  throw fail(field(path, 'kind'), 'must be Pod or PodTemplate');
}

function singleDocument(text: string, path: string, file: string | null): Document.Parsed {
  const lineCounter = new LineCounter();
  // YAML 1.1, as kubectl reads manifests (`defaultMode: 0644` is octal there); timestamps stay
  // strings because the API has no timestamp type a template may set
  const docs = parseAllDocuments(text, {
    version: '1.1',
    customTags: (tags) => tags.filter((t) => typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:timestamp'),
    uniqueKeys: true,
    prettyErrors: false,
    lineCounter,
  });
  for (const d of docs) {
    const first = d.errors[0];
    if (first !== undefined) {
      const pos = lineCounter.linePos(first.pos[0]);
      throw new ConfigFieldError(path, `must be valid YAML (${first.code} at line ${pos.line}, column ${pos.col} of the template)`, file);
    }
  }
  const [doc, ...rest] = docs;
  if (rest.length > 0) throw new ConfigFieldError(path, 'must contain exactly one YAML document', file);
  if (doc === undefined) throw new ConfigFieldError(path, 'is required', file);
  return doc;
}

function onlyFields(value: Record<string, unknown>, allowed: readonly string[], path: string, fail: (at: string, detail: string) => ConfigFieldError): void {
  for (const key of Object.keys(value)) {
    if (key === 'status') throw fail(field(path, key), 'must not be set in a template (the cluster reports it)');
    if (!allowed.includes(key)) throw fail(field(path, key), 'is not a known field');
  }
}

function finish(template: V1PodTemplateSpec, root: string, fail: (at: string, detail: string) => ConfigFieldError): ParsedTemplate {
  if (template.spec === undefined) throw fail(field(root, 'spec'), 'is required');
  return { template, root };
}
