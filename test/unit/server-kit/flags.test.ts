import { describe, expect, it } from 'vitest';
import { joinHostPort, parseHostPort } from '../../../server-kit/address';
import { helpText, OptionSpec, parseCommand, parseOptions, UsageError } from '../../../server-kit/flags';

const SPECS: OptionSpec[] = [
  { flag: 'reverse', env: 'REVERSE', kind: 'bool', default: false, description: '' },
  { flag: 'limit', env: 'LIMIT', kind: 'int', min: 0, max: 10, description: '' },
  { flag: 'family', env: 'FAMILY', kind: 'string', description: '' },
];
const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseOptions(SPECS, argv, env, 'T');

describe('parseOptions', () => {
  it('takes everything after -- as positionals, even flags and -h', () => {
    expect(parse(['s/t', '--family', 'f', '--', '--value', '-h', '--'])).toEqual({
      options: { reverse: false, family: 'f' },
      help: false,
      positionals: ['s/t', '--value', '-h', '--'],
    });
  });

  it('never lets a bool flag take the next argument', () => {
    expect(parse(['--reverse', 's/t', '--family', 'F'])).toMatchObject({ options: { reverse: true, family: 'F' }, positionals: ['s/t'] });
    expect(parse(['--reverse=false', 's/t']).options.reverse).toBe(false);
    expect(() => parse(['--reverse=maybe'])).toThrow('--reverse must be true or false; got "maybe"');
  });

  it('keeps a short option other than -h as a positional, and lets a string flag take a value that starts with a dash', () => {
    expect(parse(['-x', 's/t', '-ab', '--family', '-f', '-5'])).toEqual({ options: { reverse: false, family: '-f' }, help: false, positionals: ['-x', 's/t', '-ab', '-5'] });
    expect(parse(['--family=--x', '--limit=3']).options).toEqual({ reverse: false, family: '--x', limit: 3 });
  });

  it('refuses an unknown flag and a flag without its value, -- ending the flags', () => {
    expect(() => parse(['--colour'])).toThrow('unknown option --colour (see --help)');
    expect(() => parse(['--colour=red'])).toThrow('unknown option --colour (see --help)');
    expect(() => parse(['s/t', '--family'])).toThrow('option --family needs a value');
    expect(() => parse(['--family', '--', 'x'])).toThrow('option --family needs a value');
    expect(() => parse(['--family='])).toThrow('--family must not be empty');
  });

  it('answers --help / -h before -- with the defaults, whatever else is wrong', () => {
    expect(parse(['--limit', '99', '--help'], { T_LIMIT: 'x' })).toEqual({ options: { reverse: false }, help: true, positionals: [] });
    expect(parse(['--bogus', '-h']).help).toBe(true);
    expect(() => parse(['--limit', '99'])).toThrow('--limit is 99; the maximum is 10');
  });

  it('refuses an int below its minimum or not written as an integer, naming where it came from', () => {
    const specs: OptionSpec[] = [{ flag: 'limit', env: 'LIMIT', kind: 'int', min: 1, max: 10, description: '' }];
    expect(() => parseOptions(specs, ['--limit', '0'], {}, 'T')).toThrow(new UsageError('--limit is 0; the minimum is 1'));
    expect(() => parseOptions(specs, [], { T_LIMIT: '-3' }, 'T')).toThrow(new UsageError('T_LIMIT is -3; the minimum is 1'));
    expect(parseOptions(specs, ['--limit', '1'], {}, 'T').options).toEqual({ limit: 1 });
    for (const bad of ['1.5', 'lots', '0x5', '2e1', ' 3']) expect(() => parseOptions(specs, [`--limit=${bad}`], {}, 'T'), bad).toThrow(new UsageError(`--limit must be an integer; got "${bad}"`));
  });

  it('lets a flag override the variable of its option, and counts an empty variable as unset', () => {
    expect(parse(['--family', 'flag', '--limit', '2', '--reverse=false'], { T_FAMILY: 'env', T_LIMIT: '7', T_REVERSE: 'yes' }).options).toEqual({ reverse: false, family: 'flag', limit: 2 });
    expect(parse([], { T_FAMILY: '', T_LIMIT: '', T_REVERSE: '' }).options).toEqual({ reverse: false });
  });

  it('refuses a variable set but empty for an option that says so (a token), before any flag is read', () => {
    const specs: OptionSpec[] = [{ flag: 'admin-token', env: 'ADMIN_TOKEN', kind: 'string', emptyEnvRefused: true, description: '' }];
    expect(() => parseOptions(specs, ['--admin-token', 'a'], { T_ADMIN_TOKEN: '' }, 'T')).toThrow(new UsageError('T_ADMIN_TOKEN is set but empty; unset it to run without it'));
    expect(parseOptions(specs, [], {}, 'T').options).toEqual({});
    expect(parseOptions(specs, [], { T_ADMIN_TOKEN: 'a' }, 'T').options).toEqual({ 'admin-token': 'a' });
  });

  it('reads no variable for an option that has none: only its flag or its default', () => {
    const specs: OptionSpec[] = [
      { flag: 'family', kind: 'string', description: '' },
      { flag: 'limit', kind: 'int', default: 5, description: '' },
    ];
    const env = { T_FAMILY: 'f', T_LIMIT: '0', T_UNDEFINED: 'x' };
    expect(parseOptions(specs, [], env, 'T').options).toEqual({ limit: 5 });
    expect(parseOptions(specs, ['--family', 'g'], env, 'T').options).toEqual({ family: 'g', limit: 5 });
    expect(helpText('u', 's', specs, 'T')).not.toContain('[env');
  });
});

describe('parseCommand', () => {
  const command = { usage: 'kvt get SCOPE/TABLE KEY [KEY2]', summary: 'Reads keys.', options: SPECS, args: [2, 3] as const };

  it("gives a command's options and positionals when their count is within its range", () => {
    expect(parseCommand(command, ['s/t', 'k', '--limit', '2'], {}, 'T')).toEqual({ options: { reverse: false, limit: 2 }, positionals: ['s/t', 'k'] });
    expect(parseCommand(command, ['s/t', 'k', 'k2'], { T_FAMILY: 'f' }, 'T')).toEqual({ options: { reverse: false, family: 'f' }, positionals: ['s/t', 'k', 'k2'] });
  });

  it('refuses too few or too many positionals with a UsageError naming the count and the usage', () => {
    expect(() => parseCommand(command, ['s/t'], {}, 'T')).toThrow(new UsageError('expected 2 to 3 argument(s), got 1; usage: kvt get SCOPE/TABLE KEY [KEY2]'));
    expect(() => parseCommand({ ...command, args: [1, 1] as const }, ['a', 'b'], {}, 'T')).toThrow('expected 1 argument(s), got 2; usage: kvt get SCOPE/TABLE KEY [KEY2]');
  });

  it('answers --help with the help text, whatever else is wrong', () => {
    expect(parseCommand(command, ['--help', '--limit', 'lots'], {}, 'T')).toEqual({ help: helpText(command.usage, command.summary, SPECS, 'T') });
  });
});

describe('host:port addresses', () => {
  it('brackets IPv6 hosts and checks the port range', () => {
    expect(joinHostPort('::1', 9090)).toBe('[::1]:9090');
    expect(joinHostPort('[::1]', 9090)).toBe('[::1]:9090');
    expect(joinHostPort('127.0.0.1', 0)).toBe('127.0.0.1:0');
    expect(parseHostPort('[::]:1')).toEqual({ host: '[::]', port: 1 });
    expect(parseHostPort('db.example:65535')).toEqual({ host: 'db.example', port: 65535 });
    for (const bad of ['h:0', 'h:65536', '::1:80', 'h', ':80', 'h :80', '[x]:80']) expect(parseHostPort(bad), bad).toBeUndefined();
  });
});
