/**
 * The dashboard's connection to `berth serve`: login (one-time code, or the session this tab
 * already holds), the typed client in cookie mode, and what any call's error means for the whole page:
 * 401 → the "log in" screen; a dropped connection → the reconnecting banner, retried with
 * backoff until the server answers again (then `epoch` bumps so live views reopen their streams).
 * @module
 */
import { BerthApiError, BerthClient, ControllerUnreachableError, StreamBrokenError, type LaunchOptions } from '../../src/api/index.js';
import { backoffDelay, sleep } from './lib/backoff.js';
import { createStore } from './lib/store.js';

type Auth =
  | { kind: 'checking' }
  | { kind: 'login'; error?: string }
  | { kind: 'ready'; client: BerthClient };

interface ConnectionState {
  down: boolean;
  attempt: number;
  /** When the next try is due (ms since epoch), while down. */
  nextTryAt: number | null;
}

export const auth = createStore<Auth>({ kind: 'checking' });
export const connection = createStore<ConnectionState>({ down: false, attempt: 0, nextTryAt: null });
/** Bumps each time the connection comes back: live views depend on it to reopen their streams. */
export const epoch = createStore(0);
/** A page-wide error (a failed action) shown in `banner-error`. */
export const errorBanner = createStore<string | null>(null);

function baseClient(csrf?: string): BerthClient {
  return new BerthClient({ baseUrl: location.origin, token: null, ...(csrf ? { csrf } : {}) });
}

/**
 * The CSRF token is told once, at the code exchange, and the cookie is refused without it. It is
 * kept in sessionStorage: a reload of this tab stays logged in, and a page on another port (another
 * origin) cannot read it, though the browser hands that page the cookie.
 */
const CSRF_KEY = 'berth.csrf';
/** The same, in memory: without storage (a locked-down browser) the login holds until a reload. */
let csrfInMemory: string | null = null;

function storedCsrf(): string | null {
  try {
    return sessionStorage.getItem(CSRF_KEY) ?? csrfInMemory;
  } catch {
    return csrfInMemory;
  }
}

function storeCsrf(csrf: string | null): void {
  csrfInMemory = csrf;
  try {
    if (csrf === null) sessionStorage.removeItem(CSRF_KEY);
    else sessionStorage.setItem(CSRF_KEY, csrf);
  } catch {
    // Kept in memory only.
  }
}

/** Shows the login screen and forgets the token of the session that ended. */
function loggedOut(error?: string): void {
  storeCsrf(null);
  auth.set(error !== undefined ? { kind: 'login', error } : { kind: 'login' });
}

/** On load: exchange `#code=` from the address bar, or check the session this tab holds. */
export async function start(): Promise<void> {
  const code = new URLSearchParams(location.hash.slice(1)).get('code');
  if (code) history.replaceState(null, '', `${location.pathname}${location.search}`);
  if ((await login(code)) === 'down') markDown(() => login(code));
}

async function login(code: string | null): Promise<Outcome> {
  try {
    let csrf: string | null;
    if (code) {
      ({ csrf } = await baseClient().dashboardLogin(code));
      storeCsrf(csrf);
    } else {
      csrf = storedCsrf();
      if (csrf === null) {
        loggedOut();
        return 'login';
      }
      await baseClient(csrf).dashboardSession();
    }
    auth.set({ kind: 'ready', client: baseClient(csrf) });
    return 'ok';
  } catch (err) {
    if (isConnectionError(err)) return 'down';
    if (err instanceof BerthApiError && (err.status === 401 || err.status === 403)) {
      loggedOut(code ? err.message : undefined);
    } else {
      loggedOut(errorMessage(err));
    }
    return 'login';
  }
}

export async function logout(): Promise<void> {
  const a = auth.get();
  if (a.kind !== 'ready') return;
  try {
    await a.client.dashboardLogout();
  } catch (err) {
    if (handleError(err) === 'api') errorBanner.set(errorMessage(err));
    return;
  }
  loggedOut();
}

export function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/** The server did not answer or the stream broke off (a fetch network error is a TypeError). */
export function isConnectionError(err: unknown): boolean {
  return err instanceof ControllerUnreachableError || err instanceof StreamBrokenError || err instanceof TypeError;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Decides what an error means for the page: `abort` (ignore it), `handled` (login screen or
 * reconnecting banner took over) or `api` (the caller shows the message where it belongs).
 */
export function handleError(err: unknown): 'abort' | 'handled' | 'api' {
  if (isAbort(err)) return 'abort';
  if (err instanceof BerthApiError && err.status === 401) {
    loggedOut('Your dashboard session has ended.');
    return 'handled';
  }
  if (isConnectionError(err)) {
    markDown();
    return 'handled';
  }
  return 'api';
}

type Outcome = 'ok' | 'login' | 'down';

let recovering = false;

/**
 * Marks the server as not answering and retries `check` with backoff until it answers; then the
 * banner goes and `epoch` bumps (or the login screen shows, when the cookie session is gone).
 */
export function markDown(check: () => Promise<Outcome> = probe): void {
  if (recovering) return;
  recovering = true;
  void (async () => {
    for (let attempt = 0; ; attempt++) {
      const delay = backoffDelay(attempt);
      connection.set({ down: true, attempt, nextTryAt: Date.now() + delay });
      await sleep(delay);
      const outcome = await check();
      if (outcome === 'down') continue;
      recovering = false;
      connection.set({ down: false, attempt: 0, nextTryAt: null });
      if (outcome === 'ok') epoch.update((n) => n + 1);
      return;
    }
  })();
}

async function probe(): Promise<Outcome> {
  const csrf = storedCsrf();
  if (csrf === null) {
    loggedOut();
    return 'login';
  }
  try {
    await baseClient(csrf).dashboardSession();
    return 'ok';
  } catch (err) {
    if (err instanceof BerthApiError && err.status === 401) {
      loggedOut('Berth restarted and your dashboard session ended.');
      return 'login';
    }
    return err instanceof BerthApiError ? 'ok' : 'down';
  }
}

let optionsPromise: Promise<LaunchOptions> | null = null;

/** The config's agents, executors/profiles and defaults (fetched once per page load). */
export function launchOptions(client: BerthClient): Promise<LaunchOptions> {
  optionsPromise ??= client.launchOptions().catch((err: unknown) => {
    optionsPromise = null;
    throw err;
  });
  return optionsPromise;
}
