import { describe, expect, it } from 'vitest';
import { BerthApiError, ControllerUnreachableError, StreamBrokenError } from '../api/index.js';
import { ServeLockedError } from '../server/data-dir.js';
import { ConfigFieldError } from '../config/index.js';
import { SessionNotFoundError, SessionStateError } from '../controller/index.js';
import { ControllerLostError, describeError, ExitCode, lostDuring, ServeNotRunningError, UsageError } from './exit-codes.js';

describe('describeError', () => {
  it.each([
    ['a usage error', new UsageError('bad flag', 'ls'), ExitCode.usage],
    ['a 400 (launch validation)', new BerthApiError(400, 'bad_request', 'agent: unknown', 'agent'), ExitCode.usage],
    ['a 401', new BerthApiError(401, 'unauthorized', 'wrong token'), ExitCode.error],
    ['a 404', new BerthApiError(404, 'not_found', "session not found: 'x'"), ExitCode.notFound],
    ['a 409', new BerthApiError(409, 'conflict', 'stopped'), ExitCode.conflict],
    ['a 500', new BerthApiError(500, 'internal', 'boom'), ExitCode.error],
    ['an unreachable controller', new ControllerUnreachableError('http://127.0.0.1:1'), ExitCode.unreachable],
    ['no running serve', new ServeNotRunningError('/d'), ExitCode.unreachable],
    ['a second serve', new ServeLockedError('/d', 42), ExitCode.conflict],
    ['a config field error', new ConfigFieldError('agents.x.command', 'must be a non-empty array of strings'), ExitCode.error],
    ['SessionNotFoundError', new SessionNotFoundError('x'), ExitCode.notFound],
    ['SessionStateError', new SessionStateError('x', 'stopped', 'exec in', 'resume it'), ExitCode.conflict],
    ['a stream cut off by a dying controller', new ControllerLostError('terminated', 'berth logs -f --from 3 s-1'), ExitCode.unreachable],
    ['anything else', new Error('boom'), ExitCode.error],
  ])('maps %s to its exit code', (_name, err, code) => {
    expect(describeError(err).code).toBe(code);
  });

  it('hints at berth serve when the controller is unreachable', () => {
    expect(describeError(new ServeNotRunningError('/d')).hint).toBe('start it with: berth serve');
  });

  it('repeats the --data-dir the user passed in the serve hint (quoted when it needs to be)', () => {
    expect(describeError(new ServeNotRunningError('/d'), { dataDirFlag: '/tmp/b' }).hint).toBe('start it with: berth --data-dir /tmp/b serve');
    expect(describeError(new ServeNotRunningError('/d'), { dataDirFlag: "/tmp/it's here" }).hint).toBe(`start it with: berth --data-dir '/tmp/it'\\''s here' serve`);
  });

  it('says where to resume a followed stream the controller dropped', () => {
    expect(describeError(new ControllerLostError('terminated', 'berth logs -f --from 3 s-1')).message).toBe('lost the controller (terminated); resume with: berth logs -f --from 3 s-1');
  });

  it('turns a stream that broke off mid-command into exit 5 with the hint of the command, and leaves other errors alone', () => {
    const broken = new StreamBrokenError('terminated', { cause: new Error('terminated') });
    const lost = lostDuring(broken, "the command's exit status is unknown");
    expect(describeError(lost)).toEqual({ code: ExitCode.unreachable, message: 'lost the controller (terminated)', hint: "the command's exit status is unknown" });
    expect(describeError(broken).code, 'even when no command caught it').toBe(ExitCode.unreachable);
    const other = new BerthApiError(409, 'conflict', 'stopped');
    expect(lostDuring(other, 'x')).toBe(other);
  });

  it('keeps the field path of a config error in the message', () => {
    expect(describeError(new ConfigFieldError('agents.x.command', 'must be a non-empty array of strings')).message).toBe(
      'invalid config: agents.x.command: must be a non-empty array of strings',
    );
  });

  it("points a usage error at the command's help", () => {
    expect(describeError(new UsageError('x', 'exec')).hint).toBe('see: berth exec --help');
  });
});
