// Adds up vitest JSON reports and prints the one closing line CI reads: "N passed, N failed, N skipped".
// Above it, every failed test (file, name, the first lines of its error) and every file that failed
// outside a test, so the end of a CI log says what failed without scrolling back through it.
// Tests that passed only on a retry (BERTH_TEST_RETRY, see vitest.config.ts) count as passed and are
// listed too, with the error of the attempt that failed: flaky, to be fixed, not hidden.
// A vitest run that exited non-zero without a failed test (an unhandled error or rejection: vitest
// fails the run for it, and its JSON report does not mention it) is named too, with the error as
// vitest printed it (NAME.log and NAME.rc beside NAME.json, written by scripts/test.sh).
// Exits non-zero if any test failed, any suite failed to load, any run failed so, or no test ran.
import { readFileSync, existsSync } from 'node:fs';
import { basename, relative } from 'node:path';

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
let failedRuns = 0;
const failures = [];
const flaky = [];
// What vitest printed under its "Unhandled Errors" banner, to the end of that block.
const UNHANDLED_LINES = 40;
function unhandledBlock(log) {
  const lines = plain(log).split('\n');
  const start = lines.findIndex((line) => /Unhandled (Errors?|Rejections?)/.test(line));
  if (start < 0) return '      (no "Unhandled Errors" block in its output; see the log above)';
  return lines
    .slice(start, start + UNHANDLED_LINES)
    .map((line) => `      ${line}`)
    .join('\n');
}

for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const rcFile = file.replace(/\.json$/, '.rc');
  const rc = existsSync(rcFile) ? Number(readFileSync(rcFile, 'utf8').trim()) : 0;
  const failedBefore = failures.length;
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
  if (rc !== 0 && failures.length === failedBefore) {
    failedRuns++;
    const logFile = file.replace(/\.json$/, '.log');
    const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    failures.push(`  ✗ vitest run "${basename(file, '.json')}" exited ${rc} with no failed test:\n${unhandledBlock(log)}`);
  }
}
if (flaky.length > 0) console.log(`passed only on a retry (flaky; fix them):\n${flaky.join('\n')}`);
if (failures.length > 0) console.log(`failed:\n${failures.join('\n')}`);
if (brokenSuites > 0) console.log(`${brokenSuites} test file(s) failed outside any test (load error or hook)`);
if (failedRuns > 0) console.log(`${failedRuns} vitest run(s) failed with every test passed (unhandled error; listed above)`);
if (flaky.length > 0) console.log(`${flaky.length} of the passed tests passed only on a retry (listed above)`);
console.log(`summary: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || brokenSuites > 0 || failedRuns > 0 || passed === 0 ? 1 : 0);
