#!/usr/bin/env bash
# controller.sh OUT_TAR IMAGE_REF BASE_OCI_TAR CACHE_DIR REPO_ROOT: the Berth controller image,
# `berth serve` as the image's command, run as uid/gid 1000 (numeric USER, so a Pod that passes
# Pod Security "restricted" needs no runAsUser), with the built product of REPO_ROOT:
#   /opt/berth/package.json, bin/, agents/   what findInstallRoot() recognizes as the install root
#   /opt/berth/dist/                         berth.js + chunks/ (the CLI and controller), berth-front.cjs,
#                                            web/ (the dashboard), agentctl.cjs + agentctl-loader.cjs +
#                                            agentctl.cjs.v8cache (what the Kubernetes executor copies
#                                            into Pods with Node) and agentctl-sea (into Pods without)
#   /opt/berth/node_modules/                 production dependencies (npm ci --omit=dev)
#   /usr/local/bin/berth                     -> /opt/berth/bin/berth.js
#   /var/lib/berth                           the data dir (owned by 1000; mount a volume there)
# Two layers: the agent image's layer as is (Debian bookworm, Node 20.20.2 in /usr/local/bin, user
# agent uid 1000; agent.sh), so containerd stores it once, and one layer with the above.
#
# The build does not run `npm run build`: dist/ must be built (npm run build, and npm run build:sea
# for the SEA). The npm tree is installed on the host (same Debian and Node as the image, so
# better-sqlite3's native module fits) into CACHE_DIR/controller-npm-<hash of package.json and
# package-lock.json>/ and reused by later builds.
set -euo pipefail
out=$1 ref=$2 base_tar=$3 cache_dir=$4 repo=$5
PREFIX=opt/berth
DATA_DIR=/var/lib/berth
UID_GID=1000

log() { printf '[controller %s] %s\n' "$(date +%T)" "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# What dist/ must hold (scripts/build.mjs, scripts/build-sea.mjs); nothing else of dist/ is copied.
DIST_FILES=(berth.js berth.js.map berth-front.cjs chunks web agentctl.cjs agentctl-loader.cjs agentctl.cjs.v8cache agentctl-sea)
for f in "${DIST_FILES[@]}"; do
  [[ -e $repo/dist/$f ]] || die "$repo/dist/$f is missing: run npm run build (and npm run build:sea for agentctl-sea) first"
done
[[ -f $repo/dist/web/index.html ]] || die "$repo/dist/web/index.html is missing: run npm run build"
if [[ $repo/dist/agentctl-sea -ot $repo/dist/agentctl.cjs ]]; then
  log "warning: dist/agentctl-sea is older than dist/agentctl.cjs (npm run build:sea rebuilds it)"
fi

lock_hash=$(cat "$repo/package.json" "$repo/package-lock.json" | sha256sum | cut -c1-12)
tree=$cache_dir/controller-npm-$lock_hash # holds node_modules (and the package files it came from)

install_tree() {
  if [[ -f $tree/.complete ]]; then
    log "npm tree found: $tree"
    return 0
  fi
  rm -rf "$tree"
  mkdir -p "$tree"
  cp "$repo/package.json" "$repo/package-lock.json" "$tree/"
  log "npm ci --omit=dev -> $tree"
  local t0=$SECONDS
  # Install scripts run: better-sqlite3 builds its native module (node-gyp) when no prebuilt one
  # can be fetched. --ignore-scripts would leave it without one.
  # --build-from-source: no attempt to download a prebuilt one (prebuild-install; unreachable here).
  (cd "$tree" && npm ci --omit=dev --build-from-source --no-audit --no-fund --no-update-notifier --loglevel=warn) >&2
  node -e 'require(process.argv[1])(":memory:").close()' "$tree/node_modules/better-sqlite3" ||
    die "better-sqlite3 does not load from $tree"
  log "npm ci took $((SECONDS - t0))s; node_modules $(du -sh "$tree/node_modules" | cut -f1)"
  touch "$tree/.complete"
  # Trees of older lock files are not needed any more.
  find "$cache_dir" -maxdepth 1 -name 'controller-npm-*' ! -path "$tree" -exec rm -rf {} +
}

# json_of FILE EXPRESSION: a JS expression over `d`, the parsed FILE
json_of() { node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log('"$2"')' "$1"; }

install_tree
work=$(mktemp -d "$(dirname "$out")/controller-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/oci/blobs/sha256" "$work/base" "$work/root/$PREFIX/dist" "$work/root/usr/local/bin" "$work/root$DATA_DIR"

# The layer's tree: the product, owned by root and read-only to the user; the data dir its own.
cp -a "$repo/package.json" "$repo/agents" "$repo/bin" "$work/root/$PREFIX/"
for f in "${DIST_FILES[@]}"; do cp -a "$repo/dist/$f" "$work/root/$PREFIX/dist/"; done
cp -a "$tree/node_modules" "$work/root/$PREFIX/"
# better-sqlite3 needs only lib/ and its module at run time: not the SQLite sources and objects (~25 MB).
sqlite=$work/root/$PREFIX/node_modules/better-sqlite3
mv "$sqlite/build/Release/better_sqlite3.node" "$work/better_sqlite3.node"
rm -rf "$sqlite/build" "$sqlite/deps" "$sqlite/src"
mkdir -p "$sqlite/build/Release"
mv "$work/better_sqlite3.node" "$sqlite/build/Release/"
ln -s "/$PREFIX/bin/berth.js" "$work/root/usr/local/bin/berth"
chmod -R u=rwX,go=rX "$work/root/$PREFIX"
chmod 0700 "$work/root$DATA_DIR"

# The base image: its manifest, config and (gzipped) layer blob.
tar -xf "$base_tar" -C "$work/base"
base_manifest=$(json_of "$work/base/index.json" 'd.manifests[0].digest.replace("sha256:","")')
base_config=$(json_of "$work/base/blobs/sha256/$base_manifest" 'd.config.digest.replace("sha256:","")')
base_layers=$(json_of "$work/base/blobs/sha256/$base_manifest" 'JSON.stringify(d.layers)')
for digest in $(json_of "$work/base/blobs/sha256/$base_manifest" 'd.layers.map(l=>l.digest.replace("sha256:","")).join(" ")'); do
  mv "$work/base/blobs/sha256/$digest" "$work/oci/blobs/sha256/$digest"
done

log "writing the controller's layer ($(du -sh "$work/root" | cut -f1))"
# Parent directories (opt, usr, var/lib) keep root ownership; only the data dir is the user's.
tar -C "$work/root" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$work/layer.tar" \
  --exclude=".${DATA_DIR}" .
tar -C "$work/root" --sort=name --mtime=@0 --owner=$UID_GID --group=$UID_GID --numeric-owner \
  --no-recursion -rf "$work/layer.tar" ".$DATA_DIR"
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -n -1 "$work/layer.tar"
layer_digest=$(sha256sum "$work/layer.tar.gz" | cut -d' ' -f1)
layer_size=$(stat -c %s "$work/layer.tar.gz")
mv "$work/layer.tar.gz" "$work/oci/blobs/sha256/$layer_digest"

# blob FILE: move FILE into the blobs, print "DIGEST SIZE"
blob() {
  local d s
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$work/oci/blobs/sha256/$d"
  echo "$d $s"
}

# The base's config with the new layer, user 1000:1000 (numeric), berth serve as the command.
node -e '
  const [file, diffId, dataDir, uid] = process.argv.slice(1);
  const c = JSON.parse(require("fs").readFileSync(file, "utf8"));
  c.rootfs.diff_ids.push("sha256:" + diffId);
  c.history.push({ created: "1970-01-01T00:00:00Z", created_by: "berth test/cluster/images/controller.sh" });
  const env = (c.config.Env || []).filter((e) => !/^(BERTH_DATA_DIR|NODE_ENV)=/.test(e));
  c.config = {
    ...c.config,
    User: `${uid}:${uid}`,
    Env: [...env, `BERTH_DATA_DIR=${dataDir}`, "NODE_ENV=production"],
    Entrypoint: ["node", "/opt/berth/bin/berth.js"],
    Cmd: ["serve", "--host", "0.0.0.0", "--data-dir", dataDir],
    WorkingDir: dataDir,
    ExposedPorts: { "7420/tcp": {} },
    Volumes: { [dataDir]: {} },
  };
  process.stdout.write(JSON.stringify(c));
' "$work/base/blobs/sha256/$base_config" "$diff_id" "$DATA_DIR" "$UID_GID" >"$work/config.json"
read -r cfg_digest cfg_size < <(blob "$work/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":%s}' \
  "$cfg_digest" "$cfg_size" \
  "$(node -e 'const l=JSON.parse(process.argv[1]);l.push({mediaType:"application/vnd.oci.image.layer.v1.tar+gzip",digest:"sha256:"+process.argv[2],size:Number(process.argv[3])});console.log(JSON.stringify(l))' \
    "$base_layers" "$layer_digest" "$layer_size")" >"$work/manifest.json"
read -r man_digest man_size < <(blob "$work/manifest.json")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$man_digest" "$man_size" "$ref" "${ref##*:}" >"$work/oci/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci/oci-layout"
tar -C "$work/oci" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out" oci-layout index.json blobs
log "image $ref: controller layer $((layer_size / 1048576)) MiB gzipped, image tar $(($(stat -c %s "$out") / 1048576)) MiB"
