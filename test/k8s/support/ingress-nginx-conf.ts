/**
 * nginx.conf of the test stand-in ingress controller (ingress-nginx.ts), rendered from the Ingress
 * objects it read. It is modelled on ingress-nginx's defaults (its nginx.tmpl and ConfigMap
 * defaults) as far as the API, the dashboard and their streams are concerned — HTTP/1.1 to the
 * backend, Upgrade/Connection passed through a `map`, Host kept, X-Forwarded-*, proxy buffering off,
 * 60 s read/send timeouts, a 1m body limit, and their `nginx.ingress.kubernetes.io/*` annotations —
 * but it is not ingress-nginx: no Lua, no dynamic upstreams (a reload per change), no regex paths.
 * @module
 */
import type { V1Ingress } from '@kubernetes/client-node';

const ANNOTATION = 'nginx.ingress.kubernetes.io/';

/** ingress-nginx's defaults for what the annotations below override. */
const DEFAULTS = { proxyReadTimeout: '60', proxySendTimeout: '60', proxyBodySize: '1m', proxyConnectTimeout: '5' };

/** One path of one rule: where it goes and the Ingress's timeouts and body limit. */
export interface RenderedPath {
  path: string;
  pathType: 'Prefix' | 'Exact' | 'ImplementationSpecific';
  /** `ip:port` of each ready endpoint of the backend (none: 503, as ingress-nginx answers). */
  endpoints: string[];
  /** A name for the upstream block (unique per backend). */
  upstream: string;
  readTimeout: string;
  sendTimeout: string;
  connectTimeout: string;
  bodySize: string;
}

/** One host: its paths, and the certificate files when the Ingress lists it under `tls`. */
export interface RenderedServer {
  host: string;
  tls?: { certFile: string; keyFile: string };
  paths: RenderedPath[];
}

export interface ConfLayout {
  /** The prefix directory (`nginx -p`): pid, logs and temp files go there. */
  dir: string;
  httpPort: number;
  httpsPort: number;
}

/** The Ingress's annotation `name` (without the prefix) as an nginx time in seconds, or `dflt`. */
function seconds(ing: V1Ingress, name: string, dflt: string): string {
  const v = ing.metadata?.annotations?.[ANNOTATION + name] ?? dflt;
  if (!/^\d+$/.test(v)) throw new Error(`ingress ${ing.metadata?.name}: ${ANNOTATION}${name}=${JSON.stringify(v)} is not a number of seconds`);
  return `${v}s`;
}

/** The per-location settings an Ingress's annotations give (ingress-nginx's names). */
export function pathSettings(ing: V1Ingress): Pick<RenderedPath, 'readTimeout' | 'sendTimeout' | 'connectTimeout' | 'bodySize'> {
  const bodySize = ing.metadata?.annotations?.[`${ANNOTATION}proxy-body-size`] ?? DEFAULTS.proxyBodySize;
  if (!/^\d+[kKmMgG]?$/.test(bodySize)) throw new Error(`ingress ${ing.metadata?.name}: proxy-body-size ${JSON.stringify(bodySize)} is not an nginx size`);
  return {
    readTimeout: seconds(ing, 'proxy-read-timeout', DEFAULTS.proxyReadTimeout),
    sendTimeout: seconds(ing, 'proxy-send-timeout', DEFAULTS.proxySendTimeout),
    connectTimeout: seconds(ing, 'proxy-connect-timeout', DEFAULTS.proxyConnectTimeout),
    bodySize,
  };
}

function location(p: RenderedPath): string {
  const match = p.pathType === 'Exact' ? `= ${p.path}` : p.path;
  if (p.endpoints.length === 0) return `    location ${match} {\n      return 503;\n    }\n`;
  return [
    `    location ${match} {`,
    `      client_max_body_size ${p.bodySize};`,
    '      proxy_http_version 1.1;',
    // $http_host: the Host the client sent, port included (ingress-nginx's $best_http_host).
    '      proxy_set_header Host $http_host;',
    '      proxy_set_header Upgrade $http_upgrade;',
    '      proxy_set_header Connection $connection_upgrade;',
    '      proxy_set_header X-Request-ID $request_id;',
    '      proxy_set_header X-Real-IP $remote_addr;',
    '      proxy_set_header X-Forwarded-For $remote_addr;',
    '      proxy_set_header X-Forwarded-Host $http_host;',
    '      proxy_set_header X-Forwarded-Port $server_port;',
    '      proxy_set_header X-Forwarded-Proto $scheme;',
    '      proxy_set_header X-Scheme $scheme;',
    `      proxy_connect_timeout ${p.connectTimeout};`,
    `      proxy_read_timeout ${p.readTimeout};`,
    `      proxy_send_timeout ${p.sendTimeout};`,
    '      proxy_buffering off;',
    '      proxy_request_buffering on;',
    '      proxy_next_upstream error timeout;',
    `      proxy_pass http://${p.upstream};`,
    '    }',
    '',
  ].join('\n');
}

function server(s: RenderedServer, layout: ConfLayout): string {
  const lines = ['  server {', `    server_name ${s.host};`, `    listen 127.0.0.1:${layout.httpPort};`];
  if (s.tls) {
    lines.push(`    listen 127.0.0.1:${layout.httpsPort} ssl;`, `    ssl_certificate ${s.tls.certFile};`, `    ssl_certificate_key ${s.tls.keyFile};`);
    lines.push('    ssl_protocols TLSv1.2 TLSv1.3;');
    // ingress-nginx's ssl-redirect (on by default for a TLS host): plain HTTP is sent to HTTPS.
    lines.push(`    if ($scheme = http) {\n      return 308 https://$host:${layout.httpsPort}$request_uri;\n    }`);
  }
  return `${lines.join('\n')}\n${s.paths.map(location).join('')}  }\n`;
}

/** The whole nginx.conf: one server per host, one upstream per backend with endpoints. */
export function renderNginxConf(servers: RenderedServer[], layout: ConfLayout): string {
  const { dir } = layout;
  const upstreams = new Map<string, string[]>();
  for (const p of servers.flatMap((s) => s.paths)) if (p.endpoints.length > 0) upstreams.set(p.upstream, p.endpoints);
  const tmp = (name: string): string => `  ${name}_temp_path ${dir}/tmp/${name};`;
  return [
    '# Rendered by test/k8s/support/ingress-nginx.ts: a test stand-in modelled on ingress-nginx, not ingress-nginx.',
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    'worker_processes 1;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log notice;`,
    'events {\n  worker_connections 1024;\n}',
    'http {',
    `  log_format upstreaminfo '$remote_addr "$request" $status $body_bytes_sent $request_time "$http_host" $upstream_addr $upstream_status';`,
    `  access_log ${dir}/access.log upstreaminfo;`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(tmp),
    '  server_names_hash_bucket_size 128;',
    '  map $http_upgrade $connection_upgrade {\n    default upgrade;\n    \'\' close;\n  }',
    ...[...upstreams].map(([name, eps]) => `  upstream ${name} {\n${eps.map((e) => `    server ${e} max_fails=0;\n`).join('')}  }`),
    // Hosts no rule names: 404, as ingress-nginx's default backend answers.
    `  server {\n    listen 127.0.0.1:${layout.httpPort} default_server;\n    return 404;\n  }`,
    ...servers.map((s) => server(s, layout)),
    '}',
    '',
  ].join('\n');
}
