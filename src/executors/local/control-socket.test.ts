import { existsSync, lstatSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bindControlSocket, controlSocketPath, openEndpoint, probeEndpoint } from './control-socket.js';

const fetchText = async (port: number, path: string): Promise<string> => (await fetch(`http://127.0.0.1:${port}${path}`)).text();

describe("agentctl's control socket", () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const sessionDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-ctlsock-'));
    dirs.push(dir);
    return dir;
  };

  it('is bound 0600 at the session path, replacing what was left there, and stays after this process lets go', async () => {
    const dir = sessionDir();
    writeFileSync(controlSocketPath(dir), 'stale');
    const bound = await bindControlSocket(dir);
    expect(bound.fd).toBeGreaterThan(2);
    expect(lstatSync(controlSocketPath(dir)).isSocket()).toBe(true);
    expect(statSync(controlSocketPath(dir)).mode & 0o777).toBe(0o600);
    await bound.release();
    // nobody holds it now (no agentctl was given the descriptor): the path stays, connections are refused
    expect(lstatSync(controlSocketPath(dir)).isSocket()).toBe(true);
    expect(existsSync(`${controlSocketPath(dir)}.bind`)).toBe(false);
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => connect(controlSocketPath(dir)).on('error', resolve));
    expect(err.code).toBe('ECONNREFUSED');
  });

  it('is reached through a loopback relay that carries the instance API too, and closes with it', async () => {
    const dir = sessionDir();
    const agentctl = createServer((req, res) => res.end(`${req.headers['x-instance-id'] ?? 'control'} ${req.url}`));
    servers.push(agentctl);
    await new Promise<void>((r) => agentctl.listen(controlSocketPath(dir), r));
    const endpoint = await openEndpoint({ sessionDir: dir, privateNetwork: true, controlPort: null });
    expect(endpoint.instanceBaseUrl).toBe(`http://127.0.0.1:${endpoint.port}`);
    expect(await fetchText(endpoint.port, '/health')).toBe('control /health');
    const viaInstance = await fetch(`http://127.0.0.1:${endpoint.port}/x`, { headers: { 'x-instance-id': 'i-1' } });
    expect(await viaInstance.text()).toBe('i-1 /x');
    expect(await probeEndpoint({ sessionDir: dir, privateNetwork: true, controlPort: null })).toBe(false); // a fake agentctl: not a health body
    await endpoint.close();
    await expect(fetch(`http://127.0.0.1:${endpoint.port}/health`)).rejects.toThrow();
  });

  it('fails when the socket is not there; a plain session keeps its loopback port', async () => {
    const dir = sessionDir();
    await expect(openEndpoint({ sessionDir: dir, privateNetwork: true, controlPort: null })).rejects.toThrow(/control socket .* is not there/);
    expect(await probeEndpoint({ sessionDir: dir, privateNetwork: true, controlPort: null })).toBe(false);
    const plain = await openEndpoint({ sessionDir: dir, controlPort: 40123 });
    expect(plain).toMatchObject({ port: 40123, instanceBaseUrl: null });
  });
});
