import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../segmentstore/config';

describe('segment store config', () => {
  it('takes defaults, then KVT_SEGMENTSTORE_* variables, then flags', () => {
    expect(loadConfig([], {}).config).toMatchObject({ port: 12345, host: '127.0.0.1', controller: undefined, expirySweepIntervalMs: 1000 });
    const env = { KVT_SEGMENTSTORE_PORT: '7000', KVT_SEGMENTSTORE_CONTROLLER: '127.0.0.1:9090', KVT_SEGMENTSTORE_DATA_DIR: '/tmp/x' };
    expect(loadConfig([], env).config).toMatchObject({ port: 7000, controller: '127.0.0.1:9090', dataDir: '/tmp/x' });
    expect(loadConfig(['--port', '0', '--advertise-address=example:1'], env).config).toMatchObject({ port: 0, advertiseAddress: 'example:1' });
    expect(loadConfig(['--help'], {}).help).toBe(true);
  });

  it('shows the help even when a flag or variable is bad', () => {
    expect(loadConfig(['--help'], { KVT_SEGMENTSTORE_PORT: 'nope' }).help).toBe(true);
    expect(loadConfig(['--port', 'x', '-h'], {}).help).toBe(true);
  });

  it("sizes LevelDB's memtable in MiB, 64 by default", () => {
    expect(loadConfig([], {}).config.writeBufferMb).toBe(64);
    expect(loadConfig([], { KVT_SEGMENTSTORE_WRITE_BUFFER_MB: '8' }).config.writeBufferMb).toBe(8);
    expect(loadConfig(['--write-buffer-mb', '256'], { KVT_SEGMENTSTORE_WRITE_BUFFER_MB: '8' }).config.writeBufferMb).toBe(256);
    expect(() => loadConfig(['--write-buffer-mb', '0'], {})).toThrow('--write-buffer-mb is 0; the minimum is 1');
    expect(() => loadConfig(['--write-buffer-mb', '2048'], {})).toThrow('--write-buffer-mb is 2048; the maximum is 1024');
  });

  it('sizes the durable log in MiB (256 by default, 0 for none) and its apply interval in ms', () => {
    expect(loadConfig([], {}).config).toMatchObject({ durableLogMb: 256, durableLogApplyMs: 1000 });
    expect(loadConfig([], { KVT_SEGMENTSTORE_DURABLE_LOG_MB: '0', KVT_SEGMENTSTORE_DURABLE_LOG_APPLY_MS: '50' }).config).toMatchObject({ durableLogMb: 0, durableLogApplyMs: 50 });
    expect(loadConfig(['--durable-log-mb', '64'], { KVT_SEGMENTSTORE_DURABLE_LOG_MB: '0' }).config.durableLogMb).toBe(64);
    expect(() => loadConfig(['--durable-log-mb', '-1'], {})).toThrow('--durable-log-mb is -1; the minimum is 0');
    expect(() => loadConfig(['--durable-log-apply-ms', '0'], {})).toThrow('--durable-log-apply-ms is 0; the minimum is 1');
    expect(() => loadConfig(['--durable-log-apply-ms', '60001'], {})).toThrow('--durable-log-apply-ms is 60001; the maximum is 60000');
  });

  it('rejects bad values naming the option', () => {
    expect(() => loadConfig(['--port', '70000'], {})).toThrow('--port is 70000; the maximum is 65535');
    expect(() => loadConfig(['--controller', 'nope'], {})).toThrow('--controller must be host:port (or [ipv6]:port) with a port in 1-65535; got "nope"');
    // Ports the controller refuses are refused here, before the store starts and retries forever.
    for (const bad of ['127.0.0.1:0', '127.0.0.1:99999', '::1:9090']) {
      expect(() => loadConfig(['--advertise-address', bad], {})).toThrow(`--advertise-address must be host:port (or [ipv6]:port) with a port in 1-65535; got "${bad}"`);
    }
    expect(loadConfig(['--advertise-address', '[::1]:9090', '--controller', 'ctl.example:65535'], {}).config).toMatchObject({ advertiseAddress: '[::1]:9090', controller: 'ctl.example:65535' });
    expect(() => loadConfig(['--register-retry-min-ms', '60000', '--register-retry-max-ms', '10'], {})).toThrow('--register-retry-min-ms (60000) must not exceed --register-retry-max-ms (10)');
    expect(() => loadConfig(['--log-level', 'loud'], {})).toThrow('--log-level must be one of debug, info, warn, error; got "loud"');
    expect(() => loadConfig(['--bogus'], {})).toThrow('unknown option --bogus (see --help)');
  });
});
