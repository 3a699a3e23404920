/**
 * The floor of the mixed load's latency on this machine: what a bare grpc-js bidirectional stream
 * between two Node processes answers, with no storage behind it, for the same open-loop load as the
 * peers get (the same rate, the same pages' sizes). kvt's client sends every call as a message of
 * such a stream, so no kvt read can beat this; the report shows it beside the p99 target.
 *
 * The channel has kvt's client options (proto/load.ts GRPC_CHANNEL_OPTIONS); the runs of 2026-11-27
 * until 21:00 had grpc-js's defaults, a 64 KiB receive window among them.
 *
 * The server runs in a child process (this file with `--serve`). A message carries a 4-byte id, the
 * 4-byte size of the answer asked for and, for a write, the render's bytes; the answer carries the
 * id and that many bytes of text, which the caller takes as bytes, as the benchmark's getLatest does
 * (`{ bytes: true }`: undecoded).
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { GRPC_CHANNEL_OPTIONS } from '../../proto/load';
import { repoRoot } from '../peers/peer';

const identity = (b: Buffer): Buffer => b;
/** One method, bytes in and out, no .proto: the messages are this file's own framing. */
const SERVICE: grpc.ServiceDefinition = {
  Echo: {
    path: '/kvt.bench.Floor/Echo',
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};
/** The size of a write's answer (an acknowledgement). */
const ACK_BYTES = 16;

/** A page read or written through the bare stream, as the mixed load calls the peers. */
export interface GrpcFloorPeer {
  put(r: { title: string; value: string }): Promise<void>;
  latest(title: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Starts the echo server in a child process and opens one stream to it; `latestBytes(title)` is the
 * size of the answer a getLatest of that page asks for (its latest render's UTF-8 bytes).
 */
export async function startGrpcFloor(latestBytes: (title: string) => number): Promise<GrpcFloorPeer> {
  // The compiled file serves (a test imports this one from its TypeScript source).
  const script = __filename.endsWith('.ts') ? path.join(repoRoot(), 'dist', 'bench', 'revisions', 'grpc-floor.js') : __filename;
  const child: ChildProcess = fork(script, ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve(Number(m)));
    child.once('exit', (code) => reject(new Error(`the grpc-js floor server exited (${code}) before listening`)));
  });
  const Client = grpc.makeGenericClientConstructor(SERVICE, 'Floor');
  // kvt's client channel options (its 4 MiB receive window above all): a floor measured with grpc-js's
  // 64 KiB default would wait on window updates that kvt's client does not.
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
  const stream = (client as unknown as { Echo(): grpc.ClientDuplexStream<Buffer, Buffer> }).Echo();
  const waiting = new Map<number, { resolve: (answer: Buffer) => void; reject: (err: Error) => void }>();
  let nextId = 0;
  let broken: Error | undefined;
  stream.on('data', (answer: Buffer) => {
    const id = answer.readUInt32BE(0);
    const pending = waiting.get(id);
    waiting.delete(id);
    pending?.resolve(answer);
  });
  // A broken stream fails every call waiting on it and every later one, rather than leaving the load hanging.
  stream.on('error', (err: Error) => {
    broken = err;
    for (const pending of waiting.values()) pending.reject(err);
    waiting.clear();
  });
  const call = (size: number, body?: Buffer): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      if (broken) return reject(broken);
      const id = nextId++ >>> 0;
      const head = Buffer.allocUnsafe(8);
      head.writeUInt32BE(id, 0);
      head.writeUInt32BE(size, 4);
      waiting.set(id, { resolve, reject });
      stream.write(body ? Buffer.concat([head, body]) : head);
    });
  return {
    put: async (r) => void (await call(ACK_BYTES, Buffer.from(r.value))),
    latest: async (title) => (await call(latestBytes(title))).length > 4,
    close: async () => {
      stream.end();
      client.close();
      child.kill();
      await new Promise((resolve) => (child.exitCode === null && child.signalCode === null ? child.once('exit', resolve) : resolve(undefined)));
    },
  };
}

/** The child: answers each message with its id and the bytes it asks for. */
function serve(): void {
  const server = new grpc.Server();
  let text = Buffer.alloc(0);
  server.addService(SERVICE, {
    Echo: (stream: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      stream.on('data', (m: Buffer) => {
        const size = m.readUInt32BE(4);
        if (text.length < size + 4) text = Buffer.alloc(size + 4, 'revision text ');
        const answer = Buffer.from(text.subarray(0, size + 4));
        m.copy(answer, 0, 0, 4);
        stream.write(answer);
      });
      stream.on('end', () => stream.end());
    },
  });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    process.send?.(port);
  });
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module && process.argv.includes('--serve')) serve();
