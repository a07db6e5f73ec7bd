#!/usr/bin/env bash
# The whole test suite: build, typecheck, lint, unit + integration tests, then the Kubernetes tests
# against the real test cluster (test/cluster). The cluster is brought up here (built on a fresh
# machine) and taken down again even on failure, unless BERTH_TEST_KUBECONFIG points at a running one.
# Prints one closing line "N passed, N failed, N skipped" over every vitest run.
set -uo pipefail
cd "$(dirname "$0")/.."

results_dir=$(mktemp -d -t berth-test.XXXXXX)
# A failed integration, browser or Kubernetes test runs up to twice more (vitest.config.ts); the
# summary at the end names each one that passed only then, with its first error. A 2-core machine
# shared by 5 cluster test files has produced a different timing flake in most full runs; a test
# failing three times is still a failure. BERTH_TEST_RETRY=0 turns it off.
export BERTH_TEST_RETRY="${BERTH_TEST_RETRY:-2}"
status=0

step() { printf '\n==> %s\n' "$*"; }
# One vitest run: its JSON report, its output (also kept, for the summary to quote an unhandled
# error: vitest then exits non-zero with every test passed, and the JSON report does not say why)
# and its exit code, all under $results_dir/NAME.*.
run_vitest() {
  local name=$1
  shift
  npx vitest run "$@" --reporter=default --reporter=json --outputFile.json="$results_dir/$name.json" 2>&1 |
    tee "$results_dir/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "$rc" >"$results_dir/$name.rc"
  return "$rc"
}

step "build"
npm run --silent build || exit 1
step "typecheck"
npm run --silent typecheck || exit 1
step "lint"
npm run --silent lint || exit 1

step "unit and integration tests"
run_vitest local --project unit --project integration || status=1

step "dashboard in a browser (Debian's Chromium, headless; screenshots in artifacts/screenshots)"
run_vitest browser --project browser || status=1

cluster_started=0
stop_cluster() {
  if [ "$cluster_started" = 1 ]; then
    step "cluster down"
    bash test/cluster/cluster.sh down || { echo "error: cluster:down failed; run 'npm run cluster:down' by hand" >&2; status=1; }
    cluster_started=0
  fi
}
trap stop_cluster EXIT
trap 'stop_cluster; exit 130' INT TERM

if [ -z "${BERTH_TEST_KUBECONFIG:-}" ]; then
  step "cluster up (builds what is missing; the first build on a fresh machine takes a while)"
  cluster_started=1
  bash test/cluster/install-deps.sh || status=1
  # What the host looks like before the cluster touches it; checked again after `down`.
  bash test/cluster/host-snapshot.sh >"$results_dir/host-before.txt"
  if bash test/cluster/cluster.sh up; then
    eval "$(bash test/cluster/cluster.sh env)"
  else
    echo "error: the test cluster did not come up; the Kubernetes tests cannot run (see the component logs printed above)" >&2
    status=1
  fi
fi

if [ -n "${BERTH_TEST_KUBECONFIG:-}" ]; then
  # The SEA build is what Pods without Node get; built once here, not by each parallel test file.
  step "agentctl SEA build (for images without Node)"
  npm run --silent build:sea >/dev/null || { echo "error: npm run build:sea failed" >&2; status=1; }
  step "Kubernetes tests against $BERTH_TEST_KUBECONFIG"

  # The files mostly wait on the kubelet, not the CPU: more workers than cores (the soak alone runs
  # ~10 minutes; the rest share the other workers).
  run_vitest k8s --project k8s --maxWorkers=5 || status=1
  step "Kubernetes tests that change the cluster for everyone (one at a time)"
  run_vitest k8s-serial --project k8s-serial || status=1
else
  status=1
fi
stop_cluster

if [ -f "$results_dir/host-before.txt" ]; then
  step "host restored after cluster down"
  bash test/cluster/host-snapshot.sh >"$results_dir/host-after.txt"
  if diff -u "$results_dir/host-before.txt" "$results_dir/host-after.txt"; then
    echo "ok: no stray processes, links, routes, iptables rules, mounts, cgroups or sysctl changes"
  else
    echo "error: cluster:down left the host changed (diff above: - before up, + after down)" >&2
    status=1
  fi
fi

node scripts/test-summary.mjs "$results_dir"/*.json || status=1
rm -rf "$results_dir"
exit $status
