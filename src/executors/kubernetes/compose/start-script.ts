/**
 * The main container's start command (spec §5.5, improved): wait for the start marker, load the
 * environment files, run prepare.sh once, then exec agentctl. Runs as `sh -c <script>` in the
 * image's own shell (dash, busybox ash or bash), so it keeps to POSIX sh.
 * @module
 */
import { BERTH_ENV } from '../constants.js';
import { bootstrapPaths, type BootstrapPaths } from './paths.js';
import { prestartLine } from './prestart.js';
import { shQuote } from './shell.js';

/** Exit status when prepare.sh cannot even be run (it is missing). */
const EXIT_PREPARE_MISSING = 70;
/**
 * Exit status of the start command when prepare.sh failed (its own status is in prepare.failed):
 * one fixed value, so a Pod status alone tells a prepare failure from any other exit.
 */
export const EXIT_PREPARE_FAILED = 65;

/**
 * Shell lines that load runtime.env and auth.env (auto-exported) and run prepare.sh unless the
 * `prepared` marker exists. Output goes to prepare.log; on failure the status goes to
 * prepare.failed, the log's last `tailLines` to stderr, and the script exits with `exitCode`.
 * Shared by the start command and the bootstrap exec (which runs prepare itself when asked to).
 */
export function prepareLines(paths: BootstrapPaths, exitCode: number, tailLines: number, opts: { unless?: string; stepsToStdout?: boolean } = {}): string[] {
  const q = shQuote;
  const steps = opts.stepsToStdout === true ? '3>&1' : '3>/dev/null';
  const unless = opts.unless === undefined ? '' : ` && [ ! -e ${q(opts.unless)} ]`;
  return [
    'set -a',
    `. ${q(paths.runtimeEnv)}`,
    `. ${q(paths.authEnv)}`,
    'set +a',
    `if [ ! -e ${q(paths.preparedMarker)} ]${unless}; then`,
    `  [ -f ${q(paths.prepareScript)} ] || { echo 'berth: prepare.sh is missing' >&2; exit ${EXIT_PREPARE_MISSING}; }`,
    // A stale record of an earlier attempt must not be mistaken for this one's.
    `  rm -f ${q(paths.prepareFailed)}`,
    // fd 3: prepare.sh's step lines (see PREPARE_STEP_PREFIX), for the bootstrap exec's stdout
    `  if sh ${q(paths.prepareScript)} ${steps} >${q(paths.prepareLog)} 2>&1 </dev/null; then`,
    `    : >${q(paths.preparedMarker)}`,
    '  else',
    '    status=$?',
    `    echo "$status" >${q(paths.prepareFailed)}`,
    `    echo "berth: prepare.sh failed with exit status $status:" >&2`,
    `    tail -n ${tailLines} ${q(paths.prepareLog)} >&2 || :`,
    `    exit ${exitCode}`,
    '  fi',
    'fi',
  ];
}

/**
 * The script given as the main container's single `args` entry. Contains paths only, no secret:
 * it is visible in the Pod spec.
 *
 * - Polls for the marker every 20 ms for the first ~5 s (the bootstrap exec usually writes it well
 *   within that), then every 100 ms, so agentctl starts right after the marker; where `sleep` takes
 *   whole seconds only, a fractional sleep fails and the loop falls back to `sleep 1`.
 * - auth.env is sourced before prepare.sh and agentctl (HOME). The nonce is not in it: agentctl
 *   reads its file and removes it (ENV.bootstrapNonceFile in runtime.env).
 * - prepare.sh runs until it succeeds once per Pod (the `prepared` marker on the runtime volume;
 *   the bootstrap exec may already have run it). On failure its tail goes to the container log
 *   (and so, with `terminationMessagePolicy: FallbackToLogsOnError`, into the container's
 *   terminated state) and the command exits with {@link EXIT_PREPARE_FAILED}: the kubelet
 *   restarts the container with its back-off instead of a tight retry loop here.
 * - A container restart finds the markers and the env files still on their volumes and goes
 *   straight to agentctl, which finds no nonce file: the controller's reconnect writes a fresh one.
 * - agentctl is started through the delivered launcher when there is one (it knows how to run the
 *   build it came with), else by flavor: `node agentctl.cjs` or the `agentctl` binary.
 * - Where the image has `node`, all of this is preceded by the Node pre-start (prestart.ts), which
 *   runs the common case in one Node process started before the upload, and this shell otherwise.
 */
const SIGNAL_LINES = [
  'set -eu',
  // PID 1 ignores signals it has no handler for: without this a Pod deleted before the bootstrap
  // waits out its whole grace period (agentctl, exec'd below, handles SIGTERM itself; so does the
  // Node pre-start)
  "trap 'exit 143' TERM INT",
];

export function startScript(paths: BootstrapPaths = bootstrapPaths()): string {
  const shell = shellStartScript(paths);
  return [...SIGNAL_LINES, prestartLine(paths, shell), shell].join('\n');
}

/** The start command without the Node pre-start: what runs where the image has no `node`, after a container restart, and as the pre-start's fallback. */
function shellStartScript(paths: BootstrapPaths = bootstrapPaths()): string {
  const q = shQuote;
  return [
    ...SIGNAL_LINES,
    'n=0',
    `while [ ! -e ${q(paths.startMarker)} ]; do`,
    '  if [ "$n" -lt 250 ]; then n=$((n + 1)); sleep 0.02 2>/dev/null || sleep 1; else sleep 0.1 2>/dev/null || sleep 1; fi',
    'done',
    // a bootstrap exec that runs prepare.sh itself (after the marker, so agentctl boots during the
    // clone) says so first; the exec reports a failure, and the launch fails and deletes the Pod
    ...prepareLines(paths, EXIT_PREPARE_FAILED, 20, { unless: paths.prepareInExecMarker }),
    `if [ -x ${q(paths.agentctlLauncher)} ]; then exec ${q(paths.agentctlLauncher)}; fi`,
    `case "\${${BERTH_ENV.agentctlFlavor}:-sea}" in`,
    `  bundle) exec node ${q(paths.agentctlBundle)} ;;`,
    `  *) exec ${q(paths.agentctl)} ;;`,
    'esac',
    '',
  ].join('\n');
}
