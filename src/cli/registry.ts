/**
 * The command table of `berth`: names, flags, positionals and help text, and a lazy loader for
 * each command's implementation (so `berth --help` loads none of them).
 * @module
 */
import type { CommandRun, CommandSpec, OptionSpec } from './types.js';

/** Flags every command accepts. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  'data-dir': { type: 'string', value: 'DIR', description: 'data dir (default: $BERTH_DATA_DIR or ~/.local/share/berth)' },
  server: {
    type: 'string',
    value: 'URL',
    description: 'a remote berth controller, e.g. https://berth.example.com (default: $BERTH_SERVER, else the current context of berth login, else the local data dir\'s serve)',
  },
  config: { type: 'string', value: 'FILE', description: 'config file (default: <data-dir>/berth.yaml if present)' },
  output: { type: 'string', short: 'o', value: 'FORMAT', description: 'output format where supported: table|wide|json|yaml' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

const launchOptions: Record<string, OptionSpec> = {
  repo: { type: 'string', value: 'URL|PATH', description: 'repository to work on: a clone URL or a local path (required)' },
  branch: { type: 'string', value: 'NAME', description: 'branch to check out' },
  agent: { type: 'string', value: 'NAME', description: 'agent profile from the config, or a built-in one: demo, demo-acp (the demo agent speaking ACP: asks before it writes a file) (default: defaults.agent in berth.yaml, else demo)' },
  executor: { type: 'string', value: 'NAME', description: 'executor or profile from the config (default: defaults.executor in berth.yaml, else local)' },
  name: {
    type: 'string',
    value: 'NAME',
    description: 'a unique name for the session, usable wherever an ID is (1-63 letters, digits, ".", "_", "-")',
  },
  env: { type: 'string', multiple: true, value: 'K=V', description: 'extra environment for the agent (repeatable)' },
  'secret-env': {
    type: 'string',
    multiple: true,
    value: 'NAME',
    description: "pass the controller's environment variable NAME to the agent (repeatable); NAME must be listed in secret_env of the executor or profile in berth.yaml; the value is read by berth serve at launch and resume, never stored",
  },
  prompt: { type: 'string', value: 'TEXT', description: 'task text handed to the agent (at most 96 KiB)' },
  'prompt-file': { type: 'string', value: 'FILE', description: 'read the task text from FILE (- for stdin) instead of --prompt' },
  detach: { type: 'boolean', short: 'd', description: 'print the session id and return without waiting for the launch' },
};

const cmd = <T extends { run: CommandRun }>(loader: () => Promise<T>) => async (): Promise<CommandRun> => (await loader()).run;

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'serve',
    summary: 'run the controller and its HTTP API (foreground)',
    usage: 'serve [--port N] [--host H] [--tls-cert FILE --tls-key FILE] [--token-file FILE] [--public-host NAME]',
    description:
      'Runs the controller for the data dir and serves the API on 127.0.0.1. Writes the bearer token to <data-dir>/state/api-token (mode 0600) and the port to <data-dir>/serve.json. Only one serve per data dir. Stop it with Ctrl-C or SIGTERM (workspaces keep running). Environment: BERTH_PORT (default port), BERTH_API_TOKEN_FILE (default --token-file), BERTH_PUBLIC_HOSTS (default --public-host, a comma list), BERTH_LOG_LEVEL (pino level, default info; logs go to stderr).',
    options: {
      port: { type: 'string', value: 'N', description: 'port to listen on, 0 picks a free one (default: 7420)' },
      host: {
        type: 'string',
        value: 'H',
        description: 'address to listen on (default: 127.0.0.1); anything but loopback makes the API reachable from the network (a warning is printed)',
      },
      'tls-cert': { type: 'string', value: 'FILE', description: 'serve HTTPS with this PEM certificate chain (with --tls-key); remote clients connect with berth login https://... --ca CA-FILE' },
      'tls-key': { type: 'string', value: 'FILE', description: 'the PEM private key of --tls-cert' },
      'token-file': {
        type: 'string',
        value: 'FILE',
        description:
          'read the API token from FILE (e.g. a mounted Secret; at least 32 characters) instead of making a new random one at each start; it is still written to <data-dir>/state/api-token',
      },
      'public-host': {
        type: 'string',
        multiple: true,
        value: 'NAME',
        description:
          'another name clients reach the server by, e.g. a Service DNS name or an Ingress host (repeatable, or a comma list); the Host check (against DNS rebinding) accepts it with any port, besides the loopback names and --host',
      },
      'secure-cookie': {
        type: 'boolean',
        description: 'mark the dashboard cookie Secure and accept an https:// Origin: for TLS terminated in front of serve, e.g. by an Ingress (on with --tls-cert)',
      },
      lease: {
        type: 'string',
        value: 'NAME',
        description:
          'run as one replica of several sharing a Postgres store (store.backend: postgres): only the holder of the Lease NAME (in $POD_NAMESPACE) runs the controller, the others wait as standbys (/readyz 503) and take over when it lapses (also $BERTH_LEASE)',
      },
    },
    positionals: [],
    formats: [],
    load: cmd(() => import('./commands/serve.js')),
  },
  {
    name: 'dashboard',
    summary: 'print a one-time login link to the web dashboard',
    usage: 'dashboard [--open]',
    description:
      "Asks the running berth serve for a one-time login code and prints the dashboard URL with it (http://127.0.0.1:PORT/#code=...). The link is valid for 5 minutes, once: opening it logs that browser tab in (an HttpOnly session cookie plus a token the tab keeps, valid until 12 hours unused or until berth serve restarts) and removes the code from the address bar. The code is in the URL's fragment, so it never reaches a server log. Run it again for another browser or tab. With --open, xdg-open gets a private file (mode 0600, in <dataDir>/state/, removed after a minute) that redirects the browser to the link, so the code never appears on a command line other users can read.",
    options: { open: { type: 'boolean', description: 'open the link in the default browser (xdg-open, through a private redirect file)' } },
    positionals: [],
    formats: [],
    load: cmd(() => import('./commands/dashboard.js')),
    examples: ['berth dashboard', 'berth dashboard --open'],
  },
  {
    name: 'launch',
    summary: 'launch a session and show its stages live',
    usage: 'launch [--repo URL|PATH] [--agent NAME] [--executor NAME] [flags]',
    description:
      'Creates a session and follows its launch stage by stage (each with its duration; while a stage waits, the reason). The repository is checked first (a local path must be a git repository, a file:// or git:// URL must answer, --branch must exist there): a bad one is refused before any session exists. A local session needs --repo; a Kubernetes session launched without one starts in an empty workspace. A local --repo path is sent into a Kubernetes Pod as a git bundle (branches and history). Ends with the session id and how to get in. Exits 1 if the launch fails, naming the failed stage, or if the agent exits with an error within a second of starting (its exit code and last output lines are shown). Exits 5 if berth serve goes away meanwhile (the launch goes on when it is back). With -o json|yaml the progress goes to stderr and the final session view to stdout; with --detach only the id is printed. Ctrl-C stops following (the launch continues). Credentials in an http(s) --repo URL are split off: the session shows the URL without them, the credential is stored encrypted and used only for the clone (the workspace\'s origin has no credentials).',
    options: launchOptions,
    positionals: [],
    formats: ['table', 'json', 'yaml'],
    load: cmd(() => import('./commands/launch.js')),
    examples: ['berth launch --repo https://github.com/org/app.git --branch main --agent demo', 'berth launch --repo . --name fix-tests --prompt "make the tests pass"', 'berth launch --repo https://user:TOKEN@git.example.com/app.git --secret-env ANTHROPIC_API_KEY'],
  },
  {
    name: 'ls',
    summary: 'list sessions',
    usage: 'ls [-o table|wide|json|yaml]',
    description: "AGENT-STATE is the agent process: running, exited (CODE), exited (killed by a signal or lost) or - (none, e.g. stopped); an ACP agent waiting for a person shows waits for approval (N): answer with berth approve ID. A ready session whose agent exited can be given a new one with: berth resume ID.",
    options: {},
    positionals: [],
    formats: ['table', 'wide', 'json', 'yaml'],
    load: cmd(() => import('./commands/ls.js')),
  },
  {
    name: 'status',
    summary: "a session's state, stages and timings",
    usage: 'status ID [-o table|json|yaml]',
    options: {},
    positionals: ['ID'],
    formats: ['table', 'json', 'yaml'],
    load: cmd(() => import('./commands/status.js')),
  },
  {
    name: 'egress',
    summary: "the connections the session's agent made through the egress proxy",
    usage: 'egress [--limit N] ID [-o table|json|yaml]',
    description:
      "For a session whose profile has network: (its agent's connections go through Berth's egress proxy): one line per connection, oldest first — when it started, allowed or denied (with the reason), the method (CONNECT for a tunnel), host:port, the upstream HTTP status of a forwarded request, bytes up and down, and for a brokered model API request the provider with its input/output tokens — then the summary: connections, denied, bytes, broker requests and tokens over the records kept (the latest 10,000). -o json prints {summary, records}. berth status shows the summary line too.",
    options: { limit: { type: 'string', value: 'N', description: 'the latest N records (1-10000, default: 1000)' } },
    positionals: ['ID'],
    formats: ['table', 'json', 'yaml'],
    load: cmd(() => import('./commands/egress.js')),
    examples: ['berth egress my-session', 'berth egress --limit 20 my-session', 'berth egress -o json my-session'],
  },
  {
    name: 'logs',
    summary: "the agent's output",
    usage: 'logs [-f] [-p] [--from N] ID',
    description:
      "Prints the agent's output (raw, stdout and stderr as the agent wrote them). For an ACP agent (protocol: acp, e.g. --agent demo-acp) of a ready session it prints the transcript instead: prompts, the agent's messages, tool calls with their status and the diffs of edits, permission requests and their answers, and each turn's end with its token usage; -o json prints its typed events, one JSON object per line, and --from N starts at event N (a stopped ACP session, and --previous, show the agent's raw stderr). With -f it keeps streaming until the agent exits, then prints 'agent exited with code N' on stderr and exits 0. If the controller goes away meanwhile (berth serve stopped or died), it exits 5 with the command that picks up where it stopped (berth logs -f --from N ID). A stopped session (local executor) still shows what its last agent run wrote. With --previous it shows the agent run before the current one (each berth resume that starts the agent again begins a new run); it exits 4 when there is none.",
    options: {
      follow: { type: 'boolean', short: 'f', description: 'keep streaming until the agent exits (Ctrl-C to stop)' },
      previous: { type: 'boolean', short: 'p', description: 'the agent run before the current one (a finished run: -f ends after it)' },
      from: { type: 'string', value: 'N', description: 'start at output chunk N, or event N of an ACP agent (default: 0)' },
    },
    positionals: ['ID'],
    formats: ['table', 'json'],
    load: cmd(() => import('./commands/logs.js')),
  },
  {
    name: 'exec',
    summary: 'run a command in the workspace; exits with its exit code',
    usage: 'exec [--cwd DIR] [--env K=V] [-i] ID -- CMD [ARG...]',
    description:
      "Runs CMD (no shell; use `sh -c '...'` for one) in the session's workspace (a session suspended while idle wakes first), streams its stdout/stderr, and exits with its exit code (128+N when killed by signal N; 127 when CMD is not found, 126 when it cannot be executed). Exits 5, never a code of the command's, when berth serve goes away before the command ends (its status is then unknown). With -i, berth's stdin is read to the end and given to the command.",
    options: {
      cwd: { type: 'string', value: 'DIR', description: 'working directory, relative to the workspace' },
      env: { type: 'string', multiple: true, value: 'K=V', description: 'extra environment (repeatable)' },
      stdin: { type: 'boolean', short: 'i', description: "pass berth's stdin to the command" },
    },
    positionals: ['ID'],
    rest: 'required',
    formats: [],
    load: cmd(() => import('./commands/exec.js')),
    examples: ['berth exec s1 -- git status', "berth exec s1 -- sh -c 'npm test'"],
  },
  {
    name: 'send',
    summary: "send a line of input to the agent (its stdin), or a new turn to an ACP agent",
    usage: 'send [-n] [--eof] ID [TEXT]',
    description:
      "Writes TEXT and a newline to the stdin of the session's running agent (a session suspended while idle wakes first; agents that read instructions line by line, like the demo agent, answer in berth logs -f ID). With -n no newline is added; with --eof the agent's stdin is closed afterwards (TEXT may then be left out). For an ACP agent (protocol: acp) TEXT is a new turn in the same conversation instead (--eof is refused; exits 4 while a turn is still running: wait for it or berth cancel ID). Exits 4 when the agent is not running.",
    options: {
      'no-newline': { type: 'boolean', short: 'n', description: 'do not add a newline after TEXT' },
      eof: { type: 'boolean', description: "close the agent's stdin after writing" },
    },
    positionals: ['ID', 'TEXT?'],
    formats: [],
    load: cmd(() => import('./commands/send.js')),
    examples: ['berth send s1 "status"', 'berth send --eof s1'],
  },
  {
    name: 'approve',
    summary: "answer a permission request an ACP agent waits on",
    usage: 'approve [--deny] [--always] [--request R] ID',
    description:
      "An ACP agent (protocol: acp, approve: ask) asks before it runs a tool such as an edit; the session then shows pending approvals (berth status ID, berth ls) and the request in berth logs ID. This answers the oldest pending request (or --request R): allow, or --deny (the agent leaves the tool call undone). With --always the agent's allow-always (or reject-always) option is picked where it offers one. Exits 4 when nothing is pending.",
    options: {
      deny: { type: 'boolean', description: 'deny instead of allow' },
      always: { type: 'boolean', description: "answer the same for such calls from now on (the agent's always option)" },
      request: { type: 'string', value: 'R', description: 'the request to answer (default: the oldest pending one)' },
    },
    positionals: ['ID'],
    formats: ['table', 'json', 'yaml'],
    load: cmd(() => import('./commands/acp.js').then((m) => ({ run: m.approve }))),
    examples: ['berth approve s1', 'berth approve --deny s1'],
  },
  {
    name: 'cancel',
    summary: "cancel the turn an ACP agent is working on",
    usage: 'cancel ID',
    description:
      'Cancels the turn in flight of an ACP agent (protocol: acp): the agent stops and the turn ends as cancelled (a pending permission request with it); the agent keeps running and takes the next berth send. Exits 4 when no turn runs or the agent is not an ACP agent.',
    options: {},
    positionals: ['ID'],
    formats: [],
    load: cmd(() => import('./commands/acp.js').then((m) => ({ run: m.cancel }))),
  },
  {
    name: 'shell',
    summary: 'an interactive shell in the workspace',
    usage: 'shell ID',
    description:
      'Opens an interactive shell under a real PTY in the workspace (via `script` from util-linux; a session suspended while idle wakes first). The terminal is put in raw mode and window resizes are forwarded. Exit the shell (or press Ctrl-D) to leave. Exits with the shell\'s exit code, or 5 when berth serve goes away (which ends the shell).',
    options: {},
    positionals: ['ID'],
    formats: [],
    load: cmd(() => import('./commands/shell.js')),
  },
  {
    name: 'stop',
    summary: 'stop the agent, keep the workspace',
    usage: 'stop ID',
    options: {},
    positionals: ['ID'],
    formats: ['table', 'json', 'yaml'],
    load: cmd(() => import('./commands/lifecycle.js').then((m) => ({ run: m.stop }))),
  },
  {
    name: 'resume',
    summary: 'bring a stopped or failed session back (shows stages like launch)',
    usage: 'resume [--detach] ID',
    description:
      'Brings a stopped or failed session back: agentctl is restarted in the kept workspace and the agent started again. On a ready session whose agent has exited, only a new agent is started (stage agent_start). On a ready session whose agent is running there is nothing to do: exits 4.',
    options: { detach: launchOptions.detach! },
    positionals: ['ID'],
    formats: ['table', 'json', 'yaml'],
    load: cmd(() => import('./commands/launch.js').then((m) => ({ run: m.resume }))),
  },
  {
    name: 'rm',
    summary: 'destroy the workspace and forget the session',
    usage: 'rm [--force] ID',
    options: { force: { type: 'boolean', short: 'f', description: 'remove even when cleanup fails partially' } },
    positionals: ['ID'],
    formats: [],
    load: cmd(() => import('./commands/lifecycle.js').then((m) => ({ run: m.rm }))),
  },
  {
    name: 'login',
    summary: 'store a remote controller and its API token, and use it from now on',
    usage: 'login [--name N] [--ca FILE] [--token-stdin] URL',
    description:
      "Stores a remote berth controller (https://; http:// on loopback only, e.g. a port-forward) as a named context in $XDG_CONFIG_HOME/berth/config.yaml (default ~/.config/berth/config.yaml, mode 0600) and makes it current: every command then talks to it, until berth context use local. The token is read from stdin with --token-stdin, else prompted for without echo; it is never printed. It is the controller's API token: the file <data-dir>/state/api-token of its data dir. The server's certificate is verified against Node's CA store, plus the bundle given with --ca (a private CA); there is no way to turn verification off. The URL, TLS and the token are checked before anything is stored. Precedence: --server, --data-dir, $BERTH_SERVER, $BERTH_DATA_DIR, the current context, the default data dir; a server given by --server or $BERTH_SERVER uses the token of the context with the same URL.",
    options: {
      name: { type: 'string', value: 'N', description: 'the context name (default: the host and port of URL)' },
      ca: { type: 'string', value: 'FILE', description: "a PEM bundle of the CA that signed the server's certificate (trusted besides Node's CA store)" },
      'token-stdin': { type: 'boolean', description: 'read the token from stdin instead of prompting' },
    },
    positionals: ['URL'],
    formats: [],
    load: cmd(() => import('./commands/login.js').then((m) => ({ run: m.login }))),
    offline: true,
    examples: ['berth login https://berth.example.com', 'ssh ctl cat .local/share/berth/state/api-token | berth login --token-stdin --ca ca.pem --name team https://berth.example.com'],
  },
  {
    name: 'logout',
    summary: "forget a remote controller's context and token",
    usage: 'logout [NAME]',
    description: 'Removes the context NAME (default: the current one) and its token from the config file; when it was current, berth uses the local data dir again. Exits 3 for an unknown NAME.',
    options: {},
    positionals: ['NAME?'],
    formats: [],
    load: cmd(() => import('./commands/login.js').then((m) => ({ run: m.logout }))),
    offline: true,
  },
  {
    name: 'context',
    summary: 'show, list or switch the controller berth talks to',
    usage: 'context [ls | use NAME]',
    description:
      "Without arguments: the controller this command line would talk to (a server and its context, or the local data dir). ls lists the contexts of berth login (never their tokens), * marking the current one. use NAME makes NAME current; use local goes back to the local data dir's berth serve.",
    options: {},
    positionals: ['ACTION?', 'NAME?'],
    formats: ['table', 'json', 'yaml'],
    load: cmd(() => import('./commands/login.js').then((m) => ({ run: m.context }))),
    offline: true,
    examples: ['berth context ls', 'berth context use team', 'berth context use local'],
  },
  {
    name: 'pool',
    summary: 'list the warm pools, or empty one',
    usage: 'pool [ls] [-o table|wide|json|yaml] | pool rm PROFILE',
    description:
      "ls (the default): each profile with a warm pool (profiles.<name>.pool in berth.yaml): its ready members out of its size, the members being made, max_age and the repository its members keep a clone of; -o wide adds one line per member (its state and Pod). rm PROFILE deletes the profile's ready members now (their Pod and PVC): the pool then makes new ones while its size is above 0, e.g. after the image behind a tag changed. Sessions that claimed members are not touched.",
    options: {},
    positionals: ['ACTION?', 'PROFILE?', 'EXTRA?'],
    formats: ['table', 'wide', 'json', 'yaml'],
    load: cmd(() => import('./commands/pool.js')),
    examples: ['berth pool', 'berth pool ls -o wide', 'berth pool rm k8s'],
  },
  {
    name: 'doctor',
    summary: 'check the installation, the config, the controller and each Kubernetes executor',
    usage: 'doctor [--executor NAME] [--egress PROFILE]',
    description:
      "Prints one line per check: ok, warn (a finding that does not fail doctor) or fail with what to fix; exits 1 when any check fails. Reads berth.yaml itself (berth serve need not run). Each local executor: whether its sandbox works, and what an agent could read inside it that looks like a credential (a probe run in the same sandbox a launch builds; expected: nothing). Each Kubernetes executor is checked quickly: kubeconfig and context, API server and version, the namespace, every needed permission (SelfSubjectAccessReview), objects with Berth's labels that another installation created, and per profile the template's security warnings, the storage class or existing claim, and a server-side dry-run create of the PVC and Pod a launch would create (nothing is stored). With --executor NAME only the config and that Kubernetes executor (its connection and permissions) or profile (also its storage and dry-runs) are checked, with the executor's own request timeout; for a local executor, the checks of this machine. With --egress PROFILE, proof that the profile's egress policy is enforced: a disposable Pod under the profile's NetworkPolicy tries the API server and the metadata address (which must be unreachable) and the egress proxy (which must answer); a cluster whose network plugin ignores NetworkPolicy gets \"NetworkPolicy is not enforced on this cluster\" and exit 1. The Pod and its policy are deleted afterwards.",
    options: {
      executor: { type: 'string', value: 'NAME', description: 'check only this Kubernetes executor or profile of the config' },
      egress: { type: 'string', value: 'PROFILE', description: "prove the profile's egress policy is enforced on its cluster (a probe Pod)" },
    },
    positionals: [],
    formats: [],
    load: cmd(() => import('./commands/doctor.js')),
    examples: ['berth doctor', 'berth doctor --executor k8s', 'berth doctor --egress k8s'],
  },
  {
    name: 'egress-proxy',
    summary: "run Berth's egress proxy as a process of its own (the chart's proxy Deployment)",
    usage: 'egress-proxy [--listen HOST:PORT]',
    description:
      "Runs the egress proxy that sessions with network: settings reach (HTTP CONNECT and plain HTTP, each session's allow list, the credential broker for model APIs), over the config's inventory: give it the same berth.yaml and store as berth serve (Postgres, for a team), and the brokered keys in its environment under the names the profiles map them to. berth serve runs the same proxy itself when berth.yaml sets egress.listen. Stops on SIGINT/SIGTERM.",
    options: { listen: { type: 'string', value: 'HOST:PORT', description: 'where to listen (default: egress.listen of berth.yaml)' } },
    positionals: [],
    formats: [],
    load: cmd(() => import('./commands/egress-proxy.js')),
    examples: ['berth egress-proxy --listen 0.0.0.0:3128'],
  },
  {
    name: 'openapi',
    summary: 'print (or write) the OpenAPI 3.1 description of the API',
    usage: 'openapi [--out FILE]',
    options: { out: { type: 'string', value: 'FILE', description: 'write to FILE instead of stdout' } },
    positionals: [],
    formats: [],
    load: cmd(() => import('./commands/info.js').then((m) => ({ run: m.openapi }))),
    offline: true,
  },
  {
    name: 'version',
    summary: 'print the version',
    usage: 'version [-o json|yaml]',
    options: {},
    positionals: [],
    formats: ['table', 'json', 'yaml'],
    load: cmd(() => import('./commands/info.js').then((m) => ({ run: m.version }))),
    offline: true,
  },
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
