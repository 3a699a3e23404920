/**
 * ProcessHealth (grpc.health.v1) on a real gRPC server, asked by the real health client: Check for the
 * process and its service, Watch streams told each change, and ended when the process stops.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bindGrpcServer, newGrpcServer, shutdownGrpcServer } from '../../../server-kit/grpc-server';
import { checkHealth, healthClient, HealthStatus, ProcessHealth } from '../../../server-kit/health';

const SERVICE = 'kvt.test.Service';

/** Opens a Watch of `service` and collects every status it is sent until the stream ends. */
function watch(address: string, service: string): { statuses: HealthStatus[]; sent: (n: number) => Promise<void>; ended: Promise<grpc.StatusObject>; close(): void } {
  const client = healthClient(address);
  const call = client.Watch({ service });
  const statuses: HealthStatus[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  call.on('data', (m: { status: HealthStatus }) => {
    statuses.push(m.status);
    for (const w of waiters) if (statuses.length >= w.n) w.resolve();
  });
  call.on('error', () => undefined); // reported by 'status'
  const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  const sent = (n: number) => new Promise<void>((resolve) => (statuses.length >= n ? resolve() : waiters.push({ n, resolve })));
  return { statuses, sent, ended, close: () => client.close() };
}

describe('ProcessHealth', () => {
  let server: grpc.Server;
  let health: ProcessHealth;
  let address: string;

  beforeEach(async () => {
    server = newGrpcServer();
    health = new ProcessHealth(SERVICE);
    health.addTo(server);
    address = `127.0.0.1:${await bindGrpcServer(server, '127.0.0.1', 0)}`;
  });
  afterEach(async () => {
    health.close();
    await shutdownGrpcServer(server, 100);
  });

  it('answers Check with one status for the process and its service: NOT_SERVING until serving(), then SERVING, then NOT_SERVING again', async () => {
    const both = () => Promise.all([checkHealth(address), checkHealth(address, { service: SERVICE })]);
    expect(await both()).toEqual(['NOT_SERVING', 'NOT_SERVING']);
    health.serving();
    expect(health.status).toBe('SERVING');
    expect(await both()).toEqual(['SERVING', 'SERVING']);
    health.notServing();
    expect(await both()).toEqual(['NOT_SERVING', 'NOT_SERVING']);
    await expect(checkHealth(address, { service: 'kvt.test.Other' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('tells a Watch each change once, then NOT_SERVING when closed, and ends the stream so that it does not hold the shutdown', async () => {
    health.serving();
    const whole = watch(address, '');
    const service = watch(address, SERVICE);
    try {
      await Promise.all([whole.sent(1), service.sent(1)]);
      // A store accepted again by the controller says serving() again: no news for a Watch.
      health.serving();
      health.notServing();
      health.notServing();
      health.serving();
      await Promise.all([whole.sent(3), service.sent(3)]);
      health.close();
      // With a Watch still open, the graceful shutdown would wait its whole grace, then cancel it.
      const [wholeEnd, serviceEnd] = await Promise.all([whole.ended, service.ended, shutdownGrpcServer(server, 2_000)]);
      expect(wholeEnd.code).toBe(grpc.status.OK);
      expect(serviceEnd.code).toBe(grpc.status.OK);
      for (const w of [whole, service]) expect(w.statuses).toEqual(['SERVING', 'NOT_SERVING', 'SERVING', 'NOT_SERVING']);
    } finally {
      whole.close();
      service.close();
    }
  });
});
