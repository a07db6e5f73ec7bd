#!/usr/bin/env bash
# pause.sh OUT_TAR IMAGE_REF: the pod sandbox image, a static musl build of pause.c.
set -euo pipefail
out=$1 ref=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/berth-pause.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rootfs"
musl-gcc -Os -static -s -o "$work/rootfs/pause" "$here/pause.c"
"$here/mkimage.sh" "$work/rootfs" "$ref" "$out" --user 65535:65535 -- /pause
