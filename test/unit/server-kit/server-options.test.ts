import { describe, expect, it } from 'vitest';
import { OptionSpec, UsageError } from '../../../server-kit/flags';
import { parseServerOptions } from '../../../server-kit/server-options';

const SPECS: OptionSpec[] = [
  { flag: 'port', env: 'PORT', kind: 'int', default: 1, min: 0, max: 65535, description: '' },
  { flag: 'log-level', env: 'LOG_LEVEL', kind: 'string', default: 'info', description: '' },
  { flag: 'tls-cert', env: 'TLS_CERT', kind: 'string', description: '' },
  { flag: 'tls-key', env: 'TLS_KEY', kind: 'string', description: '' },
  { flag: 'tls-ca', env: 'TLS_CA', kind: 'string', description: '' },
  { flag: 'data-token', env: 'DATA_TOKEN', kind: 'string', description: '' },
  { flag: 'admin-token', env: 'ADMIN_TOKEN', kind: 'string', description: '' },
];
const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseServerOptions(SPECS, argv, env, 'T');

describe('parseServerOptions', () => {
  it('reads the options, the log level and the TLS files and tokens, flags over the environment', () => {
    expect(parse(['--port', '7', '--tls-cert', 'c.pem', '--admin-token', 'admin'], { T_TLS_KEY: 'k.pem', T_LOG_LEVEL: 'warn', T_DATA_TOKEN: 'data' })).toEqual({
      options: { port: 7, 'log-level': 'warn', 'tls-cert': 'c.pem', 'tls-key': 'k.pem', 'data-token': 'data', 'admin-token': 'admin' },
      help: false,
      logLevel: 'warn',
      security: { tlsCert: 'c.pem', tlsKey: 'k.pem', tlsCa: undefined, dataToken: 'data', adminToken: 'admin' },
    });
  });

  it('refuses a positional argument, an unknown log level, a certificate without its key, a data token without an admin token and a malformed token', () => {
    expect(() => parse(['extra'])).toThrow(new UsageError('unexpected argument "extra" (see --help)'));
    expect(() => parse(['--log-level', 'loud'])).toThrow('--log-level must be one of debug, info, warn, error; got "loud"');
    expect(() => parse(['--tls-cert', 'c.pem'])).toThrow('--tls-cert needs --tls-key');
    expect(() => parse(['--data-token', 'data'])).toThrow('--data-token needs --admin-token');
    expect(() => parse(['--data-token', 'same', '--admin-token', 'same'])).toThrow('--data-token and --admin-token must differ');
    // A malformed token is named by its length only: the value never reaches an error message.
    expect(() => parse(['--admin-token', 'two words'])).toThrow(new UsageError('--admin-token must be 1 to 4096 visible ASCII characters (no spaces); got 9 characters'));
    expect(() => parse(['--admin-token', 'a'], { T_DATA_TOKEN: 'x'.repeat(4097) })).toThrow(new UsageError('--data-token must be 1 to 4096 visible ASCII characters (no spaces); got 4097 characters'));
  });

  it('checks nothing else when --help is given', () => {
    expect(parse(['--help', 'extra', '--log-level', 'loud'])).toMatchObject({ help: true, logLevel: 'info' });
  });
});
