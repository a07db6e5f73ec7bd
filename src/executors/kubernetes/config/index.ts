/**
 * Kubernetes executor configuration: connection and profile validation, template strictness and
 * reserved fields, quantities and Kubernetes names, security warnings and the profile snapshot.
 * @module
 */
export { CONNECTION_DEFAULTS, PROFILE_DEFAULTS, BUDGET_DEFAULTS, BUDGET_MIN_SECONDS, BUDGET_MAX_SECONDS } from './defaults.js';
export { ConfigFieldError } from '../../../shared/config-field-error.js';
export { ProfileSnapshotError } from './errors.js';
export { parseKubernetesConnection, type KubernetesConnectionInput } from './connection.js';
export { parseKubernetesProfile, PLATFORMS, BUDGET_KEYS, type KubernetesProfileInput, type ProfileLocation } from './profile.js';
export { parseWorkspace, WORKSPACE_MODES, ACCESS_MODES, type WorkspaceInput } from './workspace.js';
export { parsePodTemplate, type ParsedTemplate } from './template.js';
export {
  checkReservedFields,
  isReservedEnvName,
  isReservedVolumeName,
  isReservedPath,
  isReservedLabelKey,
  RESERVED,
  RESERVED_METADATA_FIELDS,
  RESERVED_POD_SPEC_FIELDS,
  RESERVED_NODE_LABELS,
  RESERVED_MAIN_CONTAINER_FIELDS,
} from './reserved.js';
export { describeTemplateWarnings, SECURITY_WARNING_REASON, templateWarnings } from './warnings.js';
export { decodeModel } from './model-decode.js';
export { parseQuantity, compareQuantities, quantitiesEqual, isPositiveQuantity, type Quantity } from './quantity.js';
export { isDns1123Label, isDns1123Subdomain, isLabelValue, isQualifiedName } from './identifiers.js';
export { encodeProfileSnapshot, decodeProfileSnapshot, profileHash, connectionHash, templateHash, canonicalJson, SNAPSHOT_VERSION } from './snapshot.js';
