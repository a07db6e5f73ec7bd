/**
 * The Kubernetes executor's pure core: names, identity and labels, Pod and PVC composition,
 * admission verification, bootstrap scripts, status assessment and error classification.
 * No I/O: the launch stages call these and talk to the cluster themselves.
 * @module
 */
export { AdmissionError } from './errors.js';
export { resourceNames } from './names.js';
export {
  ownershipLabelProblems,
  ownershipLabels,
  validateIdentity,
  type ResourceIdentity } from './identity.js';
export { createNonce, createNonceDigest, pendingCreateProblems, type RandomSource } from './nonce.js';
export { shQuote } from './shell.js';
export { composePod } from './pod.js';
export { composePvc } from './pvc.js';
export { assertPodAdmitted, podAdmissionProblems } from './admission-pod.js';
export { assertPvcAdmitted, pvcAdmissionProblems } from './admission-pvc.js';
export { nonceFileContent } from './env-file.js';
export { bootstrapUpload, compressedUploadScript, type UploadFile } from './upload.js';
export { AGENTCTL_STARTING_LINE, bootstrapPlans, EXIT_UPLOAD_PREPARE_FAILED, lineWatcher } from './bootstrap-plan.js';
export { claimPreparePlans } from './claim-plan.js';
export { memberFetchScript, refreshScript } from './refresh.js';
export { EXIT_PROBE_MISMATCH, parseProbeOutput, PROBE_SCRIPT, probeGuard, type ProbeResult } from './probe.js';
export { PREPARE_STEP_PREFIX, prepareScript, type RepositorySource } from './prepare.js';
export { assessPod, assessPvc, type PodAssessment } from './readiness.js';
export { describeEvent } from './events.js';
export { isAmbiguousCreateError } from './ambiguous.js';
export { bootstrapPaths, type BootstrapPaths } from './paths.js';
export type { PrestartPlan } from './prestart.js';
export { composeNetworkPolicy } from './network-policy.js';
