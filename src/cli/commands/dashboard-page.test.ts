import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loginPageHtml, PAGE_DIR_PREFIX, PAGE_TTL_MS, sweepLoginPages, writeLoginPage } from './dashboard-page.js';

const URL_WITH_CODE = 'http://127.0.0.1:7420/#code=AbC-12_xyz';

describe('loginPageHtml', () => {
  it('redirects to the URL by script and by meta refresh, and links to it', () => {
    const html = loginPageHtml(URL_WITH_CODE);
    expect(html).toContain(`<meta http-equiv="refresh" content="0;url=${URL_WITH_CODE}">`);
    expect(html).toContain(`location.replace("${URL_WITH_CODE}")`);
    expect(html).toContain(`<a href="${URL_WITH_CODE}">`);
  });

  it('escapes what could end the attribute or the script', () => {
    const html = loginPageHtml('http://h/#code=a"b</script><x>&');
    expect(html).not.toContain('</script><x>');
    expect(html).toContain('content="0;url=http://h/#code=a&quot;b&lt;/script&gt;&lt;x&gt;&amp;"');
    expect(html).toContain('\\u003c/script>');
  });
});

describe('writeLoginPage', () => {
  const dirs: string[] = [];
  const scheduled: string[] = [];
  const keep = { removeLater: (dir: string) => void scheduled.push(dir) };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const dataDir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'berth-page-'));
    dirs.push(d);
    return d;
  };

  it('writes the page 0600 in a new 0700 directory under state/', () => {
    const data = dataDir();
    const file = writeLoginPage(data, URL_WITH_CODE, new Date(), keep);
    expect(dirname(dirname(file))).toBe(join(data, 'state'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).toBe(loginPageHtml(URL_WITH_CODE));
    expect(writeLoginPage(data, URL_WITH_CODE, new Date(), keep)).not.toBe(file);
    expect(scheduled, 'its removal is scheduled').toContain(dirname(file));
  });

  it('removes pages older than a minute left by earlier runs, and nothing else', () => {
    const data = dataDir();
    const state = join(data, 'state');
    const old = dirname(writeLoginPage(data, URL_WITH_CODE, new Date(), keep));
    const fresh = dirname(writeLoginPage(data, URL_WITH_CODE, new Date(), keep));
    mkdirSync(join(state, 'other'));
    const past = (Date.now() - PAGE_TTL_MS - 5_000) / 1000;
    utimesSync(old, past, past);
    sweepLoginPages(state, Date.now());
    const left = readdirSync(state);
    expect(left).toContain('other');
    expect(left.filter((n) => n.startsWith(PAGE_DIR_PREFIX))).toEqual([fresh.slice(state.length + 1)]);
  });
});
