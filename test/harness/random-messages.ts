/**
 * Random kvt.v1 messages for the wire-codec equivalence tests of the client and the segment store,
 * built by walking the fields of the loaded `.proto` (protobufjs reflection, with the loader's field
 * names): every field of every message reachable from the one asked for is set now and then, so a
 * field added to a `.proto` that a hand-written codec does not handle fails those tests.
 * Deterministic from a seed; covers unset fields, set defaults, empty, decimal and non-ASCII strings,
 * plain Uint8Arrays beside Buffers, and the edge values of int32 and uint32.
 */
import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { PROTO_LOADER_OPTIONS, protoRoot } from '../../proto/load';

/** A small deterministic generator, so failures reproduce. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function bytes(rand: () => number, max: number): Uint8Array {
  const n = Math.floor(rand() * max);
  const b = Array.from({ length: n }, () => Math.floor(rand() * 256));
  // Callers may pass plain Uint8Arrays as well as Buffers.
  return rand() < 0.5 ? Buffer.from(b) : Uint8Array.from(b);
}

export function text(rand: () => number): string {
  const choices = ['', 'a', 'fam', 'é-ü', '𝄞x', '123456789012345678', 'x'.repeat(300)];
  return choices[Math.floor(rand() * choices.length)];
}

/** A string field's value: text of every kind, or a decimal (what sequences and ids are). */
function stringValue(rand: () => number): string {
  if (rand() < 0.5) return text(rand);
  const decimals = ['0', '7', '18446744073709551615', String(Math.floor(rand() * 1e12)), String(Math.floor(rand() * 2 ** 53))];
  return decimals[Math.floor(rand() * decimals.length)];
}

const pick = <T>(rand: () => number, choices: readonly T[]): T => choices[Math.floor(rand() * choices.length)];

const UINT32 = [0, 1, 127, 128, 300, 16_384, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1];
const INT32 = [0, -1, 1, 3, 255, 2 ** 31 - 1, -(2 ** 31), -300];

/** A random value of a scalar field of protobuf type `type`, as the loader's options give it. */
function scalarValue(rand: () => number, type: string): unknown {
  switch (type) {
    case 'string':
      return stringValue(rand);
    case 'bytes':
      return bytes(rand, rand() < 0.1 ? 300 : 40);
    case 'bool':
      return rand() < 0.5;
    case 'uint32':
    case 'fixed32':
      return rand() < 0.7 ? pick(rand, UINT32) : Math.floor(rand() * 2 ** 32);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return rand() < 0.7 ? pick(rand, INT32) : Math.floor(rand() * 2 ** 32) - 2 ** 31;
    case 'double':
    case 'float':
      return pick(rand, [0, 0.5, 1, 0.25]);
    // longs: String
    case 'uint64':
    case 'int64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return String(Math.floor(rand() * 2 ** 53));
    default:
      throw new Error(`random messages: no generator for field type ${type}`);
  }
}

let root: protobuf.Root | undefined;

/** The `kvt.v1` message type `name`, from the `.proto` files loaded as proto/load.ts loads them. */
export function messageType(name: string): protobuf.Type {
  if (!root) {
    const r = new protobuf.Root();
    r.resolvePath = (_origin, target) => path.join(protoRoot(), target);
    r.loadSync(['kvt/v1/segmentstore.proto', 'kvt/v1/controller.proto'], { keepCase: PROTO_LOADER_OPTIONS.keepCase });
    r.resolveAll();
    root = r;
  }
  return root.lookupType(`kvt.v1.${name}`);
}

/** Nested messages deeper than this are left unset (the codecs' messages nest 4 deep). */
const MAX_DEPTH = 6;

/** A random value of one (non-repeated) field. */
function fieldValue(rand: () => number, field: protobuf.Field, depth: number): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return pick(rand, Object.keys(resolved.values));
  if (resolved instanceof protobuf.Type) return randomMessage(rand, resolved, depth + 1);
  return scalarValue(rand, field.type);
}

/** Sets `field` of `out` to a random value, a list of them, or (a message field) null now and then. */
function setField(rand: () => number, out: Record<string, unknown>, field: protobuf.Field, depth: number): void {
  if (field.map) throw new Error(`random messages: no generator for map field ${field.fullName}`);
  if (field.resolvedType instanceof protobuf.Type && depth >= MAX_DEPTH) return;
  if (field.repeated) out[field.name] = Array.from({ length: Math.floor(rand() * 4) }, () => fieldValue(rand, field, depth));
  else if (field.resolvedType instanceof protobuf.Type && !field.partOf && rand() < 0.1) out[field.name] = null;
  else out[field.name] = fieldValue(rand, field, depth);
}

/**
 * A random message of `type` (a name in `kvt.v1`, or a loaded type): each field set with
 * probability 0.75, one member (or none) of each oneof, nested messages likewise.
 */
export function randomMessage(rand: () => number, type: string | protobuf.Type, depth = 0): Record<string, unknown> {
  const t = typeof type === 'string' ? messageType(type) : type;
  const out: Record<string, unknown> = {};
  for (const field of t.fieldsArray) {
    if (!field.partOf && rand() < 0.75) setField(rand, out, field, depth);
  }
  for (const oneof of t.oneofsArray) {
    if (rand() < 0.15) continue;
    setField(rand, out, pick(rand, oneof.fieldsArray), depth);
  }
  return out;
}

/** Random messages of `type`, `count` of them from `seed`. */
export function randomMessages(type: string, seed: number, count: number): Record<string, unknown>[] {
  const rand = rng(seed);
  return Array.from({ length: count }, () => randomMessage(rand, type));
}

/**
 * Unknown fields of every wire type: 15 (fixed64), 14 (fixed32), 13 (a 10-byte varint), 12 (bytes).
 * The fixed payloads are 0x08 bytes, which read as tags if a decoder skips them by the wrong width.
 */
export const UNKNOWN_FIELDS = Buffer.from(
  protobuf.Writer.create()
    .uint32((15 << 3) | 1)
    .fixed64(0x0808080808080808)
    .uint32((14 << 3) | 5)
    .fixed32(0x08080808)
    .uint32((13 << 3) | 0)
    .int32(-2)
    .uint32((12 << 3) | 2)
    .bytes(Buffer.from([0x08, 0x09]))
    .finish(),
);

/** Length-delimited field `n` holding `payload`. */
export function lengthDelimited(n: number, payload: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      protobuf.Writer.create()
        .uint32((n << 3) | 2)
        .uint32(payload.length)
        .finish(),
    ),
    payload,
  ]);
}
