import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../controller/config';
import { ControllerServer } from '../../../controller/server';
import { failNextArrayBatch } from '../../harness/leveldb-faults';
import { tempDir } from '../../harness/process';
import { controllerClient, failureOf } from '../../integration/controller-helpers';

function config(dataDir: string) {
  return loadConfig(['--port', '0', '--data-dir', dataDir], {});
}

describe('ControllerServer', () => {
  it('goes created → running → stopped, serves on its bound port, and stops idempotently', async () => {
    using dir = tempDir('kvt-ctl-server-');
    const server = new ControllerServer(config(path.join(dir.path, 'c')));
    expect(server.state).toBe('created');
    await server.start();
    expect(server.state).toBe('running');
    expect(server.port).toBeGreaterThan(0);
    const client = controllerClient(`127.0.0.1:${server.port}`);
    try {
      expect(await client.call('CreateScope', { scope: 'in-process' })).toEqual({ created: true });
    } finally {
      client.close();
    }
    await Promise.all([server.stop(), server.stop()]);
    expect(server.state).toBe('stopped');
    await server.stop();
    expect(server.state).toBe('stopped');
  });

  it('reports a failed metadata write as fatal and refuses later changes with UNAVAILABLE until it stops', async () => {
    using dir = tempDir('kvt-ctl-server-');
    const server = await ControllerServer.start(config(path.join(dir.path, 'c')));
    const client = controllerClient(`127.0.0.1:${server.port}`);
    try {
      expect(await client.call('CreateScope', { scope: 'kept' })).toEqual({ created: true });
      {
        using _fault = failNextArrayBatch('injected write failure');
        expect((await failureOf(client.call('CreateScope', { scope: 'lost' }))).message).toContain('injected write failure');
      }
      // What `kvt controller` waits on to log one line and exit 1.
      await expect(server.fatal).resolves.toMatchObject({ message: 'injected write failure' });
      expect(await failureOf(client.call('CreateScope', { scope: 'later' }))).toMatchObject({
        kvtCode: 'UNAVAILABLE',
        message: 'controller metadata storage failed (injected write failure); restart the controller to recover',
      });
    } finally {
      client.close();
    }
    await server.stop();
  });

  it('fails to start on a data directory another server holds, and releases it on dispose', async () => {
    using dir = tempDir('kvt-ctl-server-');
    const dataDir = path.join(dir.path, 'c');
    {
      await using first = await ControllerServer.start(config(dataDir));
      const second = new ControllerServer(config(dataDir));
      await expect(second.start()).rejects.toThrow(`data directory ${dataDir} is in use by another controller`);
      expect(second.state).toBe('failed');
      expect(first.state).toBe('running');
    }
    await using again = await ControllerServer.start(config(dataDir));
    const client = controllerClient(`127.0.0.1:${again.port}`);
    try {
      expect(await client.call('ListScopes')).toEqual({ scopes: [] });
    } finally {
      client.close();
    }
  });

  it('fails to start on a taken port and leaves the data directory free', async () => {
    using dir = tempDir('kvt-ctl-server-');
    await using first = await ControllerServer.start(config(path.join(dir.path, 'a')));
    const taken = loadConfig(['--port', String(first.port), '--data-dir', path.join(dir.path, 'b')], {});
    await expect(ControllerServer.start(taken)).rejects.toThrow(`port 127.0.0.1:${first.port} is already in use`);
    await using reopened = await ControllerServer.start(config(path.join(dir.path, 'b')));
    expect(reopened.state).toBe('running');
  });
});
