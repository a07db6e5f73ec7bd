import { describe, expect, it } from 'vitest';
import { parseCommandLine } from './args.js';
import { UsageError } from './exit-codes.js';

function run(argv: string[]) {
  const inv = parseCommandLine(argv);
  if (inv.kind !== 'run') throw new Error(`expected a run invocation, got ${inv.kind}`);
  return inv;
}

function usageError(argv: string[]): UsageError {
  try {
    parseCommandLine(argv);
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
  throw new Error(`expected a UsageError for ${argv.join(' ')}`);
}

describe('parseCommandLine', () => {
  it('accepts global flags before and after the command', () => {
    const a = run(['--data-dir', '/d', 'ls', '-o', 'json']);
    expect(a.command.name).toBe('ls');
    expect(a.globals).toEqual({ dataDir: '/d', output: 'json' });
    const b = run(['ls', '--data-dir=/e', '--config', 'c.yaml']);
    expect(b.globals).toEqual({ dataDir: '/e', config: 'c.yaml' });
  });

  it('parses launch flags, including repeated --env', () => {
    const inv = run(['launch', '--repo', '.', '--agent', 'demo', '--env', 'A=1', '--env', 'B=x=y', '-d']);
    expect(inv.parsed.values).toMatchObject({ repo: '.', agent: 'demo', env: ['A=1', 'B=x=y'], detach: true });
  });

  it('parses repeated --secret-env names', () => {
    const inv = run(['launch', '--repo', '.', '--secret-env', 'API_KEY', '--secret-env=OTHER_TOKEN']);
    expect(inv.parsed.values['secret-env']).toEqual(['API_KEY', 'OTHER_TOKEN']);
  });

  it('parses logs --previous / -p alongside -f and --from', () => {
    expect(run(['logs', '--previous', 's1']).parsed.values).toMatchObject({ previous: true });
    const short = run(['logs', '-p', '-f', '--from', '3', 's1']);
    expect(short.parsed.values).toMatchObject({ previous: true, follow: true, from: '3' });
    expect(short.parsed.positionals).toEqual(['s1']);
    expect(run(['logs', 's1']).parsed.values.previous).toBeUndefined();
    expect(usageError(['logs', '--previous=yes', 's1']).message).toMatch(/previous/);
  });

  it('takes everything after -- as the exec command, flags included', () => {
    const inv = run(['exec', '--cwd', 'sub', 's1', '--', 'sh', '-c', 'exit 7']);
    expect(inv.parsed.positionals).toEqual(['s1']);
    expect(inv.parsed.rest).toEqual(['sh', '-c', 'exit 7']);
    expect(inv.parsed.values.cwd).toBe('sub');
  });

  it.each([
    [['exec', 's1'], /missing the command after --/],
    [['exec', 's1', 'ls'], /unexpected argument 'ls'.*after --/],
    [['status'], /status: missing ID/],
    [['status', 'a', 'b'], /unexpected argument 'b'/],
    [['ls', '--bogus'], /^ls: unknown option '--bogus'$/],
    [['send', '-o', 'json', 'x', 'hi'], /send: does not support -o/],
    [['logs', '-o', 'yaml', 'x'], /logs: -o must be one of table, json/],
    [['status', 'x', '-o', 'wide'], /status: -o must be one of table, json, yaml/],
    [['ls', '-o', 'xml'], /-o: must be one of/],
    [['nosuch'], /unknown command 'nosuch'/],
    [['ls', '--', 'x'], /does not take arguments after --/],
  ])('rejects %j with a usage error', (argv, message) => {
    expect(usageError(argv).message).toMatch(message);
  });

  it('names the command in usage errors so main can point at its help', () => {
    expect(usageError(['status']).command).toBe('status');
  });

  it.each([
    [[], undefined],
    [['--help'], undefined],
    [['-h'], undefined],
    [['help'], undefined],
    [['help', 'launch'], 'launch'],
    [['help', 'help'], undefined],
    [['launch', '--help'], 'launch'],
    [['exec', '-h'], 'exec'],
  ])('treats %j as a help request', (argv, command) => {
    const inv = parseCommandLine(argv);
    expect(inv.kind).toBe('help');
    expect(inv.kind === 'help' ? inv.command?.name : 'x').toBe(command);
  });

  it('answers --version', () => {
    expect(parseCommandLine(['--version']).kind).toBe('version');
  });
});

describe('parseCommandLine - empty words', () => {
  it.each([
    [['status', ''], /^status: ID must not be empty$/],
    [['exec', '', '--', 'true'], /^exec: ID must not be empty$/],
    [['exec', 's1', '--', ''], /^exec: the command after -- must not be empty$/],
    [['logs', '-f', ''], /^logs: ID must not be empty$/],
  ])('refuses %j as a usage error', (argv, message) => {
    expect(usageError(argv).message).toMatch(message);
  });
});
