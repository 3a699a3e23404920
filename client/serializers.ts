/**
 * Serializers turn keys and values into bytes and back. Keys are compared as unsigned bytes, so the
 * serializer defines the key order seen by iterators.
 */
import { writeUtf8 } from '../proto/wire';

/** Turns values of type T into bytes and back. */
export interface Serializer<T> {
  serialize(value: T): Uint8Array;
  deserialize(bytes: Uint8Array): T;
  /**
   * Optional: deserializes `buffer[start, end)` without a view of it being made first. Iterators call
   * it for every key and value they read, when present (the built-in serializers have it); it must
   * return what `deserialize(buffer.subarray(start, end))` returns.
   */
  deserializeFrom?(buffer: Buffer, start: number, end: number): T;
}

const EMPTY = Buffer.alloc(0);

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * `Buffer.from(text, 'utf8')`, but a short ASCII string (most keys) is written by writeUtf8's JS loop:
 * about half the cost of the native call, which was ~10% of the client's busy time in putAll (bench W4).
 */
export function encodeUtf8(text: string): Buffer {
  const length = Buffer.byteLength(text, 'utf8');
  const out = Buffer.allocUnsafe(length);
  writeUtf8(out, 0, text, length);
  return out;
}

const utf8: Serializer<string> = {
  serialize(value: string): Uint8Array {
    if (typeof value !== 'string') throw new TypeError(`the utf8 serializer takes strings, got ${typeof value}`);
    return encodeUtf8(value);
  },
  deserialize(bytes: Uint8Array): string {
    // toString() without arguments is UTF-8 and skips the encoding lookup: keys are decoded per entry.
    return asBuffer(bytes).toString();
  },
  deserializeFrom(buffer: Buffer, start: number, end: number): string {
    return start === end ? '' : buffer.toString('utf8', start, end);
  },
};

const json: Serializer<unknown> = {
  serialize(value: unknown): Uint8Array {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`the json serializer cannot encode ${typeof value}`);
    return Buffer.from(text, 'utf8');
  },
  deserialize(bytes: Uint8Array): unknown {
    return JSON.parse(asBuffer(bytes).toString('utf8'));
  },
  deserializeFrom(buffer: Buffer, start: number, end: number): unknown {
    return JSON.parse(buffer.toString('utf8', start, end));
  },
};

const bytes: Serializer<Uint8Array> = {
  serialize(value: Uint8Array): Uint8Array {
    if (!(value instanceof Uint8Array)) throw new TypeError(`the bytes serializer takes Uint8Array, got ${typeof value}`);
    return value;
  },
  deserialize(value: Uint8Array): Uint8Array {
    // A copy detached from the gRPC receive buffer, so holding one entry does not pin a whole message.
    return new Uint8Array(value);
  },
  deserializeFrom(buffer: Buffer, start: number, end: number): Uint8Array {
    const out = new Uint8Array(end - start);
    buffer.copy(out, 0, start, end);
    return out;
  },
};

const bytesView: Serializer<Uint8Array> = {
  serialize: bytes.serialize,
  deserialize(value: Uint8Array): Uint8Array {
    // No copy: a view into the received response. Cheaper for large scans, but keeping any one value
    // keeps its whole response (up to one iterator page, 2 MiB) in memory.
    return value;
  },
  deserializeFrom(buffer: Buffer, start: number, end: number): Uint8Array {
    return start === end ? EMPTY : Buffer.from(buffer.buffer, buffer.byteOffset + start, end - start);
  },
};

/** `serializer`'s deserializeFrom, or its deserialize of a view of the range. */
export function rangeDeserializer<T>(serializer: Serializer<T>): (buffer: Buffer, start: number, end: number) => T {
  if (serializer.deserializeFrom) return serializer.deserializeFrom.bind(serializer);
  return (buffer, start, end) => serializer.deserialize(buffer.subarray(start, end));
}

/**
 * The built-in serializers: UTF-8 strings, JSON values and raw bytes. `bytes` copies each value it
 * reads; `bytesView` hands out views into the received response instead (no copy per value, but a
 * value kept alive keeps its whole response alive).
 */
export const Serializers: {
  utf8: Serializer<string>;
  json: Serializer<unknown>;
  bytes: Serializer<Uint8Array>;
  bytesView: Serializer<Uint8Array>;
} = { utf8, json, bytes, bytesView };
