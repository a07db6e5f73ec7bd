import { render } from 'preact';
import { z } from 'zod';
import '@xterm/xterm/css/xterm.css';
import './styles/base.css';
import './styles/sessions.css';
import './styles/session.css';
import './styles/acp.css';
import { App } from './app.js';
import { start } from './berth.js';

// The strict CSP allows no eval: keep zod from probing `new Function` (a CSP violation report).
z.config({ jitless: true });

render(<App />, document.getElementById('app')!);
void start();
// A login link pasted into this tab changes only the fragment: no reload, so log in here.
window.addEventListener('hashchange', () => {
  if (location.hash.includes('code=')) void start();
});
