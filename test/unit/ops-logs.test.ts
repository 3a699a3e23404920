/** The servers' JSON-line logs, written by pino: the fields as before, constant messages, redaction, levels. */
import { describe, expect, it } from 'vitest';
import { loadConfig as loadControllerConfig } from '../../controller/config';
import { loadConfig as loadSegmentStoreConfig } from '../../segmentstore/config';
import { UsageError } from '../../server-kit/flags';
import { jsonLogger, LogLevel, REDACTED } from '../../server-kit/log';

function capture(level: LogLevel = 'debug'): { lines: string[]; records: () => Record<string, unknown>[]; log: ReturnType<typeof jsonLogger> } {
  const lines: string[] = [];
  return { lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>), log: jsonLogger('controller', level, (line) => lines.push(line)) };
}

describe('jsonLogger (pino)', () => {
  it('writes one JSON object a line: level name, ISO time, component, the constant msg and the fields', () => {
    const { lines, records, log } = capture();
    log.info('segment store registered', { storeId: 's-1', address: '127.0.0.1:1', new: true });
    expect(lines).toHaveLength(1);
    expect(lines[0].endsWith('\n')).toBe(false);
    const [record] = records();
    expect(record).toEqual({
      level: 'info',
      ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      component: 'controller',
      msg: 'segment store registered',
      storeId: 's-1',
      address: '127.0.0.1:1',
      new: true,
    });
    expect(Date.parse(record.ts as string)).not.toBeNaN();
  });

  it('writes an Error field as its name, message and code (no stack), and a bigint as its digits', () => {
    const { records, log } = capture();
    log.error('metadata write failed: refusing every change; restart the controller to recover', { err: Object.assign(new Error('disk full'), { code: 'ENOSPC' }), generation: 12n });
    expect(records()[0]).toMatchObject({ level: 'error', err: { name: 'Error', message: 'disk full', code: 'ENOSPC' }, generation: '12' });
    expect(JSON.stringify(records()[0])).not.toContain('stack');
  });

  it('redacts tokens, passwords and TLS keys: in the fields, one level down, and in a child logger`s fields', () => {
    const { lines, records, log } = capture();
    const secrets = ['data-secret-1', 'admin-secret-2', 'bearer-3', '/etc/kvt/server.key', 'pw-4', 'child-5'];
    log.info('controller config', { dataToken: secrets[0], adminToken: secrets[1], tlsKey: secrets[3], tlsCert: '/etc/kvt/server.crt', port: 9090 });
    log.warn('call rejected', { request: { authorization: `Bearer ${secrets[2]}`, password: secrets[4] }, code: 'UNAUTHENTICATED' });
    log.child({ token: secrets[5], storeId: 's-1' }).info('child line', { n: 1 });
    const [config, rejected, child] = records();
    expect(config).toMatchObject({ dataToken: REDACTED, adminToken: REDACTED, tlsKey: REDACTED, tlsCert: '/etc/kvt/server.crt', port: 9090 });
    expect(rejected).toMatchObject({ request: { authorization: REDACTED, password: REDACTED }, code: 'UNAUTHENTICATED' });
    expect(child).toMatchObject({ token: REDACTED, storeId: 's-1', n: 1, msg: 'child line' });
    for (const secret of secrets) expect(lines.join('\n')).not.toContain(secret);
  });

  it('leaves out an option that is not set rather than writing it as redacted', () => {
    const { records, log } = capture();
    log.info('effective config', { adminToken: undefined, port: 1 });
    expect(records()[0]).not.toHaveProperty('adminToken');
  });

  it('writes only lines at its level and above', () => {
    const { records, log } = capture('warn');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    log.child({ a: 1 }).info('child info');
    expect(records().map((r) => [r.level, r.msg])).toEqual([
      ['warn', 'w'],
      ['error', 'e'],
    ]);
  });
});

describe('--log-level', () => {
  it('takes debug, info, warn or error on both servers, from the flag or the environment', () => {
    expect(loadControllerConfig(['--log-level', 'debug'], {}).logLevel).toBe('debug');
    expect(loadControllerConfig([], { KVT_CONTROLLER_LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
    expect(loadSegmentStoreConfig(['--log-level', 'error'], {}).config.logLevel).toBe('error');
    expect(loadSegmentStoreConfig([], { KVT_SEGMENTSTORE_LOG_LEVEL: 'debug' }).config.logLevel).toBe('debug');
  });

  it('refuses any other level with a UsageError naming the levels', () => {
    expect(() => loadControllerConfig(['--log-level', 'trace'], {})).toThrow(new UsageError('--log-level must be one of debug, info, warn, error; got "trace"'));
    expect(() => loadSegmentStoreConfig(['--log-level', 'verbose'], {})).toThrow(new UsageError('--log-level must be one of debug, info, warn, error; got "verbose"'));
  });
});
