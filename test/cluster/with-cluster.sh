#!/usr/bin/env bash
# with-cluster.sh CMD [ARGS...]
#
# Runs CMD with the test cluster's environment (KUBECONFIG, BERTH_TEST_*):
#  - BERTH_TEST_KUBECONFIG already set: CMD runs against that cluster as is;
#  - the test cluster already up: CMD runs against it, and it is left up;
#  - otherwise: `cluster.sh up` (building what is missing), CMD, then
#    `cluster.sh down`, also when CMD or `up` fails or the run is interrupted.
# Exits with CMD's status; a cluster that cannot come up is an error (exit 1).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
(($#)) || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }

if [[ -n ${BERTH_TEST_KUBECONFIG:-} ]]; then
  echo "[with-cluster] using the cluster in BERTH_TEST_KUBECONFIG=$BERTH_TEST_KUBECONFIG" >&2
  exec "$@"
fi

if bash "$here/cluster.sh" status >/dev/null 2>&1; then
  echo "[with-cluster] using the test cluster that is already up (left running)" >&2
else
  trap 'rc=$?; bash "$here/cluster.sh" down >&2 || { echo "[with-cluster] cluster down failed" >&2; ((rc)) || rc=1; }; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  if ! bash "$here/cluster.sh" up >/dev/null; then
    echo "[with-cluster] ERROR: the test cluster did not come up (see the log lines above)" >&2
    exit 1
  fi
fi
eval "$(bash "$here/cluster.sh" env)"
set +e
"$@"
rc=$?
exit $rc
