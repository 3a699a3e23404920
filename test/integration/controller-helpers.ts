/**
 * Raw gRPC clients for the controller's integration tests: promisified calls on `kvt.v1.Controller`
 * and `kvt.v1.SegmentStore`, the kvt error code of a failed call, and bounded polling.
 */
import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER } from '../../proto/error-codes';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';

/** A promisified unary client. */
export interface RpcClient {
  call<Res = unknown>(method: string, request?: unknown, timeoutMs?: number): Promise<Res>;
  close(): void;
}

function rpcClient(ctor: grpc.ServiceClientConstructor, address: string): RpcClient {
  const client = new ctor(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
  type Method = (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;
  return {
    call<Res>(method: string, request: unknown = {}, timeoutMs = 30_000): Promise<Res> {
      const fn = (client as unknown as Record<string, Method>)[method];
      return new Promise((resolve, reject) => {
        fn.call(client, request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res as Res)));
      });
    },
    close: () => client.close(),
  };
}

/** A client of the controller at `address`. */
export function controllerClient(address: string): RpcClient {
  return rpcClient(kvtPackage().Controller, address);
}

/** A client of the segment store at `address`. */
export function segmentStoreClient(address: string): RpcClient {
  return rpcClient(kvtPackage().SegmentStore, address);
}

/** What a failed call carried: kvt code (trailer), gRPC status and message. */
export interface RpcFailure {
  kvtCode: string | undefined;
  status: grpc.status;
  message: string;
}

/** Awaits a call that must fail and returns its error code and message. */
export async function failureOf(call: Promise<unknown>): Promise<RpcFailure> {
  try {
    await call;
  } catch (err) {
    const e = err as grpc.ServiceError;
    const trailer = e.metadata?.get(ERROR_CODE_TRAILER)[0];
    return { kvtCode: trailer === undefined ? undefined : String(trailer), status: e.code, message: e.details };
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Polls `probe` until it returns a non-undefined value; throws after `timeoutMs` naming `what`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Segment ids a store hosts, sorted. */
export async function storeSegments(store: RpcClient): Promise<string[]> {
  const res = await store.call<{ segments: Array<{ segmentId: string }> }>('ListSegments', {});
  return res.segments.map((s) => s.segmentId).sort(compareIds);
}

/** Orders u64 decimal strings numerically. */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
