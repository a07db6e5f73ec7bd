import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_SANITIZED_LENGTH, sanitize } from './sanitize.js';

const HOME = { home: '/home/nobody' };
const UID = '3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f';

describe('sanitize: what must go', () => {
  it.each([
    ['a 64-hex nonce', 'nonce 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 rejected', '9f86d081884c7d659a2feaa0c55ad015'],
    ['an agentctl token in prose', `token ${'a1'.repeat(32)} leaked`, 'a1a1a1a1a1a1a1a1'],
    ['a 40-hex token (git object ids have its shape and go too)', 'auth 3b18e512dba79e4c8300dd08aeb37f8e728b8dad failed', '3b18e512dba79e4c'],
    ['a 32-hex API key', 'api call with 0123456789abcdef0123456789abcdef failed', '0123456789abcdef'],
    ['a bearer header', 'GET failed: Authorization: Bearer abcdef0123456789', 'abcdef0123456789'],
    ['a bare bearer value', 'sent Bearer shorttoken123', 'shorttoken123'],
    ['a basic header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpw'],
    ['a bare basic value', 'retrying with Basic dXNlcjpwYXNz', 'dXNlcjpwYXNz'],
    ['a JSON authorization field', '{"authorization":"Bearer abc.def-ghi"}', 'abc.def-ghi'],
    ['token=', 'config token=s3cr3t-value failed', 's3cr3t-value'],
    ['password=', 'login password=hunter2 refused', 'hunter2'],
    ['a JSON nonce field', '{"nonce":"n-0123"}', 'n-0123'],
    ['a quoted client_secret', '"client_secret": "abc123xyz"', 'abc123xyz'],
    ['an environment assignment', 'env BERTH_AGENTCTL_TOKEN=deadbeef01 refused', 'deadbeef01'],
    ['access_token= outside a URL', 'form access_token=zzz9 rejected', 'zzz9'],
    ['an --api-key flag', 'ran tool --api-key k-12345 --verbose', 'k-12345'],
    ['a --password= flag', 'ran tool --password=hunter2', 'hunter2'],
    ['URL credentials', 'clone https://user:pa55@example.com/repo.git failed', 'pa55'],
    ['URL credentials with an unencoded @', "clone 'https://user:pa@55x@example.com/repo.git' failed", '55x'],
    ['a token as the URL user name', 'clone https://tok3n-value@example.com/repo.git failed', 'tok3n-value'],
    ['URL query strings', 'fetch https://example.com/x?access_token=zzz failed', 'zzz'],
    ['a GitHub token', 'push with ghp_ABCDEFGHIJKLMNOP failed', 'ABCDEFGHIJKLMNOP'],
    ['a fine-grained GitHub token', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123', '11ABCDEFG0123456789'],
    ['an OpenAI project key', 'key sk-proj-AbCdEf0123456789xyzXYZ rejected', 'AbCdEf0123456789'],
    ['an Anthropic key', 'key sk-ant-api03-Zq8xK2mP9vL4rT7n rejected', 'Zq8xK2mP9vL4rT7n'],
    ['a Slack token', 'xoxb-1234567890-abcdefghij', '1234567890-abcdefghij'],
    ['a GitLab token', 'glpat-Ab12Cd34Ef56Gh78Ij90', 'Ab12Cd34Ef56Gh78Ij90'],
    ['an AWS access key id', 'aws AKIAIOSFODNN7EXAMPLE denied', 'IOSFODNN7EXAMPLE'],
    ['an npm token', `npm_${'aB3'.repeat(12)}`, 'aB3aB3aB3aB3'],
    ['a JWT', 'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok', 'dozjgNryP4J3jVmNHl0w5N'],
    ['a padded base64 blob', 'secret blob dGhpcyBpcyBhIHNlY3JldCB2YWx1ZSB0aGF0IGlzIGxvbmc= here', 'dGhpcyBpcyBhIHNlY3J'],
    ['a base64 blob with / and +', 'key q3Jx8/Zk+W2mN7pQ4rT9vB1cL6dF0gH5jK8sA3eY7uI0 here', 'W2mN7pQ4rT9vB1cL6'],
    ['an unpadded base64 blob with /', 'key Xq7bK2mZ9pL4rT8sW1vN/3bC6dF0gH5jK8aE2yU7iO4 here', 'Xq7bK2mZ9pL4rT8s'],
    ['a base64url token cut by - and _', 'token Zx3_k9-AbQ7mP2vL8nR4tY6wE1sD5fG0hJ2k used', 'AbQ7mP2vL8nR4tY6'],
    ['a base32 secret', 'otp JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP set', 'JBSWY3DPEHPK3PXP'],
    ['an opaque component of an absolute path', '/run/berth/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08/auth.env', '9f86d081884c7d65'],
    ['a home directory user name', 'cannot read /home/alice/.ssh/id_rsa', 'alice'],
    ['a macOS home user name', 'cannot read /Users/bob/src/app', 'bob'],
  ])('redacts %s', (_name, input, secret) => {
    const out = sanitize(input, HOME);
    expect(out).not.toContain(secret);
    expect(out).toMatch(/\*\*\*|~/);
  });

  it('removes exact known secrets, raw and percent-encoded, before any pattern', () => {
    const out = sanitize('clone https://x:p%40ss%2Fw@h/r failed: bad p@ss/w', { secrets: ['p@ss/w', undefined, ''] });
    expect(out).not.toContain('p@ss/w');
    expect(out).not.toContain('p%40ss%2Fw');
  });

  it('keeps the vendor prefix so the user can tell which credential leaked', () => {
    expect(sanitize('push with ghp_ABCDEFGHIJKLMNOP failed')).toBe('push with ghp_*** failed');
    expect(sanitize('key sk-proj-AbCdEf0123456789xyzXYZ rejected')).toBe('key sk-proj-*** rejected');
  });

  it('replaces only the value of a pair, so the message still names it', () => {
    expect(sanitize('config token=s3cr3t-value failed')).toBe('config token=*** failed');
    expect(sanitize('GET failed: Authorization: Bearer abcdef0123456789')).toBe('GET failed: Authorization: ***');
    expect(sanitize('clone https://user:pa55@example.com/repo.git failed')).toBe('clone https://***@example.com/repo.git failed');
  });
});

describe('sanitize: what must survive', () => {
  it.each([
    ['a namespace/pod pair', 'Successfully assigned berth-t-3f9a/berth-6212a06cac8b50f7 to berth-node'],
    ['a long namespace/pod pair and node name', 'Successfully assigned team-agents-staging/berth-session-6212a06cac8b50f7 to ip-10-0-1-23.eu-west-1.compute.internal'],
    ['a Kubernetes UID', `Pod "berth-6212a06cac8b50f7" (UID: ${UID}) not found`],
    ['a precondition UID pair', `Precondition failed: UID in precondition: ${UID}, UID in object meta: 9b1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f`],
    ['a volume name', `MountVolume.SetUp failed for volume "pvc-${UID}" : mount failed`],
    ['a managed PVC name', 'persistentvolumeclaim berth-6212a06cac8b50f7-workspace is being deleted'],
    ['a scheduling message', "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available"],
    ['an image digest', 'Pulling image "docker.io/library/busybox@sha256:9ae97d36d26566ff84e8893c64a6dc4fe8ca6d1144bf5b87b2b85a32def253c7"'],
    ['an image reference', 'Back-off pulling image "registry.example.com/team/agent-image-with-a-long-name:1.2.3"'],
    ['an absolute path with CamelCase names', 'cannot open /workspace/src/components/UserProfileCardWithAvatar2.tsx'],
    ['a relative path', 'see src/executors/kubernetes/launch/pod-ready-and-monitor.ts:120'],
    ['a library path', 'loading /usr/lib/gcc/x86_64-linux-gnu/12/libstdc++.so.6 failed'],
    ['a data-dir path', 'cannot remove /tmp/berth-test-XyZ12a/data/workspaces/s-0123456789abcdef/repo'],
    ['a Java class name', 'at com.example.service.UserAccountServiceImplementation.run'],
    ['an environment assignment with a path', 'BERTH_WORKSPACE_PATH=/workspace/very/long/path/to/something is not writable'],
    ['a long lowercase name', 'session berth-session-with-a-very-long-descriptive-name-x exists'],
    ['a long plain word', 'pneumonoultramicroscopicsilicovolcanoconiosis is a word'],
    ['a separator line', '================================ build output ================================'],
    ['label selectors', 'app.kubernetes.io/managed-by=berth,berth.dev/session=s-0123456789ab'],
    ['a forbidden secrets list', 'secrets is forbidden: User "system:serviceaccount:berth-t-abc:berth-executor" cannot list resource "secrets"'],
    ['a plain-word bearer', 'Bearer token expired; Basic authentication is disabled'],
    ['a URL path (the repository)', 'clone https://example.org/you/app.git failed'],
    ['a process error', 'not_found: process p-1 in /workspace/src/a.ts'],
  ])('keeps %s', (_name, input) => {
    expect(sanitize(input, HOME)).toBe(input);
  });

  it('reduces URLs to scheme and host on request (spec §2.6), keeping the host', () => {
    expect(sanitize('pull "https://u:t@registry.example/v2/team/agent/manifests/1.2?token=abc" failed', { urls: 'origin' })).toBe(
      'pull "https://registry.example" failed',
    );
    expect(sanitize('GET https://cluster.example:6443/api/v1/namespaces/private/pods: 403', { urls: 'origin' })).toBe(
      'GET https://cluster.example:6443 403',
    );
  });
});

describe('sanitize: home and length', () => {
  it('replaces the home directory with ~ and keeps other paths', () => {
    expect(sanitize('cannot read /home/alice/.berth/workspaces/s1/repo', { home: '/home/alice' })).toBe('cannot read ~/.berth/workspaces/s1/repo');
    expect(sanitize('cannot read /root/.local/share/berth and /rootfs/x', { home: '/root' })).toBe('cannot read ~/.local/share/berth and /rootfs/x');
    expect(sanitize('cannot read /home/alice/.ssh/id_rsa')).toBe('cannot read ~/.ssh/id_rsa');
    expect(sanitize('file /srv/home/alice/x')).toBe('file /srv/home/alice/x');
  });

  it('caps the length at the default or the given maximum', () => {
    expect(sanitize('x '.repeat(10_000)).length).toBe(MAX_SANITIZED_LENGTH);
    const short = sanitize('x '.repeat(10_000), { maxLength: 1024 });
    expect(short.length).toBe(1024);
    expect(short.endsWith('…')).toBe(true);
  });
});

describe('sanitize module', () => {
  // The browser-safe client (src/client) and the bundled agentctl import it: it must stay pure.
  it.each(['./sanitize.ts', './secret-shapes.ts'])('%s imports no Node module and uses no Node globals', (file) => {
    const text = readFileSync(new URL(file, import.meta.url), 'utf8');
    for (const m of text.matchAll(/^import\b[^;]*?from '([^']+)'/gm)) expect(m[1]).toBe('./secret-shapes.js');
    expect(text).not.toMatch(/\b(Buffer|process|require)\s*[.(]/);
  });
});

describe('sanitize on generated values', () => {
  // mulberry32: a fixed seed keeps the cases the same on every run
  function rng(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const pick = (next: () => number, alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

  it('redacts at least 99% of random base64 and base64url tokens of 32-48 characters, and every hex one', () => {
    const next = rng(8);
    let missed = 0;
    const n = 2000;
    for (let i = 0; i < n; i++) {
      const token = pick(next, B64 + (i % 2 === 0 ? '+/' : '-_'), 32 + Math.floor(next() * 17));
      if (sanitize(`got ${token} back`).includes(token.slice(0, 10))) missed++;
      const hex = pick(next, '0123456789abcdef', 32 + Math.floor(next() * 33));
      expect(sanitize(`got ${hex} back`)).toBe('got *** back');
    }
    expect(missed / n).toBeLessThan(0.01);
  });

  it('keeps every generated UUID, pvc volume name and namespace/pod pair', () => {
    const next = rng(9);
    const hex = (k: number) => pick(next, '0123456789abcdef', k);
    const lower = (k: number) => pick(next, 'abcdefghijklmnopqrstuvwxyz0123456789', k);
    for (let i = 0; i < 500; i++) {
      const uuid = `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
      const line = `assigned team-${lower(6)}-agents/berth-${hex(16)} to node-${lower(5)}.zone-${lower(3)}.internal; volume "pvc-${uuid}" (UID: ${uuid})`;
      expect(sanitize(line)).toBe(line);
    }
  });
});
