/**
 * The change in the workspace: `git status`, the diff (working tree vs HEAD, or against the base
 * branch from the merge-base), the file tree and a file viewer. All through `exec`.
 * @module
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { BerthClient } from '../../../src/api/index.js';
import { errorMessage, handleError } from '../berth.js';
import { buildTree, diffLineKind, type TreeDir } from '../lib/file-tree.js';
import { parseGitStatus, type GitStatus } from '../lib/git-status.js';
import { run, splitNul } from '../workspace.js';

const DIFF_CAP = 512 * 1024;
const FILE_CAP = 256 * 1024;
/** Untracked files shown in the diff (as new files), at most. */
const MAX_NEW_FILES = 50;

type Load<T> = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ok'; value: T };

export function ChangePanel(props: { client: BerthClient; id: string; enabled: boolean; baseBranch: string | null }): JSX.Element {
  const [refresh, setRefresh] = useState(0);
  if (!props.enabled) {
    return <p class="muted">The workspace is not running: resume the session to see its change and files.</p>;
  }
  return (
    <div class="change">
      <div class="section-tools">
        <button type="button" class="button small" onClick={() => setRefresh((n) => n + 1)}>
          Refresh
        </button>
      </div>
      <StatusAndDiff key={`d${refresh}`} {...props} />
      <Files key={`f${refresh}`} client={props.client} id={props.id} />
    </div>
  );
}

type Diff = { text: string; truncated: boolean; label: string };

function StatusAndDiff(props: { client: BerthClient; id: string; baseBranch: string | null }): JSX.Element {
  const [status, setStatus] = useState<Load<GitStatus>>({ kind: 'loading' });
  const [againstBase, setAgainstBase] = useState(false);
  const [diff, setDiff] = useState<Load<Diff>>({ kind: 'loading' });

  useEffect(() => {
    run(props.client, props.id, ['git', 'status', '--porcelain=v1', '-b'])
      .then((r) =>
        setStatus(r.exitCode === 0 ? { kind: 'ok', value: parseGitStatus(r.stdout) } : { kind: 'error', message: gitError(r.stderr) }),
      )
      .catch((err: unknown) => handleError(err) === 'api' && setStatus({ kind: 'error', message: errorMessage(err) }));
  }, [props.client, props.id]);

  const base = props.baseBranch ?? (status.kind === 'ok' ? status.value.upstream : null);

  useEffect(() => {
    setDiff({ kind: 'loading' });
    const ac = new AbortController();
    readDiff(props.client, props.id, againstBase ? base : null, ac.signal)
      .then(setDiff)
      .catch((err: unknown) => handleError(err) === 'api' && setDiff({ kind: 'error', message: errorMessage(err) }));
    return () => ac.abort();
  }, [props.client, props.id, againstBase, base]);

  return (
    <>
      <div class="subsection" data-testid="change-status">
        <h3>Status</h3>
        {status.kind === 'loading' && <p class="muted">Reading git status…</p>}
        {status.kind === 'error' && <p class="notice error">{status.message}</p>}
        {status.kind === 'ok' && <StatusList status={status.value} />}
      </div>
      <DiffSection diff={diff} base={base} againstBase={againstBase} onToggle={() => setAgainstBase((v) => !v)} />
    </>
  );
}

/**
 * The change as a diff: the working tree against HEAD, or with `base` against its merge-base with
 * HEAD; untracked files are added as new ones (git diff leaves them out).
 */
async function readDiff(client: BerthClient, id: string, base: string | null, signal: AbortSignal): Promise<Load<Diff>> {
  let argv = ['git', 'diff', 'HEAD'];
  let label = 'Working tree against HEAD';
  if (base) {
    const mb = await run(client, id, ['git', 'merge-base', base, 'HEAD'], { signal });
    if (mb.exitCode !== 0) return { kind: 'error', message: `No merge-base with ${base}: ${gitError(mb.stderr)}` };
    const sha = mb.stdout.trim();
    argv = ['git', 'diff', sha];
    label = `Working tree against ${base} (merge-base ${sha.slice(0, 8)})`;
  }
  const r = await run(client, id, argv, { capBytes: DIFF_CAP, signal });
  if (r.exitCode !== 0 && !r.truncated) return { kind: 'error', message: gitError(r.stderr) };
  let text = r.stdout;
  let truncated = r.truncated;
  const others = await run(client, id, ['git', 'ls-files', '-z', '--others', '--exclude-standard'], { signal });
  for (const path of splitNul(others.stdout).slice(0, MAX_NEW_FILES)) {
    if (truncated) break;
    const room = DIFF_CAP - text.length;
    const d = await run(client, id, ['git', 'diff', '--no-index', '--', '/dev/null', path], { capBytes: room, signal });
    text += d.stdout;
    truncated = d.truncated;
  }
  return { kind: 'ok', value: { text, truncated, label } };
}

function DiffSection(props: { diff: Load<Diff>; base: string | null; againstBase: boolean; onToggle: () => void }): JSX.Element {
  const { diff, base } = props;
  return (
    <div class="subsection">
      <div class="subsection-head">
        <h3>Diff</h3>
        <button
          type="button"
          class="button small"
          data-testid="diff-base"
          aria-pressed={props.againstBase}
          disabled={!base}
          title={base ? `Compare with ${base}` : 'No base branch is known for this session'}
          onClick={props.onToggle}
        >
          {base ? `Against ${base}` : 'Against the base branch'}
        </button>
      </div>
      <div data-testid="diff" class="diff-box">
        {diff.kind === 'loading' && <p class="muted">Reading the diff…</p>}
        {diff.kind === 'error' && <p class="notice error">{diff.message}</p>}
        {diff.kind === 'ok' && <DiffView {...diff.value} />}
      </div>
    </div>
  );
}

function StatusList({ status }: { status: GitStatus }): JSX.Element {
  return (
    <>
      <p class="small">
        On branch <strong class="mono">{status.branch ?? '(detached HEAD)'}</strong>
        {status.upstream && <span class="muted"> tracking {status.upstream}</span>}
        {status.ahead > 0 && <span> · {status.ahead} ahead</span>}
        {status.behind > 0 && <span> · {status.behind} behind</span>}
      </p>
      {status.entries.length === 0 ? (
        <p class="muted small">No changes: the working tree is clean.</p>
      ) : (
        <ul class="status-list">
          {status.entries.map((e) => (
            <li>
              <span class={`status-label label-${e.label.replace(/\s/g, '-')}`}>{e.label}</span>{' '}
              <span class="mono">{e.from ? `${e.from} → ${e.path}` : e.path}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function DiffView(props: Diff): JSX.Element {
  return (
    <>
      <p class="muted small">{props.label}</p>
      {props.text === '' ? (
        <p class="muted small">No differences.</p>
      ) : (
        <pre class="diff-text" tabIndex={0} aria-label="Diff">
          {props.text.replace(/\n$/, '').split('\n').map((line) => (
            <span class={`dl dl-${diffLineKind(line)}`}>{`${line}\n`}</span>
          ))}
        </pre>
      )}
      {props.truncated && <p class="notice">The diff is larger than {DIFF_CAP / 1024} KiB and was cut here; run <code>git diff</code> in the terminal for all of it.</p>}
    </>
  );
}

function Files(props: { client: BerthClient; id: string }): JSX.Element {
  const [tree, setTree] = useState<Load<{ root: TreeDir; count: number }>>({ kind: 'loading' });
  const [selected, setSelected] = useState<string | null>(null);
  useEffect(() => {
    void (async () => {
      try {
        let r = await run(props.client, props.id, ['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard']);
        let paths = splitNul(r.stdout);
        if (r.exitCode !== 0) {
          r = await run(props.client, props.id, ['find', '.', '-path', './.git', '-prune', '-o', '-type', 'f', '-print0']);
          paths = splitNul(r.stdout).map((p) => p.replace(/^\.\//, ''));
        }
        setTree({ kind: 'ok', value: { root: buildTree(paths.slice(0, 5000)), count: paths.length } });
      } catch (err) {
        if (handleError(err) === 'api') setTree({ kind: 'error', message: errorMessage(err) });
      }
    })();
  }, [props.client, props.id]);
  return (
    <div class="subsection files">
      <h3>Files</h3>
      <div class="files-grid">
        <nav class="file-tree" data-testid="file-tree" aria-label="Files in the workspace">
          {tree.kind === 'loading' && <p class="muted">Listing files…</p>}
          {tree.kind === 'error' && <p class="notice error">{tree.message}</p>}
          {tree.kind === 'ok' && tree.value.count === 0 && <p class="muted small">The workspace has no files.</p>}
          {tree.kind === 'ok' && <TreeNode dir={tree.value.root} selected={selected} onSelect={setSelected} depth={0} />}
          {tree.kind === 'ok' && tree.value.count > 5000 && <p class="muted small">Showing 5000 of {tree.value.count} files.</p>}
        </nav>
        <div class="file-view" data-testid="file-view">
          {selected ? <FileView key={selected} client={props.client} id={props.id} path={selected} /> : <p class="muted small">Choose a file to read it.</p>}
        </div>
      </div>
    </div>
  );
}

function TreeNode(props: { dir: TreeDir; selected: string | null; onSelect: (p: string) => void; depth: number }): JSX.Element {
  return (
    <ul class="tree">
      {props.dir.dirs.map((d) => (
        <li>
          <details open={props.depth < 1}>
            <summary>{d.name}/</summary>
            <TreeNode dir={d} selected={props.selected} onSelect={props.onSelect} depth={props.depth + 1} />
          </details>
        </li>
      ))}
      {props.dir.files.map((f) => (
        <li>
          <button
            type="button"
            class={`file-entry${props.selected === f.path ? ' selected' : ''}`}
            data-testid="file-entry"
            data-path={f.path}
            aria-current={props.selected === f.path ? 'true' : undefined}
            onClick={() => props.onSelect(f.path)}
          >
            {f.name}
          </button>
        </li>
      ))}
    </ul>
  );
}

function FileView(props: { client: BerthClient; id: string; path: string }): JSX.Element {
  const [file, setFile] = useState<Load<{ text: string; truncated: boolean; binary: boolean }>>({ kind: 'loading' });
  useEffect(() => {
    run(props.client, props.id, ['head', '-c', String(FILE_CAP + 1), '--', props.path], { capBytes: FILE_CAP })
      .then((r) =>
        setFile(
          r.exitCode === 0 || r.truncated
            ? { kind: 'ok', value: { text: r.stdout, truncated: r.truncated, binary: r.binary } }
            : { kind: 'error', message: r.stderr.trim() || `could not read ${props.path}` },
        ),
      )
      .catch((err: unknown) => handleError(err) === 'api' && setFile({ kind: 'error', message: errorMessage(err) }));
  }, [props.client, props.id, props.path]);
  return (
    <>
      <p class="file-path mono small">{props.path}</p>
      {file.kind === 'loading' && <p class="muted">Reading…</p>}
      {file.kind === 'error' && <p class="notice error">{file.message}</p>}
      {file.kind === 'ok' && file.value.binary && <p class="muted">A binary file: not shown.</p>}
      {file.kind === 'ok' && !file.value.binary && (
        <pre class="file-text" tabIndex={0} aria-label={`Contents of ${props.path}`}>
          {file.value.text}
        </pre>
      )}
      {file.kind === 'ok' && file.value.truncated && <p class="notice small">Only the first {FILE_CAP / 1024} KiB are shown.</p>}
    </>
  );
}

function gitError(stderr: string): string {
  const s = stderr.trim();
  if (/not a git repository/i.test(s)) return 'The workspace is not a git repository.';
  return s || 'git failed';
}
