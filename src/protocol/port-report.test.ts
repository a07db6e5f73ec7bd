import { describe, expect, it } from 'vitest';
import { formatPortReport, parsePortReport } from './index.js';

describe('port report', () => {
  it('round-trips the line agentctl writes', () => {
    const line = formatPortReport({ controlPort: 40123 });
    expect(line).toBe('{"control_port":40123}\n');
    expect(parsePortReport(line.trimEnd())).toEqual({ controlPort: 40123 });
  });

  it.each([
    ['', /not a JSON line/],
    ['HTTP/1.1 200 OK', /not a JSON line/],
    ['40123', /not a JSON object/],
    ['null', /not a JSON object/],
    ['[40123]', /not a JSON object/],
    ['{}', /exactly the field control_port/],
    ['{"port":40123}', /exactly the field control_port/],
    ['{"control_port":40123,"token":"x"}', /exactly the field control_port/],
    ['{"control_port":"40123"}', /integer between 1 and 65535/],
    ['{"control_port":0}', /integer between 1 and 65535/],
    ['{"control_port":65536}', /integer between 1 and 65535/],
    ['{"control_port":401.5}', /integer between 1 and 65535/],
    [`{"control_port":1${' '.repeat(300)}}`, /longer than 256 bytes/],
  ])('refuses %j', (line, why) => {
    expect(() => parsePortReport(line)).toThrow(why);
  });

  it('never echoes the line it refuses', () => {
    expect(() => parsePortReport('{"control_port":"nonce-abcdef"}')).toThrow(expect.objectContaining({ message: expect.not.stringContaining('nonce-abcdef') }));
  });
});
