#!/usr/bin/env bash
# The README quick start as one script (`npm run demo`): starts `berth serve` on a temp data dir,
# creates a small git repository, launches the demo agent on it (live stages), shows its logs,
# runs a command in the workspace, shows the status, then cleans everything up.
#   --keep   leave the session and serve running (prints how to get in and how to stop)
# Works non-interactively (CI runs it). Needs: node >= 20.19, git, a built dist/ (npm run build).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

keep=0
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
serve_pid=""
session=""

cleanup() {
  status=$?
  if [ "$keep" = 1 ] && [ "$status" = 0 ]; then return; fi
  if [ -n "$session" ]; then berth rm --force "$session" >/dev/null 2>&1 || true; fi
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
  if [ "$status" != 0 ]; then echo "demo: failed (exit $status)" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n==> %s\n' "$*"; }

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

step "berth launch --repo $repo --agent demo"
berth launch --repo "$repo" --agent demo --name demo --prompt "tidy up the README" \
  --env BERTH_DEMO_STEP_MS=700 | tee "$work/launch.out"
session=$(sed -n 's/^Session \([^ ]*\) is ready.*/\1/p' "$work/launch.out")
[ -n "$session" ] || { echo "demo: could not read the session id" >&2; exit 1; }

step "the agent at work (berth logs $session)"
sleep 5
berth logs "$session"

step "berth exec $session -- git status"
berth exec "$session" -- git status

step "berth status $session"
berth status "$session"

step "berth ls"
berth ls

if [ "$keep" = 1 ]; then
  cat <<EOT

The session and berth serve (pid $serve_pid) keep running. In this shell:
  export BERTH_DATA_DIR=$BERTH_DATA_DIR
  node bin/berth.js shell $session      # get in (exit to leave)
  node bin/berth.js logs -f $session    # follow the agent
When done:
  node bin/berth.js rm $session && kill $serve_pid && rm -rf $work
EOT
else
  cat <<EOT

Get in with:  berth shell $session   (with BERTH_DATA_DIR=$BERTH_DATA_DIR; run the demo with --keep to try it)
EOT
  step "berth stop $session, then remove it and stop serve"
  berth stop "$session"
  berth rm "$session"
  session=""
fi
