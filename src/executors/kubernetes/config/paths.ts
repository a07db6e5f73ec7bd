/**
 * Field paths of error messages, written as users read them: `a.b.c` for keys and `a[0]` for list
 * items (`profiles.k8s.kubernetes.pod_template.spec.containers[0].image`).
 * @module
 */

export function field(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

export function item(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
