// Adds up vitest JSON reports and prints the one closing line CI reads: "N passed, N failed, N skipped".
// Above it, every failed test (file, name, the first lines of its error) and every file that failed
// outside a test, so the end of a CI log says what failed without scrolling back through it.
// Tests that passed only on a retry (BERTH_TEST_RETRY, see vitest.config.ts) count as passed and are
// listed too, with the error of the attempt that failed: flaky, to be fixed, not hidden.
// Exits non-zero if any test failed, any suite failed to load, or no test ran at all.
import { readFileSync, existsSync } from 'node:fs';
import { relative } from 'node:path';

const ERROR_LINES = 6;
// eslint-disable-next-line no-control-regex
const plain = (text) => String(text).replace(/\x1b\[[0-9;]*m/g, '');
const firstLines = (text) =>
  plain(text)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, ERROR_LINES)
    .map((line) => `      ${line}`)
    .join('\n');

let passed = 0;
let failed = 0;
let skipped = 0;
let brokenSuites = 0;
const failures = [];
const flaky = [];
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  for (const r of report.testResults ?? []) {
    const name = relative(process.cwd(), r.name ?? '?');
    const failedTests = (r.assertionResults ?? []).filter((a) => a.status === 'failed');
    // vitest keeps the errors of the failed attempts on a test that passed on a retry
    for (const a of (r.assertionResults ?? []).filter((t) => t.status === 'passed' && (t.failureMessages ?? []).length > 0)) {
      flaky.push(`  ~ ${name} > ${a.fullName ?? a.title}\n${firstLines(a.failureMessages.join('\n'))}`);
    }
    for (const a of failedTests) {
      failures.push(`  ✗ ${name} > ${a.fullName ?? a.title}\n${firstLines((a.failureMessages ?? []).join('\n'))}`);
    }
    // a file that failed without a failing test did not load or failed in a hook (numFailedTestSuites
    // would also count every describe block around a failed test)
    if (r.status === 'failed' && failedTests.length === 0) {
      brokenSuites++;
      failures.push(`  ✗ ${name} (failed outside any test)\n${firstLines(r.message ?? '')}`);
    }
  }
}
if (flaky.length > 0) console.log(`passed only on a retry (flaky; fix them):\n${flaky.join('\n')}`);
if (failures.length > 0) console.log(`failed:\n${failures.join('\n')}`);
if (brokenSuites > 0) console.log(`${brokenSuites} test file(s) failed outside any test (load error or hook)`);
if (flaky.length > 0) console.log(`${flaky.length} of the passed tests passed only on a retry (listed above)`);
console.log(`summary: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || brokenSuites > 0 || passed === 0 ? 1 : 0);
