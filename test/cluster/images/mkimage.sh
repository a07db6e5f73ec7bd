#!/usr/bin/env bash
# mkimage.sh ROOTFS_DIR|ROOTFS_TAR IMAGE_REF OUT_TAR [--user UID:GID] [--workdir DIR] [--env K=V]... -- CMD...
#
# Writes a single-layer OCI image-layout tar (importable with `ctr images import`)
# using only tar, gzip and sha256sum: no registry, no daemon. The layer is
# reproducible when built from a directory (sorted names, mtime 0, uid/gid 0).
set -euo pipefail

rootfs=$1 ref=$2 out=$3
shift 3
user="" workdir="/"
envs=("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
while (($#)); do
  case $1 in
    --user) user=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "mkimage: unknown option $1" >&2; exit 2 ;;
  esac
done

json_array() { # json_array ARG... -> ["ARG",...] (values must not contain " or \)
  local out="" a
  for a in "$@"; do
    [[ $a == *[\"\\]* ]] && { echo "mkimage: unsupported character in '$a'" >&2; exit 2; }
    out+="${out:+,}\"$a\""
  done
  printf '[%s]' "$out"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/mkimage.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"

if [[ -f $rootfs ]]; then
  cp "$rootfs" "$work/layer.tar"
else
  tar -C "$rootfs" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --xattrs -cf "$work/layer.tar" .
fi
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -n -1 "$work/layer.tar"
layer_digest=$(sha256sum "$work/layer.tar.gz" | cut -d' ' -f1)
layer_size=$(stat -c %s "$work/layer.tar.gz")
mv "$work/layer.tar.gz" "$work/blobs/sha256/$layer_digest"

printf '{"architecture":"amd64","os":"linux","config":{"User":"%s","Env":%s,"Cmd":%s,"WorkingDir":"%s"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"berth test/cluster/images/mkimage.sh"}]}' \
  "$user" "$(json_array "${envs[@]}")" "$(json_array "$@")" "$workdir" "$diff_id" >"$work/config.json"
cfg_digest=$(sha256sum "$work/config.json" | cut -d' ' -f1)
cfg_size=$(stat -c %s "$work/config.json")
mv "$work/config.json" "$work/blobs/sha256/$cfg_digest"

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
  "$cfg_digest" "$cfg_size" "$layer_digest" "$layer_size" >"$work/manifest.json"
man_digest=$(sha256sum "$work/manifest.json" | cut -d' ' -f1)
man_size=$(stat -c %s "$work/manifest.json")
mv "$work/manifest.json" "$work/blobs/sha256/$man_digest"

printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$man_digest" "$man_size" "$ref" "${ref##*:}" >"$work/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci-layout"
tar -C "$work" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out.partial" oci-layout index.json blobs
mv "$out.partial" "$out"
