#!/usr/bin/env bash
# agents.sh OUT_TAR IMAGE_REF BASE_OCI_TAR NPM_CACHE_DIR: the agent image with the real
# coding agents' ACP adapters, from the npm registry at pinned versions:
#   claude-agent-acp   @agentclientprotocol/claude-agent-acp (bundles Claude Code's native binary)
#   codex-acp          @agentclientprotocol/codex-acp (runs `codex app-server` of @openai/codex)
# Two layers: the base agent image's layer (agent.sh, reused as is, so containerd stores it once)
# and one layer with /opt/berth-agents (package.json, lock, node_modules) and the two commands
# as symlinks in /usr/local/bin. Everything else (user agent uid 1000, HOME, Node 20) is the base's.
#
# The npm tree is installed on the host (Node 20, npm 11; no install scripts run, none are needed)
# into NPM_CACHE_DIR/agents-npm-<hash of the package.json below>/, laid out as the layer's root, and
# reused by later builds. Only linux/x64/glibc optional packages are installed (the image is Debian).
set -euo pipefail
out=$1 ref=$2 base_tar=$3 cache_dir=$4

CLAUDE_AGENT_ACP_VERSION=0.101.0 # declares node >=22; runs on Node 20.20 (docs/research-acp.md §3)
CODEX_ACP_VERSION=2.6.0
CODEX_VERSION=0.166.0 # codex-acp asks for ^0.166.0: pinned exactly through `overrides`
PREFIX=opt/berth-agents

package_json=$(
  cat <<EOF
{
  "private": true,
  "description": "Berth test agents image: ACP adapters (test/cluster/images/agents.sh)",
  "dependencies": {
    "@agentclientprotocol/claude-agent-acp": "$CLAUDE_AGENT_ACP_VERSION",
    "@agentclientprotocol/codex-acp": "$CODEX_ACP_VERSION"
  },
  "overrides": { "@openai/codex": "$CODEX_VERSION" }
}
EOF
)
tree_hash=$(printf '%s' "$package_json" | sha256sum | cut -c1-12)
root=$cache_dir/agents-npm-$tree_hash # the layer's root: opt/berth-agents, usr/local/bin

log() { printf '[agents %s] %s\n' "$(date +%T)" "$*" >&2; }

install_tree() {
  if [[ -f $root/.complete ]]; then
    log "npm tree found: $root"
    return 0
  fi
  rm -rf "$root"
  mkdir -p "$root/$PREFIX" "$root/usr/local/bin"
  printf '%s\n' "$package_json" >"$root/$PREFIX/package.json"
  log "npm install claude-agent-acp@$CLAUDE_AGENT_ACP_VERSION codex-acp@$CODEX_ACP_VERSION (codex $CODEX_VERSION) -> $root"
  local t0=$SECONDS
  (cd "$root/$PREFIX" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --no-update-notifier \
    --os=linux --cpu=x64 --libc=glibc --loglevel=warn) >&2
  local bin
  for bin in claude-agent-acp codex-acp; do
    [[ -e $root/$PREFIX/node_modules/.bin/$bin ]] || { log "npm install gave no bin $bin"; exit 1; }
    ln -s "/$PREFIX/node_modules/.bin/$bin" "$root/usr/local/bin/$bin"
  done
  # What the adapters spawn: Claude Code's native binary and Codex's (both per-platform packages).
  local need
  for need in @anthropic-ai/claude-agent-sdk-linux-x64/claude @openai/codex-linux-x64; do
    [[ -e $root/$PREFIX/node_modules/$need ]] || { log "npm install gave no $need"; exit 1; }
  done
  log "npm install took $((SECONDS - t0))s; tree $(du -sh "$root" | cut -f1)"
  touch "$root/.complete"
  # Trees of older pins are not needed any more.
  find "$cache_dir" -maxdepth 1 -name 'agents-npm-*' ! -path "$root" -exec rm -rf {} +
}

# json_of FILE EXPRESSION: a JS expression over `d`, the parsed FILE
json_of() { node -e 'const d=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log('"$2"')' "$1"; }

install_tree
work=$(mktemp -d "$(dirname "$out")/agents-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/oci/blobs/sha256" "$work/base"

# The base image: its manifest, config and (gzipped) layer blob.
tar -xf "$base_tar" -C "$work/base"
base_manifest=$(json_of "$work/base/index.json" 'd.manifests[0].digest.replace("sha256:","")')
base_config=$(json_of "$work/base/blobs/sha256/$base_manifest" 'd.config.digest.replace("sha256:","")')
base_layers=$(json_of "$work/base/blobs/sha256/$base_manifest" 'JSON.stringify(d.layers)')
for digest in $(json_of "$work/base/blobs/sha256/$base_manifest" 'd.layers.map(l=>l.digest.replace("sha256:","")).join(" ")'); do
  mv "$work/base/blobs/sha256/$digest" "$work/oci/blobs/sha256/$digest"
done

log "writing the adapters' layer"
tar -C "$root" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --exclude=./.complete \
  -cf "$work/layer.tar" .
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

# The base's config (user, env, cmd, workdir) with the new layer on top.
node -e '
  const [file, diffId] = process.argv.slice(1);
  const c = JSON.parse(require("fs").readFileSync(file, "utf8"));
  c.rootfs.diff_ids.push("sha256:" + diffId);
  c.history.push({ created: "1970-01-01T00:00:00Z", created_by: "berth test/cluster/images/agents.sh" });
  process.stdout.write(JSON.stringify(c));
' "$work/base/blobs/sha256/$base_config" "$diff_id" >"$work/config.json"
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
log "image $ref: adapters' layer $((layer_size / 1048576)) MiB gzipped, image tar $(($(stat -c %s "$out") / 1048576)) MiB"
