// Runs a TypeScript entry file with tsx's loader: `node scripts/run-ts.mjs <file.ts> [args…]`.
// Exits with the child's exit code (or 1 when it dies from a signal).
import { spawn } from 'node:child_process';

const [file, ...args] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: node scripts/run-ts.mjs <file.ts> [args…]');
  process.exit(2);
}
const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
