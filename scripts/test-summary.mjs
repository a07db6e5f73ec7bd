// Adds up vitest JSON reports and prints the one closing line CI reads: "N passed, N failed, N skipped".
// Exits non-zero if any test failed, any suite failed to load, or no test ran at all.
import { readFileSync, existsSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
let brokenSuites = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  brokenSuites += report.numFailedTestSuites ?? 0;
}
if (brokenSuites > 0) console.log(`${brokenSuites} test file(s) failed to run`);
console.log(`summary: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || brokenSuites > 0 || passed === 0 ? 1 : 0);
