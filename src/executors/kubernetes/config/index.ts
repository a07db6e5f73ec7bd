/**
 * Kubernetes executor configuration: connection and profile validation, template strictness and
 * reserved fields, quantities and Kubernetes names, security warnings and the profile snapshot.
 * @module
 */
export { parseKubernetesConnection } from './connection.js';
export { parseKubernetesProfile } from './profile.js';
export { describeTemplateWarnings, SECURITY_WARNING_REASON, templateWarnings } from './warnings.js';
export { isReservedEnvName, isReservedPath, isReservedVolumeName } from './reserved.js';
export { quantitiesEqual } from './quantity.js';
export { isDns1123Label, isDns1123Subdomain, isLabelValue } from './identifiers.js';
export { BUDGET_DEFAULTS } from './defaults.js';
export { encodeProfileSnapshot, decodeProfileSnapshot, profileHash, templateHash } from './snapshot.js';
