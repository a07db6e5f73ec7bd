/**
 * The Kubernetes executor's pure core: names, identity and labels, Pod and PVC composition,
 * admission verification, bootstrap scripts, status assessment and error classification.
 * No I/O: the launch stages call these and talk to the cluster themselves.
 * @module
 */
export { AdmissionError, ComposeFieldError } from './errors.js';
export { resourceNames, resourceSuffix, type ResourceNames } from './names.js';
export {
  isOwnedLabelKey,
  ownershipLabelProblems,
  ownershipLabels,
  OwnershipMismatchError,
  validateIdentity,
  validateOwnershipLabels,
  type ResourceIdentity,
} from './identity.js';
export { createNonce, createNonceDigest, NONCE_BYTES, pendingCreateProblems, type RandomSource } from './nonce.js';
export { isDns1123Label, isDns1123Subdomain, isLabelValue } from './validate.js';
export { shQuote } from './shell.js';
export { bootstrapPaths, DEFAULT_ROOTS, type BootstrapPaths, type BootstrapRoots } from './paths.js';
export { AGENTCTL_CONTAINER_PORT, composePod, RESERVED_MOUNTS, reservedVolumes, type PodComposeInput } from './pod.js';
export { applyPodDefaults } from './secure-defaults.js';
export { composePvc, type PvcComposeInput } from './pvc.js';
export { assertPodAdmitted, podAdmissionProblems, type PodAdmissionOptions } from './admission-pod.js';
export { assertPvcAdmitted, pvcAdmissionProblems } from './admission-pvc.js';
export { authEnv, nonceFileContent, runtimeEnv, serializeEnvFile, type AgentctlFlavor } from './env-file.js';
export { EXIT_PREPARE_FAILED, EXIT_PREPARE_MISSING, prepareLines, startScript } from './start-script.js';
export { bootstrapUpload, compressedUploadScript, EXIT_SHORT_WRITE, EXIT_UNSAFE_DESTINATION, type UploadCommand, type UploadFile, type UploadPlan } from './upload.js';
export { AGENTCTL_STARTING_LINE, bootstrapPlans, EXIT_UPLOAD_PREPARE_FAILED, lineWatcher, type BootstrapInput } from './bootstrap-plan.js';
export { EXIT_PROBE_MISMATCH, MIN_BUNDLE_NODE_MAJOR, parseProbeOutput, PROBE_SCRIPT, probeGuard, type ProbeResult } from './probe.js';
export { PREPARE_STEP_PREFIX, prepareScript, type PrepareInput, type PrepareStep, type RepositorySource } from './prepare.js';
export { credentialScope, gitCredentialFile, gitCredentialHelperScript } from './git-credentials.js';
export { assessPod, assessPvc, type PodAssessment, type PvcAssessment, type WaitPhase } from './readiness.js';
export { describeEvent, type EventDescription } from './events.js';
export { sanitizeKubeText } from './text.js';
export { isAmbiguousCreateError, type ErrorLike } from './ambiguous.js';
