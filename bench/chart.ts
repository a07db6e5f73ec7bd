/**
 * Draws docs/bench-launch.svg (issue 11's launch chart) from the latest result files:
 * bench/results/k8s-launch.json (npm run bench:k8s) and, when present, bench/results/k8s-byhand.json
 * (npm run bench:byhand). `npm run bench:chart`.
 * @module
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeLaunchChart } from './k8s/chart.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
console.log(`wrote ${relative(ROOT, writeLaunchChart(ROOT))}`);
