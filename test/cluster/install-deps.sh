#!/usr/bin/env bash
# Installs (idempotently) the Debian packages the test cluster and the test suite need.
# Go (>= 1.24) and Node 20 are expected to be on the machine already.
set -euo pipefail

pkgs=(
  containerd           # 1.6, with the CRI plugin compiled in
  runc
  containernetworking-plugins   # bridge, host-local, portmap, loopback in /usr/lib/cni
  iptables
  iproute2
  openssl              # cluster certificates
  mmdebstrap           # agent image rootfs (Debian bookworm minbase)
  musl-tools           # static pause binary
  busybox-static       # busybox image
  git                  # git daemon serving test repositories
  ca-certificates
  curl
  gcc
  libc6-dev
  tar
  gzip
  procps
  util-linux
  conntrack
  socat
  python3
  bubblewrap           # bwrap: the local executor's sandbox (and its tests)
  chromium             # the dashboard's browser tests (headless, driven by playwright-core)
  fonts-dejavu-core    # so the dashboard's screenshots show text
  postgresql           # the Postgres inventory's tests start a throwaway server (initdb, postgres; test/support/postgres.ts)
  nginx                # the Ingress tests' stand-in ingress controller (test/k8s/support/ingress-nginx.ts)
)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Packages' own services (the system containerd) must not be started: policy-rc.d says no.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  created_policy=1
fi
trap '[[ $created_policy == 1 ]] && rm -f "$policy"' EXIT
apt-get install -y -qq --no-install-recommends "${missing[@]}"

if ! command -v go >/dev/null 2>&1 && [[ ! -x /usr/local/go/bin/go ]]; then
  echo "install-deps: WARNING: no Go toolchain found (need >= 1.24 to build test/cluster)" >&2
fi
echo "install-deps: done"
