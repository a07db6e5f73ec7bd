/**
 * The agents image: the agent image plus the real coding agents' ACP adapters
 * (`claude-agent-acp`, `codex-acp`; test/cluster/images/agents.sh). It is large (≈455 MiB
 * gzipped), so `cluster.sh up` does not build it: the first test that asks for it
 * builds and imports it (`cluster.sh build-images agents`, serialized by a lock in the
 * cluster's cache, so parallel test files build it once); later calls find it built
 * and imported and return at once.
 */
import { builtImage } from './built-image.js';

/** A cold build (npm install of ≈850 MB, gzip, import) took ≈1 min on an idle 2-core machine. */
const BUILD_TIMEOUT_MS = 20 * 60_000;
/** Per-test budget a caller's beforeAll should allow for a first build. */
export const AGENTS_IMAGE_BUILD_TIMEOUT_MS = BUILD_TIMEOUT_MS + 60_000;

/**
 * The agents image's reference (`localhost/berth/agents:node20.20.2-bookworm-<recipe hash>`),
 * built and imported into the test cluster's containerd on first use. Progress goes to stderr.
 */
export const agentsImage = builtImage('agents', 'localhost/berth/agents', BUILD_TIMEOUT_MS);
