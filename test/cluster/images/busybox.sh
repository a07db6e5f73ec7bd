#!/usr/bin/env bash
# busybox.sh OUT_TAR IMAGE_REF: a small image without Node (Debian's busybox-static).
set -euo pipefail
out=$1 ref=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/berth-busybox.XXXXXX")
trap 'rm -rf "$work"' EXIT
r=$work/rootfs
mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,root,home/user,var/www}
install -d -m 1777 "$r/tmp"
cp /bin/busybox "$r/bin/busybox"
# One symlink per applet, as `busybox --install -s` would make, without a chroot.
while read -r applet; do
  [[ $applet == bin/busybox || -e $r/$applet ]] && continue
  ln -s /bin/busybox "$r/$applet"
done < <(/bin/busybox --list-full)
cat >"$r/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
P
cat >"$r/etc/group" <<'G'
root:x:0:
user:x:1000:
nogroup:x:65534:
G
chown 1000:1000 "$r/home/user"
"$here/mkimage.sh" "$r" "$ref" "$out" -- /bin/sh
