/** The "log in" screen: the dashboard is opened with a one-time link from `berth dashboard`. @module */
import type { JSX } from 'preact';

export function LoginPage(props: { error?: string }): JSX.Element {
  return (
    <section class="card login" data-testid="login-required" aria-labelledby="login-title">
      <h1 id="login-title">Log in to Berth</h1>
      {props.error && (
        <p class="notice error" role="alert" data-testid="login-error">
          {props.error}
        </p>
      )}
      <p>The dashboard opens with a one-time link. In a terminal on this machine, run:</p>
      <pre class="command">
        <code>berth dashboard</code>
      </pre>
      <p class="muted">
        It prints a link (valid for 5 minutes, usable once) that logs this browser in. Add <code>--open</code> to open it
        directly. Berth must be running (<code>berth serve</code>).
      </p>
      <p class="muted">A login holds for the browser tab it was opened in (reloads included); another tab needs a link of its own.</p>
    </section>
  );
}
