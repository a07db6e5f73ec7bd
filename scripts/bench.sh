#!/usr/bin/env bash
# `npm run bench`: every benchmark figure of issue 11 in one invocation, on this machine and on the
# test cluster — local executor and agentctl, the CLI, then Kubernetes launch/resume/concurrency/
# footprint, the by-hand kubectl baseline, forwarded RPC, the 20-session fleet, and the chart. Each
# figure is also its own `npm run bench:*`. Results: bench/results/*.json and BENCHMARKS.md.
#
# The cluster is used when BERTH_TEST_KUBECONFIG points at it, or when `cluster.sh status` finds it
# running; otherwise it is brought up here (needs root, as `npm test` does) and down again at the end.
# BENCH_SKIP_K8S=1 runs only the local figures (and says so). Measures only: nothing asserts a time.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
step() { printf '\n==> %s\n' "$*"; }
bench() {
  step "npm run $1"
  local t0=$SECONDS
  npm run --silent "$1" || { echo "error: npm run $1 failed (exit $?)" >&2; status=1; }
  echo "($1: $((SECONDS - t0)) s)"
}

step "build"
npm run --silent build || exit 1

bench bench:launch
bench bench:agentctl
bench bench:cli

if [ "${BENCH_SKIP_K8S:-}" = 1 ]; then
  echo "BENCH_SKIP_K8S=1: the Kubernetes figures (bench:k8s, bench:byhand, bench:rpc, bench:fleet, bench:chart) were not run" >&2
  exit "$status"
fi

# A cluster this script brought up goes down again on every way out (success, failure, ^C).
down_if_started() {
  [ "${started:-0}" = 1 ] || return 0
  started=0
  step "cluster down"
  bash test/cluster/cluster.sh down || { echo "error: cluster down failed; run 'npm run cluster:down' by hand" >&2; exit 1; }
}
trap down_if_started EXIT
trap 'down_if_started; exit 130' INT TERM

if [ -z "${BERTH_TEST_KUBECONFIG:-}" ]; then
  if ! bash test/cluster/cluster.sh status 2>/dev/null | grep -Eq '^node: +[^ ]+ Ready$'; then
    step "cluster up (the Kubernetes figures need the test cluster)"
    bash test/cluster/install-deps.sh || exit 1
    started=1 # set before `up`: a half-started cluster is taken down too
    bash test/cluster/cluster.sh up || { echo "error: the test cluster did not come up; the Kubernetes figures cannot run (BENCH_SKIP_K8S=1 runs the local ones only)" >&2; exit 1; }
  fi
  eval "$(bash test/cluster/cluster.sh env)"
fi

step "agentctl SEA build (the busybox delivery figure needs it)"
npm run --silent build:sea >/dev/null || { echo "error: npm run build:sea failed" >&2; exit 1; }

bench bench:k8s
bench bench:byhand
bench bench:rpc
bench bench:fleet
bench bench:chart

step "done"
echo "results: bench/results/*.json; the table: BENCHMARKS.md; the chart: docs/bench-launch.svg"
exit "$status"
