/**
 * The one loader of kvt's `.proto` files. Loaded once per process with fixed options:
 * field names in camelCase, 64-bit integers as decimal strings, enums as their names, bytes as
 * Buffer, defaults filled in, and the name of the set field of each `oneof` as a virtual field.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { MAX_MESSAGE_BYTES } from './limits';

export * from './messages';

/** The directory holding kvt's `.proto` files (`kvt/v1/`, `kvt/ops/v1/`), whether running from source or from `dist/`. */
export function protoRoot(): string {
  const candidates = [__dirname, path.resolve(__dirname, '..', '..', 'proto')];
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, 'kvt', 'v1', 'segmentstore.proto'))) return dir;
  }
  throw new Error(`kvt proto files not found under ${candidates.join(' or ')}`);
}

/** Loader options shared by every component (see the module comment). */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

/** Receive window of client channels (stream and connection). */
const FLOW_CONTROL_WINDOW_BYTES = 4 * 1024 * 1024;

/**
 * Receive window of servers (stream and connection; see server-kit/grpc-server.ts). Why: HTTP/2
 * starts every connection with 64 KiB, so two coalesced Execute requests of ~50 KiB each (four W4
 * batches apiece) could not both be on their way: the second waited for the store's WINDOW_UPDATE.
 * A 4 MiB window let W4 run ~9% faster for ~7% less CPU per entry in alternating runs.
 */
export const SERVER_RECEIVE_WINDOW_BYTES = 4 * 1024 * 1024;

/** Channel / server options shared by every component. */
export const GRPC_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  // grpc-js backs off reconnects up to 120 s, failing every call meanwhile with "No connection
  // established": a controller or store restarted on the same address would stay unreachable far
  // longer than any call's deadline. Restarts are routine here, so reconnect quickly.
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
  // HTTP/2 starts with a 64 KiB receive window: a full iterator page (up to 2 MiB) would then arrive
  // in window-sized pieces, each waiting for a WINDOW_UPDATE round trip. Open a larger one.
  'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW_BYTES,
};

/** Server options shared by every component. */
export const GRPC_SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 5_000,
};

interface KvtPackage {
  SegmentStore: grpc.ServiceClientConstructor;
  Controller: grpc.ServiceClientConstructor;
}

interface OpsPackage {
  Metrics: grpc.ServiceClientConstructor;
}

/** Every `.proto` file, loaded together. */
const PROTO_FILES = ['kvt/v1/segmentstore.proto', 'kvt/v1/controller.proto', 'kvt/ops/v1/metrics.proto'];

let loaded: { kvt: { v1: KvtPackage; ops: { v1: OpsPackage } } } | undefined;

function loadAll(): NonNullable<typeof loaded> {
  if (!loaded) {
    const definition = protoLoader.loadSync(PROTO_FILES, { ...PROTO_LOADER_OPTIONS, includeDirs: [protoRoot()] });
    loaded = grpc.loadPackageDefinition(definition) as unknown as NonNullable<typeof loaded>;
  }
  return loaded;
}

/** The `kvt.v1` package: service constructors (with `.service` definitions for servers). */
export function kvtPackage(): KvtPackage {
  return loadAll().kvt.v1;
}

/** The `kvt.ops.v1` package (operations: a process's metrics), as {@link kvtPackage}. */
export function opsPackage(): OpsPackage {
  return loadAll().kvt.ops.v1;
}

/** Service definition of `kvt.v1.SegmentStore`, for `server.addService`. */
export function segmentStoreService(): grpc.ServiceDefinition {
  return kvtPackage().SegmentStore.service;
}

/** Service definition of `kvt.v1.Controller`, for `server.addService`. */
export function controllerService(): grpc.ServiceDefinition {
  return kvtPackage().Controller.service;
}

/** Service definition of `kvt.ops.v1.Metrics`, for `server.addService` (and its method's codecs, for clients). */
export function metricsService(): grpc.ServiceDefinition {
  return opsPackage().Metrics.service;
}
