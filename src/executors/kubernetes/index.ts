/**
 * The Kubernetes executor: one Pod (+ PVC) per session.
 * @module
 */
export { KubernetesExecutor, type KubernetesExecutorOptions } from './executor.js';
export { PROFILE_SETTING } from './stop.js';
export { defaultArtifactPaths } from './artifacts.js';
export { kubernetesDoctor, type DoctorCheck, type DoctorProfile, type DoctorTarget, type KubernetesDoctorOptions } from './doctor.js';
