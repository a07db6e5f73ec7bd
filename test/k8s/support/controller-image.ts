/**
 * The controller image: `berth serve` from this checkout's built dist/ and its production
 * node_modules on the agent image's Debian and Node, as uid 1000 (test/cluster/images/controller.sh).
 * Its tag hashes the built product, so a rebuilt dist/ gives a new image. The first test that asks
 * for it builds and imports it (`cluster.sh build-images controller`, serialized by a lock in the
 * cluster's cache, so parallel test files build it once); later calls find it and return at once.
 * dist/ must be built first (`npm run build`, and `npm run build:sea` for dist/agentctl-sea), as
 * scripts/test.sh does before the Kubernetes tests.
 */
import { builtImage } from './built-image.js';

/** A cold build (npm ci --omit=dev with better-sqlite3 compiled, layer, import) took ≈2–10 min on 2 loaded cores. */
const BUILD_TIMEOUT_MS = 15 * 60_000;
/** Per-test budget a caller's beforeAll should allow for a first build. */
export const CONTROLLER_IMAGE_BUILD_TIMEOUT_MS = BUILD_TIMEOUT_MS + 60_000;
export const CONTROLLER_IMAGE_REPOSITORY = 'localhost/berth/controller';

/**
 * The controller image's reference (`localhost/berth/controller:<package version>-<hash>`), built
 * and imported into the test cluster's containerd on first use. Progress goes to stderr.
 */
export const controllerImage = builtImage('controller', CONTROLLER_IMAGE_REPOSITORY, BUILD_TIMEOUT_MS);
