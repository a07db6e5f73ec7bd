/** The launch form: repository, branch, agent, executor/profile, prompt, env. @module */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BerthApiError, type BerthClient, type LaunchOptions } from '../../../src/api/index.js';
import { errorMessage, handleError, launchOptions } from '../berth.js';
import { useClient } from '../hooks.js';
import { parseEnvLines } from '../lib/env-lines.js';
import { EMPTY_LAUNCH_FIELDS, launchRequestOf, type LaunchFields } from '../lib/launch-request.js';
import { navigate } from '../router.js';

type FormError = { field: string | null; message: string };
type Target = LaunchOptions['targets'][number];

/** What each group of fields gets: the values, a setter per field, and whether the last error names a field. */
interface FieldProps {
  fields: LaunchFields;
  onField: (field: keyof LaunchFields) => (e: { currentTarget: { value: string } }) => void;
  invalid: (field: string) => boolean;
}

export function LaunchPage(): JSX.Element {
  const client = useClient();
  const [fields, setFields] = useState<LaunchFields>(EMPTY_LAUNCH_FIELDS);
  const { options, optionsError } = useLaunchOptions(client, setFields);
  const [error, setError] = useState<FormError | null>(null);
  const [busy, setBusy] = useState(false);

  const onSubmit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setError(null);
    const parsedEnv = parseEnvLines(fields.env);
    if (!parsedEnv.ok) {
      setError({ field: 'env', message: parsedEnv.message });
      document.getElementById('launch-env')?.focus();
      return;
    }
    setBusy(true);
    try {
      const session = await client.launch(launchRequestOf(fields, parsedEnv.env));
      navigate(`/sessions/${encodeURIComponent(session.id)}`);
    } catch (err) {
      setBusy(false);
      if (handleError(err) !== 'api') return;
      setError({ field: err instanceof BerthApiError ? (err.field ?? null) : null, message: errorMessage(err) });
    }
  };

  const props: FieldProps = {
    fields,
    onField: (field) => (e) => {
      const value = e.currentTarget.value;
      setFields((f) => ({ ...f, [field]: value }));
    },
    invalid: (field) => error?.field === field || (error?.field?.startsWith(`${field}.`) ?? false),
  };
  const repositoryOptional = options?.targets.find((t) => t.name === fields.executor)?.capabilities.repositoryOptional === true;

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
        <LaunchNotices error={error} optionsError={optionsError} />
        <RepositoryFields {...props} repositoryOptional={repositoryOptional} />
        <TargetFields {...props} options={options} />
        <TaskFields {...props} />
        <div class="actions">
          <button type="submit" class="button primary" data-testid="launch-submit" disabled={busy}>
            {busy ? 'Launching…' : 'Launch'}
          </button>
        </div>
      </form>
    </section>
  );
}

/** The config's agents and executors; when they arrive, the defaults fill the selects left empty. */
function useLaunchOptions(
  client: BerthClient,
  setFields: (update: (f: LaunchFields) => LaunchFields) => void,
): { options: LaunchOptions | null; optionsError: string | null } {
  const [options, setOptions] = useState<LaunchOptions | null>(null);
  const [optionsError, setOptionsError] = useState<string | null>(null);
  useEffect(() => {
    launchOptions(client)
      .then((o) => {
        setOptions(o);
        setFields((f) => ({ ...f, agent: f.agent || o.defaults.agent, executor: f.executor || o.defaults.executor }));
      })
      .catch((err: unknown) => {
        if (handleError(err) === 'api') setOptionsError(errorMessage(err));
      });
  }, [client, setFields]);
  return { options, optionsError };
}

function LaunchNotices({ error, optionsError }: { error: FormError | null; optionsError: string | null }): JSX.Element {
  return (
    <>
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
    </>
  );
}

/** The repository (a path or a clone URL), its branch, and the session's name. */
function RepositoryFields({ fields, onField, invalid, repositoryOptional }: FieldProps & { repositoryOptional: boolean }): JSX.Element {
  return (
    <>
      <div class="field">
        <label for="launch-repository">Repository</label>
        <input
          id="launch-repository"
          data-testid="launch-repository"
          value={fields.repository}
          onInput={onField('repository')}
          placeholder="/path/to/repo or https://host/org/repo.git"
          aria-invalid={invalid('repository')}
          aria-describedby="launch-repository-help"
          autocomplete="off"
          spellcheck={false}
        />
        <p class="help" id="launch-repository-help">
          A path on the machine running <code>berth serve</code>, or a clone URL.
          {repositoryOptional ? ' Leave empty for an empty workspace.' : ''}
        </p>
      </div>
      <div class="field-row">
        <div class="field">
          <label for="launch-branch">Branch</label>
          <input
            id="launch-branch"
            data-testid="launch-branch"
            value={fields.branch}
            onInput={onField('branch')}
            placeholder="default branch"
            aria-invalid={invalid('repository.branch')}
            autocomplete="off"
            spellcheck={false}
          />
        </div>
        <div class="field">
          <label for="launch-name">Name (optional)</label>
          <input id="launch-name" value={fields.name} onInput={onField('name')} autocomplete="off" aria-invalid={invalid('name')} />
        </div>
      </div>
    </>
  );
}

/** The agent profile and the executor (or profile) from the config, the defaults marked. */
function TargetFields({ fields, onField, invalid, options }: FieldProps & { options: LaunchOptions | null }): JSX.Element {
  return (
    <div class="field-row">
      <div class="field">
        <label for="launch-agent">Agent</label>
        <select id="launch-agent" data-testid="launch-agent" value={fields.agent} onChange={onField('agent')} aria-invalid={invalid('agent')}>
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
        <select id="launch-executor" data-testid="launch-executor" value={fields.executor} onChange={onField('executor')} aria-invalid={invalid('executor')}>
          {!options && <option value="">Loading…</option>}
          {options?.targets.map((t) => (
            <option value={t.name}>{targetLabel(t, options.defaults.executor)}</option>
          ))}
        </select>
      </div>
    </div>
  );
}

/** The prompt and the agent's extra environment. */
function TaskFields({ fields, onField, invalid }: FieldProps): JSX.Element {
  return (
    <>
      <div class="field">
        <label for="launch-prompt">Prompt</label>
        <textarea
          id="launch-prompt"
          data-testid="launch-prompt"
          rows={4}
          value={fields.prompt}
          onInput={onField('prompt')}
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
          value={fields.env}
          onInput={onField('env')}
          placeholder={'KEY=VALUE, one per line'}
          aria-invalid={invalid('env')}
          aria-describedby="launch-env-help"
          spellcheck={false}
        />
        <p class="help" id="launch-env-help">
          Extra environment for the agent. Lines starting with # are ignored.
        </p>
      </div>
    </>
  );
}

function targetLabel(t: Target, defaultName: string): string {
  const kind = t.kind === 'profile' ? `${t.type} profile` : t.name === t.type ? '' : t.type;
  return `${t.name}${kind ? ` — ${kind}` : ''}${t.name === defaultName ? ' (default)' : ''}`;
}
