import { describe, expect, it } from 'vitest';
import * as protobuf from 'protobufjs';
import { messageType, randomMessage, rng } from '../../harness/random-messages';

/** The messages the hand-written codecs encode or decode (client/internal/, segmentstore/service/). */
const CODEC_MESSAGES = ['ExecuteRequest', 'ExecuteStreamRequest', 'ExecuteResponse', 'ExecuteStreamResponse', 'IterateResponse'];

/** Every field of `type` and of the messages it holds, as `Type.field`, and each enum field's values as `Type.field=NAME`. */
function reachable(type: protobuf.Type, out = new Set<string>(), seen = new Set<string>()): Set<string> {
  if (seen.has(type.fullName)) return out;
  seen.add(type.fullName);
  for (const field of type.fieldsArray) {
    out.add(`${type.name}.${field.name}`);
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Enum) for (const name of Object.keys(resolved.values)) out.add(`${type.name}.${field.name}=${name}`);
    if (resolved instanceof protobuf.Type) reachable(resolved, out, seen);
  }
  return out;
}

/** Whether `v` differs from its field's default (so a codec that drops the field changes the message). */
function isSet(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return false;
  return !(v instanceof Uint8Array || Array.isArray(v)) || v.length > 0;
}

/** Notes in `out` the fields `msg` (of `type`) sets to something other than their default, recursively. */
function noteSet(type: protobuf.Type, msg: Record<string, unknown>, out: Set<string>): void {
  for (const field of type.fieldsArray) {
    const v = msg[field.name];
    if (!isSet(v)) continue;
    out.add(`${type.name}.${field.name}`);
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Enum) out.add(`${type.name}.${field.name}=${v}`);
    if (resolved instanceof protobuf.Type) {
      for (const item of field.repeated ? (v as Record<string, unknown>[]) : [v as Record<string, unknown>]) noteSet(resolved, item, out);
    }
  }
}

describe('randomMessage', () => {
  it('sets every field of every message the codecs handle, and every enum value, within 300 messages', () => {
    for (const name of CODEC_MESSAGES) {
      const type = messageType(name);
      const rand = rng(1);
      const set = new Set<string>();
      for (let i = 0; i < 300; i++) noteSet(type, randomMessage(rand, type), set);
      expect(
        [...reachable(type)].filter((f) => !set.has(f)),
        name,
      ).toEqual([]);
    }
  });

  it('sets at most one member of a oneof', () => {
    const rand = rng(2);
    for (let i = 0; i < 300; i++) {
      const sub = randomMessage(rand, 'SubResponse');
      expect(['update', 'get', 'error'].filter((k) => k in sub).length).toBeLessThanOrEqual(1);
    }
  });
});
