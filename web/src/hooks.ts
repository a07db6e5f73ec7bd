/** Preact hooks over the dashboard's stores. @module */
import { useEffect, useState } from 'preact/hooks';
import type { BerthClient } from '../../src/api/index.js';
import { auth } from './berth.js';
import type { Store } from './lib/store.js';

export function useStore<T>(store: Store<T>): T {
  const [value, setValue] = useState(store.get());
  useEffect(() => {
    setValue(store.get());
    return store.subscribe(setValue);
  }, [store]);
  return value;
}

/** The logged-in client (pages render only once logged in). */
export function useClient(): BerthClient {
  const a = useStore(auth);
  if (a.kind !== 'ready') throw new Error('not logged in');
  return a.client;
}

/** `Date.now()`, re-rendered every `ms` while `active` (for ages and live bars; no API calls). */
export function useNow(ms: number, active = true): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms, active]);
  return now;
}
