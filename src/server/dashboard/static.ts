/**
 * Serves the built web app (`dist/web`): the hashed `/assets/*` files, other files of the build
 * by name, and `index.html` for every other path (the app's own routes). Strict security headers
 * on all of it; nothing outside the web root is ever read.
 * @module
 */
import { readFile, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  // 'unsafe-inline' for styles only: xterm.js writes a <style> element. No inline scripts, no eval.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
};

type StaticTarget =
  /** A file of the build (`immutable`: a hashed asset that may be cached for good). */
  | { kind: 'file'; path: string; immutable: boolean; fallback: boolean }
  | { kind: 'not_found' };

/**
 * What a GET of `pathname` maps to under `webRoot` (pure): a file inside the root (an
 * `/assets/` path, or any other path that may fall back to index.html), or not found for
 * anything that would leave the root or cannot be a file name.
 */
export function staticTarget(webRoot: string, pathname: string): StaticTarget {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return { kind: 'not_found' };
  }
  const isAsset = decoded.startsWith('/assets/');
  const segments = decoded.split('/').filter((s) => s !== '');
  const bad = segments.some((s) => s === '.' || s === '..' || s.includes('\\') || s.includes('\0'));
  if (bad) return { kind: 'not_found' };
  const root = resolve(webRoot);
  const path = resolve(root, ...segments);
  if (path !== root && !path.startsWith(root + sep)) return { kind: 'not_found' };
  if (isAsset) return { kind: 'file', path, immutable: true, fallback: false };
  return { kind: 'file', path: segments.length === 0 ? join(root, 'index.html') : path, immutable: false, fallback: true };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function sendText(res: ServerResponse, status: number, text: string, headOnly: boolean): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(headOnly ? undefined : text);
}

/** Answers a GET/HEAD of a non-API path from `webRoot`. */
export async function serveStatic(webRoot: string, pathname: string, res: ServerResponse, opts: { headOnly?: boolean } = {}): Promise<void> {
  const headOnly = opts.headOnly ?? false;
  const target = staticTarget(webRoot, pathname);
  if (target.kind === 'not_found') return sendText(res, 404, `not found: ${pathname.slice(0, 200)}\n`, headOnly);
  let path = target.path;
  let immutable = target.immutable;
  if (!(await isFile(path))) {
    if (!target.fallback) return sendText(res, 404, `not found: ${pathname.slice(0, 200)}\n`, headOnly);
    path = join(resolve(webRoot), 'index.html');
    immutable = false;
    if (!(await isFile(path))) {
      return sendText(res, 503, `the dashboard is not built (no ${path}): run \`npm run build\`, then restart berth serve\n`, headOnly);
    }
  }
  const body = await readFile(path);
  const isIndex = path === join(resolve(webRoot), 'index.html');
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
    'cache-control': isIndex ? 'no-store' : immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    'content-length': body.length,
  });
  res.end(headOnly ? undefined : body);
}
