/** The storage conformance suite over real gRPC against a started `kvt segmentstore` process. */
import { describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';
import { startSegmentStore, tempDir } from '../harness/process';
import { grpcAdapter } from '../suites/segment-store-adapter';
import { storageConformance } from '../suites/storage-conformance';

storageConformance('kvt segmentstore over gRPC', async () => {
  const dir = tempDir('kvt-ss-grpc-');
  const proc = await startSegmentStore(dir.path);
  const store = grpcAdapter(proc.address);
  return {
    store,
    dispose: async () => {
      store.close();
      expect(await proc.stop()).toBe(0);
      dir.dispose();
    },
  };
});

describe('kvt segmentstore over gRPC', () => {
  it('survives malformed requests and keeps serving', async () => {
    using dir = tempDir('kvt-ss-bad-');
    await using proc = await startSegmentStore(dir.path);
    const Client = kvtPackage().SegmentStore;
    const client = new Client(proc.address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS) as unknown as Record<
      string,
      (req: unknown, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void
    >;
    const call = (name: string, req: unknown) => new Promise<{ err: grpc.ServiceError | null; res: unknown }>((resolve) => client[name].call(client, req, (err, res) => resolve({ err, res })));
    const bad = await call('Execute', { requests: [{}, { update: { segmentId: 'x' } }] });
    expect(bad.err).toBeNull();
    expect((bad.res as { responses: { error: { code: string } }[] }).responses.map((r) => r.error.code)).toEqual(['INVALID_ARGUMENT', 'INVALID_ARGUMENT']);
    const info = await call('GetSegmentInfo', { segmentId: '' });
    expect(info.err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(info.err?.metadata.get('kvt-error-code')).toEqual(['INVALID_ARGUMENT']);
    const missing = await call('GetSegmentInfo', { segmentId: '5' });
    expect(missing.err?.code).toBe(grpc.status.NOT_FOUND);
    expect((await call('CreateSegment', { segmentId: '5' })).err).toBeNull();
    expect(proc.running).toBe(true);
    (client as unknown as grpc.Client).close();
  });
});
