/**
 * Client-side routing over the History API: `useRoute()` gives the current path, `navigate()`
 * pushes one, `<Link>` is a real link (keyboard, middle click, copy link all work).
 * @module
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { createStore } from './lib/store.js';

const path = createStore(typeof location === 'undefined' ? '/' : location.pathname);

if (typeof window !== 'undefined') window.addEventListener('popstate', () => path.set(location.pathname));

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  path.set(new URL(to, location.origin).pathname);
  window.scrollTo(0, 0);
}

export function useRoute(): string {
  const [value, setValue] = useState(path.get());
  useEffect(() => path.subscribe(setValue), []);
  return value;
}

type Route = { page: 'sessions' } | { page: 'launch' } | { page: 'session'; id: string } | { page: 'not-found'; path: string };

export function matchRoute(p: string): Route {
  if (p === '/' || p === '/sessions' || p === '/sessions/') return { page: 'sessions' };
  if (p === '/launch') return { page: 'launch' };
  const m = /^\/sessions\/([^/]+)\/?$/.exec(p);
  if (m) return { page: 'session', id: decodeURIComponent(m[1]!) };
  return { page: 'not-found', path: p };
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  'data-testid'?: string;
  'aria-current'?: 'page' | undefined;
}

export function Link(props: LinkProps): JSX.Element {
  const { href, children, ...rest } = props;
  const onClick = (e: MouseEvent): void => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a {...rest} href={href} onClick={onClick}>
      {children}
    </a>
  );
}
