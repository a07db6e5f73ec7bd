/** The dashboard shell: login gate, header, banners and the page for the current route. @module */
import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { auth, connection, errorBanner, logout } from './berth.js';
import { useNow, useStore } from './hooks.js';
import { LaunchPage } from './pages/launch.js';
import { LoginPage } from './pages/login.js';
import { SessionPage } from './pages/session.js';
import { SessionsPage } from './pages/sessions.js';
import { Link, matchRoute, useRoute } from './router.js';

export function App(): JSX.Element {
  const a = useStore(auth);
  const path = useRoute();
  const route = matchRoute(path);
  useEffect(() => {
    document.title = route.page === 'launch' ? 'New launch · Berth' : route.page === 'session' ? `${route.id} · Berth` : 'Berth';
  }, [path]);
  return (
    <>
      <header class="topbar">
        <Link href="/" class="brand">
          Berth
        </Link>
        {a.kind === 'ready' && (
          <nav class="topnav" aria-label="Main">
            <Link href="/" aria-current={route.page === 'sessions' ? 'page' : undefined}>
              Sessions
            </Link>
            <Link href="/launch" data-testid="nav-launch" class="button primary small" aria-current={route.page === 'launch' ? 'page' : undefined}>
              New launch
            </Link>
            <button type="button" class="button ghost small" onClick={() => void logout()}>
              Log out
            </button>
          </nav>
        )}
      </header>
      <ReconnectingBanner />
      <ErrorBanner />
      <main class="page" id="main">
        {a.kind === 'checking' && <p class="muted loading">Connecting to Berth…</p>}
        {a.kind === 'login' && <LoginPage {...(a.error ? { error: a.error } : {})} />}
        {a.kind === 'ready' && route.page === 'sessions' && <SessionsPage />}
        {a.kind === 'ready' && route.page === 'launch' && <LaunchPage />}
        {a.kind === 'ready' && route.page === 'session' && <SessionPage key={route.id} id={route.id} />}
        {a.kind === 'ready' && route.page === 'not-found' && (
          <section class="empty">
            <h1>Nothing here</h1>
            <p>
              There is no page at <code>{route.path}</code>. <Link href="/">Back to the sessions</Link>
            </p>
          </section>
        )}
      </main>
    </>
  );
}

function ReconnectingBanner(): JSX.Element | null {
  const c = useStore(connection);
  const now = useNow(1000, c.down);
  if (!c.down) return null;
  const secs = c.nextTryAt ? Math.max(0, Math.ceil((c.nextTryAt - now) / 1000)) : 0;
  return (
    <div class="banner warn" role="status" data-testid="banner-reconnecting">
      <span>
        <strong>Berth is not answering.</strong> Retrying {secs > 0 ? `in ${secs} s` : 'now'} (attempt {c.attempt + 1}). If the
        server was stopped, start it again with <code>berth serve</code>; this page reconnects by itself.
      </span>
    </div>
  );
}

function ErrorBanner(): JSX.Element | null {
  const message = useStore(errorBanner);
  if (!message) return null;
  return (
    <div class="banner error" role="alert" data-testid="banner-error">
      <span>{message}</span>
      <button type="button" class="button ghost small" onClick={() => errorBanner.set(null)}>
        Dismiss
      </button>
    </div>
  );
}
