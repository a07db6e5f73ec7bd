#!/usr/bin/env bash
# The README quick start as one script (`npm run demo`): starts `berth serve` on a temp data dir,
# creates a small git repository, launches the demo agent on it (live stages), shows its logs,
# runs a command in the workspace, sends the agent a line, shows the status; then an ACP session with the
# demo agent speaking the Agent Client Protocol: its edit waits for berth approve, berth send is a new turn;
# then cleans everything up.
#   --keep        leave the session and serve running (prints how to get in and how to stop)
#   --kubernetes  the same on a Kubernetes session (one Pod + PVC) in the test cluster, as the executor's
#                 ServiceAccount in a namespace of its own; also stop, resume and rm. Brings the cluster
#                 up if needed (root; builds it the first time) and down again afterwards (not with --keep,
#                 never one it did not start); BERTH_TEST_KUBECONFIG + BERTH_TEST_AGENT_IMAGE: another cluster.
# Works non-interactively (CI runs it). Needs: node >= 20.19, git, a built dist/ (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

keep=0
kube=0
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    --kubernetes) kube=1 ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo: unknown argument: $arg (see --help)" >&2; exit 2 ;;
  esac
done

if [ ! -f dist/berth.js ] || [ ! -f dist/agentctl.cjs ]; then
  echo "==> building (npm run build)"
  npm run --silent build
fi

work=$(mktemp -d -t berth-demo.XXXXXX)
export BERTH_DATA_DIR="$work/data"
berth() { node "$root/bin/berth.js" "$@"; }
kube_helper() { node "$root/scripts/run-ts.mjs" "$root/scripts/demo-kube.ts" "$@"; }
serve_pid=""
session=""
acp_session=""
cluster_started=0
namespace=""
admin_kubeconfig=""

cleanup() {
  status=$?
  if [ "$keep" = 1 ] && [ "$status" = 0 ]; then return; fi
  if [ -n "$session" ]; then berth rm --force "$session" >/dev/null 2>&1 || true; fi
  if [ -n "$acp_session" ]; then berth rm --force "$acp_session" >/dev/null 2>&1 || true; fi
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  if [ -n "$namespace" ]; then
    echo "==> deleting namespace $namespace" >&2
    kube_helper teardown "$admin_kubeconfig" "$namespace" >&2 || { echo "demo: could not delete namespace $namespace" >&2; status=1; }
  fi
  if [ "$cluster_started" = 1 ]; then
    echo "==> taking the test cluster down (npm run cluster:down)" >&2
    bash test/cluster/cluster.sh down >&2 || { echo "demo: cluster:down failed; run 'npm run cluster:down' by hand" >&2; status=1; }
  fi
  rm -rf "$work"
  if [ "$status" != 0 ]; then echo "demo: failed (exit $status)" >&2; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n==> %s\n' "$*"; }

executor_args=()
if [ "$kube" = 1 ]; then
  if [ -n "${BERTH_TEST_KUBECONFIG:-}" ]; then
    step "using the cluster in BERTH_TEST_KUBECONFIG=$BERTH_TEST_KUBECONFIG"
    [ -n "${BERTH_TEST_AGENT_IMAGE:-}" ] || { echo "demo: set BERTH_TEST_AGENT_IMAGE too (an image the cluster can run)" >&2; exit 2; }
    admin_kubeconfig=$BERTH_TEST_KUBECONFIG
  else
    if bash test/cluster/cluster.sh status >/dev/null 2>&1; then
      step "using the test cluster that is already up (it stays up)"
    else
      [ "$(id -u)" = 0 ] || { echo "demo: --kubernetes brings up the test cluster, which needs root (sudo npm run demo -- --kubernetes)" >&2; exit 1; }
      step "bringing the test cluster up (npm run cluster:up; the first time it builds it, about 15 minutes)"
      bash test/cluster/install-deps.sh
      cluster_started=1
      bash test/cluster/cluster.sh up >/dev/null
    fi
    eval "$(bash test/cluster/cluster.sh env)"
    admin_kubeconfig=$BERTH_TEST_KUBECONFIG
  fi
  # From here on the admin kubeconfig is used only by demo-kube.ts; berth uses berth.yaml's.
  unset KUBECONFIG BERTH_TEST_KUBECONFIG
  namespace="berth-demo-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
  step "namespace $namespace with deploy/rbac.yaml (berth serve runs as its ServiceAccount, not as admin)"
  kube_helper setup "$admin_kubeconfig" "$namespace" "$work/kubeconfig"
  mkdir -p "$BERTH_DATA_DIR"
  cat >"$BERTH_DATA_DIR/berth.yaml" <<EOT
executors:
  cluster:
    type: kubernetes
    kubeconfig_path: $work/kubeconfig
    namespace: $namespace
profiles:
  k8s:
    executor: cluster
    kubernetes:
      pod_template: |
        spec:
          dnsPolicy: Default           # the test cluster runs no cluster DNS
          containers:
            - name: agent
              image: $BERTH_TEST_AGENT_IMAGE
              imagePullPolicy: IfNotPresent
      workspace:
        mode: managed_pvc
        size: 1Gi
EOT
  sed 's/^/  /' "$BERTH_DATA_DIR/berth.yaml"
  executor_args=(--executor k8s)
  step "berth doctor --executor k8s   (the cluster, the permissions, and the Pod and PVC by server-side dry run)"
  berth doctor --executor k8s
fi

step "berth serve (data dir $BERTH_DATA_DIR)"
BERTH_LOG_LEVEL=warn node "$root/bin/berth.js" serve --port 0 >"$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 100); do
  grep -q 'listening on' "$work/serve.log" 2>/dev/null && break
  if ! kill -0 "$serve_pid" 2>/dev/null; then cat "$work/serve.log" >&2; exit 1; fi
  sleep 0.1
done
grep -q 'listening on' "$work/serve.log" || { cat "$work/serve.log" >&2; echo "demo: berth serve did not start" >&2; exit 1; }
cat "$work/serve.log"

step "a small demo repository"
repo="$work/hello-repo"
mkdir -p "$repo"
git -C "$repo" init -q -b main
printf '# hello\n\nA tiny project for the berth demo.\n' >"$repo/README.md"
printf 'console.log("hello from berth");\n' >"$repo/hello.js"
git -C "$repo" add .
git -C "$repo" -c user.name=berth-demo -c user.email=demo@example.invalid commit -qm "initial commit"
echo "$repo"
[ "$kube" = 0 ] || echo "(a local path: berth streams it into the Pod as a git bundle, no git server needed)"

step "berth launch --repo $repo --agent demo${executor_args[*]:+ ${executor_args[*]}}"
berth launch --repo "$repo" --agent demo "${executor_args[@]}" --name demo --prompt "tidy up the README" \
  --env BERTH_DEMO_STEP_MS=700 | tee "$work/launch.out"
session=$(sed -n 's/^Session \([^ ]*\) is ready.*/\1/p' "$work/launch.out")
[ -n "$session" ] || { echo "demo: could not read the session id" >&2; exit 1; }

step "the agent at work (berth logs $session)"
sleep 5
berth logs "$session"

step "berth exec $session -- git status"
berth exec "$session" -- git status

step "berth send $session status   (a line for the agent's stdin; it answers in its logs)"
berth send "$session" status
for _ in $(seq 1 50); do
  berth logs "$session" | grep -q 'agent> you said: status' && break
  sleep 0.2
done
berth logs "$session" | grep -A1 'agent> you said: status' || true

step "berth status $session"
berth status "$session"

step "berth ls"
berth ls

step "an agent spoken to over ACP: berth launch --agent demo-acp (the demo agent speaking the Agent Client Protocol)"
berth launch --repo "$repo" --agent demo-acp "${executor_args[@]}" --name talk --prompt "write PLAN.md for hello.js" \
  --env BERTH_DEMO_STEP_MS=300 | tee "$work/acp.out"
acp_session=$(sed -n 's/^Session \([^ ]*\) is ready.*/\1/p' "$work/acp.out")
[ -n "$acp_session" ] || { echo "demo: could not read the ACP session id" >&2; exit 1; }
for _ in $(seq 1 100); do
  berth ls | grep -q 'waits for approval' && break
  sleep 0.2
done

step "berth ls   (the ACP session waits for a person)"
berth ls

step "berth logs $acp_session   (the transcript: the tool call with the diff it wants to make)"
berth logs "$acp_session"

step "berth approve $acp_session   (allow the edit; --deny would leave the file untouched)"
berth approve "$acp_session"
for _ in $(seq 1 100); do
  berth logs "$acp_session" | grep -q '== turn 1 ended' && break
  sleep 0.2
done
berth logs "$acp_session" | sed -n '/?? permission/,$p'

step "berth send $acp_session \"what did you change?\"   (a new turn of the same conversation)"
berth send "$acp_session" "what did you change?"
for _ in $(seq 1 100); do
  berth logs "$acp_session" | grep -c '== turn . ended' | grep -q 2 && break
  sleep 0.2
done
berth logs "$acp_session" | sed -n '/>> turn 2/,$p'

step "berth exec $acp_session -- git status --short   (the file the agent wrote, after the approval)"
berth exec "$acp_session" -- git status --short
berth rm "$acp_session" >/dev/null
acp_session=""

if [ "$kube" = 1 ]; then
  step "the session's Pod and PVC (namespace $namespace)"
  kube_helper objects "$admin_kubeconfig" "$namespace"

  step "berth stop $session   (deletes the Pod, keeps the PVC with the work)"
  berth stop "$session"
  kube_helper objects "$admin_kubeconfig" "$namespace"

  step "berth resume $session   (a new Pod on the same PVC; no re-clone)"
  berth resume "$session"
  kube_helper objects "$admin_kubeconfig" "$namespace"

  step "berth exec $session -- cat NOTES.md   (what the agent wrote before the stop)"
  berth exec "$session" -- cat NOTES.md
fi

if [ "$keep" = 1 ]; then
  cat <<EOT

The session and berth serve (pid $serve_pid) keep running. In this shell:
  export BERTH_DATA_DIR=$BERTH_DATA_DIR
  node bin/berth.js shell $session      # get in (exit to leave)
  node bin/berth.js logs -f $session    # follow the agent
  node bin/berth.js send $session hello  # a line for the agent (it answers in the logs)
When done:
  node bin/berth.js rm $session && kill $serve_pid && rm -rf $work
EOT
  if [ "$kube" = 1 ]; then
    echo "  node scripts/run-ts.mjs scripts/demo-kube.ts teardown $admin_kubeconfig $namespace   # the demo's namespace"
    if [ "$cluster_started" = 1 ]; then echo "  npm run cluster:down                   # the test cluster this demo brought up"; fi
  fi
else
  cat <<EOT

This run removes its session now, so the "get in" lines above do not apply to it: to get in with
berth shell (or talk to the agent with berth send), run the demo with --keep (npm run demo -- --keep).
EOT
  if [ "$kube" = 1 ]; then
    step "berth rm $session   (deletes the Pod, then the PVC, and waits until both are gone)"
  else
    step "berth stop $session, then remove it and stop serve"
    berth stop "$session"
  fi
  berth rm "$session"
  session=""
  [ "$kube" = 0 ] || kube_helper objects "$admin_kubeconfig" "$namespace"
fi
