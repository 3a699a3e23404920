/** The `kvt controller` process: start failures are one line on stderr and exit 1. */
import * as net from 'node:net';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnKvt, startController, tempDir } from '../harness/process';

describe('kvt controller process', () => {
  it('refuses a data directory another controller holds, with one line and exit 1', async () => {
    using dir = tempDir('kvt-ctl-lock-');
    const dataDir = path.join(dir.path, 'controller');
    const first = await startController(dataDir);
    try {
      const second = spawnKvt(['controller', '--port', '0', '--data-dir', dataDir]);
      expect(await second.waitForExit()).toBe(1);
      expect(second.stderr.join('')).toBe(`kvt controller: data directory ${dataDir} is in use by another controller\n`);
      expect(first.running).toBe(true);
    } finally {
      await first.stop();
    }
  });

  it('refuses a port that is taken, with one line and exit 1', async () => {
    using dir = tempDir('kvt-ctl-port-');
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const proc = spawnKvt(['controller', '--port', String(port), '--data-dir', path.join(dir.path, 'c')]);
      expect(await proc.waitForExit()).toBe(1);
      expect(proc.stderr.join('')).toBe(`kvt controller: port 127.0.0.1:${port} is already in use\n`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('logs its effective config, then "controller started" with the bound port, and stops on SIGTERM', async () => {
    using dir = tempDir('kvt-ctl-start-');
    const proc = await startController(path.join(dir.path, 'c'), [], { KVT_CONTROLLER_HEARTBEAT_INTERVAL_MS: '700' });
    const config = proc.logs.find((r) => r.msg === 'controller config');
    expect(config).toMatchObject({ heartbeatIntervalMs: 700, storeTimeoutMs: 5000, createWaitMs: 10000, host: '127.0.0.1' });
    expect(proc.port).toBeGreaterThan(0);
    expect(await proc.stop()).toBe(0);
  });

  it('rejects a bad flag value naming the flag and the limit', async () => {
    const proc = spawnKvt(['controller', '--port', '70000']);
    expect(await proc.waitForExit()).toBe(2);
    expect(proc.stderr.join('')).toBe('kvt controller: --port is 70000; the maximum is 65535\n');
  });
});
