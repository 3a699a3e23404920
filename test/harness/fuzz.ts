/**
 * Pieces of the RPC fuzzer: the real `.proto` codecs (protobufjs through @grpc/proto-loader, with the
 * loader options every component uses), seeded byte mutators, invalid UTF-8 families, and a raw grpc-js
 * client that sends arbitrary bytes to any method (identity serializers) and reports the status.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { GRPC_CHANNEL_OPTIONS, PROTO_LOADER_OPTIONS, protoRoot } from '../../proto/load';

/** Encoder and decoder of one method's request message. */
export interface RequestCodec {
  path: string;
  encode(message: object): Buffer;
  /** Decodes like the server does; throws when the bytes are not a message of this type. */
  decode(bytes: Buffer): Record<string, unknown>;
}

let definition: protoLoader.PackageDefinition | undefined;

/** The request codec of `kvt.v1.<service>/<method>`, from the real `.proto` files. */
export function requestCodec(service: 'SegmentStore' | 'Controller', method: string): RequestCodec {
  definition ??= protoLoader.loadSync(['kvt/v1/segmentstore.proto', 'kvt/v1/controller.proto'], { ...PROTO_LOADER_OPTIONS, includeDirs: [protoRoot()] });
  const m = (definition[`kvt.v1.${service}`] as protoLoader.ServiceDefinition)[method];
  if (!m) throw new Error(`no method kvt.v1.${service}/${method}`);
  return { path: m.path, encode: (msg) => m.requestSerialize(msg), decode: (b) => m.requestDeserialize(b) as Record<string, unknown> };
}

/** Random bytes of length [0, max). */
export function randomBytes(random: () => number, max: number): Buffer {
  const out = Buffer.alloc(Math.floor(random() * max));
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(random() * 256);
  return out;
}

/** 1–4 random edits of `input`: bit flips, byte overwrites, insertions, deletions, truncation, duplicated runs. */
export function mutate(input: Buffer, random: () => number): Buffer {
  let b = Buffer.from(input);
  const edits = 1 + Math.floor(random() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(random() * (b.length + 1));
    switch (Math.floor(random() * 6)) {
      case 0:
        if (b.length) b[at % b.length] ^= 1 << Math.floor(random() * 8);
        break;
      case 1:
        if (b.length) b[at % b.length] = [0x00, 0xff, 0x7f, 0x80, Math.floor(random() * 256)][Math.floor(random() * 5)];
        break;
      case 2:
        b = Buffer.concat([b.subarray(0, at), randomBytes(random, 8), b.subarray(at)]);
        break;
      case 3:
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + Math.floor(random() * 4))]);
        break;
      case 4:
        b = b.subarray(0, at);
        break;
      default: {
        const len = 1 + Math.floor(random() * 16);
        b = Buffer.concat([b.subarray(0, at), b.subarray(at, at + len), b.subarray(at)]);
      }
    }
  }
  return b;
}

/** Byte sequences that are not valid UTF-8 (lone continuation, truncated, overlong, surrogate, > U+10FFFF, 0xFF). */
export const INVALID_UTF8: Buffer[] = [
  Buffer.from([0x80]),
  Buffer.from([0xc3]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0x61, 0xf8, 0x88, 0x80, 0x80, 0x80]),
];

/**
 * Replaces every occurrence of `marker` (ASCII) in an encoded message with `replacement` padded to the
 * same length with 'a', so the length prefixes stay valid: a string field carrying invalid UTF-8.
 */
export function replaceMarker(encoded: Buffer, marker: string, replacement: Buffer): Buffer {
  const m = Buffer.from(marker, 'latin1');
  if (replacement.length > m.length) throw new Error('replacement longer than the marker');
  const padded = Buffer.concat([replacement, Buffer.alloc(m.length - replacement.length, 0x61)]);
  const out = Buffer.from(encoded);
  for (let at = out.indexOf(m); at >= 0; at = out.indexOf(m, at + m.length)) padded.copy(out, at);
  return out;
}

/** What a server answered to one raw call. */
export interface RawOutcome {
  code: grpc.status;
  details: string;
  errorCode?: string;
}

/** A grpc-js client that sends raw request bytes to any method. */
export class RawCaller {
  private readonly client: grpc.Client;

  constructor(address: string) {
    this.client = new grpc.Client(address, grpc.credentials.createInsecure(), {
      ...GRPC_CHANNEL_OPTIONS,
      // Let oversized requests reach the server: its limit is what is under test.
      'grpc.max_send_message_length': -1,
    });
  }

  /** Sends `bytes` to `path`; resolves the status (OK included), never rejects. */
  call(path: string, bytes: Buffer, timeoutMs = 15_000): Promise<RawOutcome> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        { deadline: Date.now() + timeoutMs },
        (err) => {
          if (!err) resolve({ code: grpc.status.OK, details: '' });
          else resolve({ code: err.code, details: err.details, errorCode: err.metadata?.get('kvt-error-code')?.[0]?.toString() });
        },
      );
    });
  }

  /**
   * Opens a bidirectional stream on `path`, writes each of `messages`, half-closes, and resolves the
   * raw answers and the final status (never rejects).
   */
  stream(path: string, messages: Buffer[], timeoutMs = 15_000): Promise<RawOutcome & { answers: Buffer[] }> {
    return new Promise((resolve) => {
      const answers: Buffer[] = [];
      const call = this.client.makeBidiStreamRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs },
      );
      call.on('data', (b: Buffer) => answers.push(b));
      call.on('error', () => undefined); // reported by 'status'
      call.on('status', (status: grpc.StatusObject) => {
        resolve({ code: status.code, details: status.details, errorCode: status.metadata?.get('kvt-error-code')?.[0]?.toString(), answers });
      });
      for (const m of messages) call.write(m);
      call.end();
    });
  }

  close(): void {
    this.client.close();
  }
}

/** Every string found under a property named `name` anywhere inside `value` (decoded messages). */
export function stringsNamed(value: unknown, name: string, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) stringsNamed(v, name, out);
  else if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === name && typeof v === 'string') out.push(v);
      else stringsNamed(v, name, out);
    }
  }
  return out;
}
