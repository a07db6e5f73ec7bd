import { describe, expect, it } from 'vitest';
import { allowedHosts, cookieValue, hostName, hostProblem, originProblem } from './guard.js';

describe('allowedHosts / hostProblem', () => {
  const hosts = allowedHosts(7420);

  it.each(['127.0.0.1:7420', 'localhost:7420', '[::1]:7420', 'LOCALHOST:7420'])('accepts %s', (host) => {
    expect(hostProblem(host, hosts)).toBeNull();
  });

  it.each([
    ['a rebinding name', 'evil.example:7420'],
    ['another port', '127.0.0.1:7421'],
    ['no port', '127.0.0.1'],
    ['a suffix', '127.0.0.1:7420.evil.example'],
  ])('refuses %s, naming the Host', (_name, host) => {
    expect(hostProblem(host, hosts)).toContain(JSON.stringify(host));
  });

  it('refuses a request without a Host header', () => {
    expect(hostProblem(undefined, hosts)).toMatch(/no Host header/);
  });

  it('adds the --host address, an IPv6 one in brackets, but not a wildcard', () => {
    expect(hostProblem('192.168.1.5:8000', allowedHosts(8000, '192.168.1.5'))).toBeNull();
    expect(hostProblem('[fd00::1]:8000', allowedHosts(8000, 'fd00::1'))).toBeNull();
    expect(allowedHosts(8000, '0.0.0.0')).toEqual(allowedHosts(8000));
    expect(hostName('fd00::1')).toBe('[fd00::1]');
  });

  it('accepts the bare name on port 80 only', () => {
    expect(hostProblem('localhost', allowedHosts(80))).toBeNull();
  });

  describe('public hosts (--public-host)', () => {
    const pub = allowedHosts(8080, '0.0.0.0', ['berth.agents.svc', 'berth.example.com', 'fd00::7']);

    it.each(['berth.agents.svc', 'berth.agents.svc:80', 'BERTH.example.com', 'berth.example.com:443', 'berth.example.com:8080', '[fd00::7]:80', '127.0.0.1:8080'])(
      'accepts %s (a Service or Ingress name, with any port)',
      (host) => {
        expect(hostProblem(host, pub)).toBeNull();
      },
    );

    it.each(['evil.example', 'berth.agents.svc.evil.example', 'x.berth.example.com', 'berth.example.com:', 'berth.example.com:80:80', '127.0.0.1:80'])(
      'refuses %s',
      (host) => {
        expect(hostProblem(host, pub)).toContain(JSON.stringify(host));
      },
    );

    it('lists them in the refusal', () => {
      expect(hostProblem('evil.example', pub)).toContain('berth.agents.svc:*');
    });
  });
});

describe('originProblem', () => {
  it("accepts the server's own origin", () => {
    expect(originProblem('http://127.0.0.1:7420', '127.0.0.1:7420')).toBeNull();
  });

  it.each([
    ['another site', 'http://evil.example'],
    ['another loopback name', 'http://localhost:7420'],
    ['https', 'https://127.0.0.1:7420'],
    ['an opaque origin', 'null'],
  ])('refuses %s', (_name, origin) => {
    expect(originProblem(origin, '127.0.0.1:7420')).toMatch(/not this server's origin/);
  });

  it('refuses a missing Origin', () => {
    expect(originProblem(undefined, '127.0.0.1:7420')).toMatch(/needs an Origin/);
  });

  it('accepts https where the server or a proxy in front speaks TLS, and only the schemes given', () => {
    expect(originProblem('https://berth.example.com', 'berth.example.com', ['http', 'https'])).toBeNull();
    expect(originProblem('http://127.0.0.1:8080', '127.0.0.1:8080', ['http', 'https'])).toBeNull();
    expect(originProblem('https://127.0.0.1:7420', '127.0.0.1:7420', ['https'])).toBeNull();
    expect(originProblem('http://127.0.0.1:7420', '127.0.0.1:7420', ['https'])).toMatch(/not this server's origin \(https:\/\/127\.0\.0\.1:7420\)/);
    expect(originProblem('https://evil.example', 'berth.example.com', ['http', 'https'])).toMatch(/not this server's origin/);
  });

  it('points at --secure-cookie when an https page reaches a plain-HTTP server', () => {
    expect(originProblem('https://berth.example.com', 'berth.example.com')).toMatch(/--secure-cookie/);
  });
});

describe('cookieValue', () => {
  it('finds a cookie among others', () => {
    expect(cookieValue('a=1; berth_session=xyz; b=2', 'berth_session')).toBe('xyz');
    expect(cookieValue('xberth_session=no', 'berth_session')).toBeUndefined();
    expect(cookieValue(undefined, 'berth_session')).toBeUndefined();
  });
});
