/** The launch form: repository, branch, agent, executor/profile, prompt, env. @module */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { LaunchRequest } from '../../../src/controller/service.js';
import { BerthApiError } from '../../../src/api/errors.js';
import { errorMessage, handleError, launchOptions, type LaunchOptions } from '../berth.js';
import { useClient } from '../hooks.js';
import { parseEnvLines } from '../lib/env-lines.js';
import { repositoryRef } from '../lib/launch-request.js';
import { navigate } from '../router.js';

export function LaunchPage(): JSX.Element {
  const client = useClient();
  const [options, setOptions] = useState<LaunchOptions | null>(null);
  const [optionsError, setOptionsError] = useState<string | null>(null);
  const [repository, setRepository] = useState('');
  const [branch, setBranch] = useState('');
  const [agent, setAgent] = useState('');
  const [executor, setExecutor] = useState('');
  const [name, setName] = useState('');
  const [prompt, setPrompt] = useState('');
  const [env, setEnv] = useState('');
  const [error, setError] = useState<{ field: string | null; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    launchOptions(client)
      .then((o) => {
        setOptions(o);
        setAgent((a) => a || o.defaults.agent);
        setExecutor((x) => x || o.defaults.executor);
      })
      .catch((err: unknown) => {
        if (handleError(err) === 'api') setOptionsError(errorMessage(err));
      });
  }, [client]);

  const onSubmit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    const parsedEnv = parseEnvLines(env);
    if (!parsedEnv.ok) {
      setError({ field: 'env', message: parsedEnv.message });
      document.getElementById('launch-env')?.focus();
      return;
    }
    const req: LaunchRequest = {};
    const repo = repositoryRef(repository, branch);
    if (repo) req.repository = repo;
    if (agent) req.agent = agent;
    if (executor) req.executor = executor;
    if (name.trim()) req.name = name.trim();
    if (prompt.trim()) req.prompt = prompt;
    if (Object.keys(parsedEnv.env).length > 0) req.env = parsedEnv.env;
    setBusy(true);
    try {
      const session = await client.launch(req);
      navigate(`/sessions/${encodeURIComponent(session.id)}`);
    } catch (err) {
      setBusy(false);
      if (handleError(err) !== 'api') return;
      setError({ field: err instanceof BerthApiError ? (err.field ?? null) : null, message: errorMessage(err) });
    }
  };

  const invalid = (field: string): boolean => error?.field === field || (error?.field?.startsWith(`${field}.`) ?? false);
  const executorType = options?.targets.find((t) => t.name === executor)?.type;

  return (
    <section class="card form-card" aria-labelledby="launch-title">
      <h1 id="launch-title">New launch</h1>
      {/* data-options says when the config's agents, executors and defaults are in the selects */}
      <form
        data-testid="launch-form"
        data-options={options ? 'loaded' : optionsError ? 'error' : 'loading'}
        aria-busy={!options && !optionsError}
        onSubmit={(e) => void onSubmit(e)}
        noValidate
      >
        {error && (
          <p class="notice error" role="alert" data-testid="launch-error">
            {error.message}
          </p>
        )}
        {optionsError && (
          <p class="notice error" role="alert" data-testid="launch-error">
            Could not read the agents and executors of the config: {optionsError}
          </p>
        )}
        <div class="field">
          <label for="launch-repository">Repository</label>
          <input
            id="launch-repository"
            data-testid="launch-repository"
            value={repository}
            onInput={(e) => setRepository(e.currentTarget.value)}
            placeholder="/path/to/repo or https://host/org/repo.git"
            aria-invalid={invalid('repository')}
            aria-describedby="launch-repository-help"
            autocomplete="off"
            spellcheck={false}
          />
          <p class="help" id="launch-repository-help">
            A path on the machine running <code>berth serve</code>, or a clone URL.
            {executorType === 'kubernetes' ? ' Leave empty for an empty workspace.' : ''}
          </p>
        </div>
        <div class="field-row">
          <div class="field">
            <label for="launch-branch">Branch</label>
            <input
              id="launch-branch"
              data-testid="launch-branch"
              value={branch}
              onInput={(e) => setBranch(e.currentTarget.value)}
              placeholder="default branch"
              aria-invalid={invalid('repository.branch')}
              autocomplete="off"
              spellcheck={false}
            />
          </div>
          <div class="field">
            <label for="launch-name">Name (optional)</label>
            <input id="launch-name" value={name} onInput={(e) => setName(e.currentTarget.value)} autocomplete="off" aria-invalid={invalid('name')} />
          </div>
        </div>
        <div class="field-row">
          <div class="field">
            <label for="launch-agent">Agent</label>
            <select id="launch-agent" data-testid="launch-agent" value={agent} onChange={(e) => setAgent(e.currentTarget.value)} aria-invalid={invalid('agent')}>
              {!options && <option value="">Loading…</option>}
              {options?.agents.map((a) => (
                <option value={a}>
                  {a}
                  {a === options.defaults.agent ? ' (default)' : ''}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="launch-executor">Executor / profile</label>
            <select
              id="launch-executor"
              data-testid="launch-executor"
              value={executor}
              onChange={(e) => setExecutor(e.currentTarget.value)}
              aria-invalid={invalid('executor')}
            >
              {!options && <option value="">Loading…</option>}
              {options?.targets.map((t) => (
                <option value={t.name}>
                  {targetLabel(t, options.defaults.executor)}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div class="field">
          <label for="launch-prompt">Prompt</label>
          <textarea
            id="launch-prompt"
            data-testid="launch-prompt"
            rows={4}
            value={prompt}
            onInput={(e) => setPrompt(e.currentTarget.value)}
            placeholder="What should the agent do?"
            aria-invalid={invalid('prompt')}
          />
        </div>
        <div class="field">
          <label for="launch-env">Environment</label>
          <textarea
            id="launch-env"
            data-testid="launch-env"
            rows={3}
            class="mono"
            value={env}
            onInput={(e) => setEnv(e.currentTarget.value)}
            placeholder={'KEY=VALUE, one per line'}
            aria-invalid={invalid('env')}
            aria-describedby="launch-env-help"
            spellcheck={false}
          />
          <p class="help" id="launch-env-help">
            Extra environment for the agent. Lines starting with # are ignored.
          </p>
        </div>
        <div class="actions">
          <button type="submit" class="button primary" data-testid="launch-submit" disabled={busy}>
            {busy ? 'Launching…' : 'Launch'}
          </button>
        </div>
      </form>
    </section>
  );
}

function targetLabel(t: LaunchOptions['targets'][number], defaultName: string): string {
  const kind = t.kind === 'profile' ? `${t.type} profile` : t.name === t.type ? '' : t.type;
  return `${t.name}${kind ? ` — ${kind}` : ''}${t.name === defaultName ? ' (default)' : ''}`;
}
