/**
 * The Kubernetes executor: one Pod (+ PVC) per session.
 * @module
 */
export { KubernetesExecutor } from './executor.js';
export { PROFILE_SETTING } from './stop.js';
export { defaultArtifactPaths } from './artifacts.js';
export { kubernetesDoctor, type DoctorTarget } from './doctor.js';
export { egressDoctor } from './doctor-egress.js';
