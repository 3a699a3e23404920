import { describe, expect, it } from 'vitest';
import { decodeExecuteResponse, decodeIterateResponse, encodeExecuteRequest } from '../../../client/internal/wire-codec';
import { kvtPackage } from '../../../proto/load';
import type { ExecuteRequest } from '../../../proto/messages';

const service = kvtPackage().SegmentStore.service;

/** A small deterministic generator, so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function bytes(rand: () => number, max: number): Uint8Array {
  const n = Math.floor(rand() * max);
  const b = Array.from({ length: n }, () => Math.floor(rand() * 256));
  // Callers may pass plain Uint8Arrays as well as Buffers.
  return rand() < 0.5 ? Buffer.from(b) : Uint8Array.from(b);
}

function text(rand: () => number): string {
  const choices = ['', 'a', 'fam', 'é-ü', '𝄞x', '123456789012345678', 'x'.repeat(300)];
  return choices[Math.floor(rand() * choices.length)];
}

function randomModification(rand: () => number): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  if (rand() < 0.8) m.type = ['PUT', 'INSERT', 'REMOVE', 'REMOVE_RANGE'][Math.floor(rand() * 4)];
  if (rand() < 0.8) m.family = text(rand);
  if (rand() < 0.9) m.key = bytes(rand, 40);
  if (rand() < 0.7) m.value = bytes(rand, 300);
  const c = rand();
  if (c < 0.4) m.condition = { kind: ['NONE', 'NOT_EXISTS', 'VERSION'][Math.floor(rand() * 3)], segmentId: text(rand), sequence: text(rand) };
  else if (c < 0.5) m.condition = undefined;
  if (rand() < 0.3) m.ttlMs = String(Math.floor(rand() * 1e9));
  if (rand() < 0.2) m.rangeFrom = bytes(rand, 10);
  if (rand() < 0.2) m.rangeTo = bytes(rand, 10);
  if (rand() < 0.2) m.rangePrefix = bytes(rand, 10);
  return m;
}

function randomSubRequest(rand: () => number): Record<string, unknown> {
  const r = rand();
  if (r < 0.5) return { update: { segmentId: text(rand), modifications: Array.from({ length: Math.floor(rand() * 5) }, () => randomModification(rand)) } };
  if (r < 0.9) return { get: { segmentId: text(rand), keys: Array.from({ length: Math.floor(rand() * 4) }, () => ({ family: text(rand), key: bytes(rand, 20) })) } };
  return {};
}

function randomEntry(rand: () => number): Record<string, unknown> {
  return { found: rand() < 0.7, key: bytes(rand, 30), value: bytes(rand, 200), sequence: rand() < 0.8 ? String(Math.floor(rand() * 2 ** 53)) : '' };
}

function randomSubResponse(rand: () => number): Record<string, unknown> {
  const r = rand();
  if (r < 0.4) return { update: { sequences: Array.from({ length: Math.floor(rand() * 4) }, () => (rand() < 0.8 ? String(Math.floor(rand() * 1e12)) : '')) } };
  if (r < 0.7) return { get: { entries: Array.from({ length: Math.floor(rand() * 4) }, () => randomEntry(rand)) } };
  if (r < 0.95) return { error: { code: text(rand), message: text(rand), index: [-1, 0, 3, 2 ** 31 - 1, -(2 ** 31)][Math.floor(rand() * 5)], segmentId: text(rand) } };
  return {};
}

describe('client wire codecs', () => {
  it('encodes ExecuteRequest to bytes the loader decodes to the same message', () => {
    const rand = rng(3);
    for (let i = 0; i < 300; i++) {
      const req = { requests: Array.from({ length: Math.floor(rand() * 4) }, () => randomSubRequest(rand)) } as unknown as ExecuteRequest;
      const ours = encodeExecuteRequest(req);
      expect(service.Execute.requestDeserialize(ours)).toStrictEqual(service.Execute.requestDeserialize(service.Execute.requestSerialize(req)));
    }
  });

  it('decodes ExecuteResponse exactly like the loader', () => {
    const rand = rng(5);
    for (let i = 0; i < 300; i++) {
      const wire = service.Execute.responseSerialize({ responses: Array.from({ length: Math.floor(rand() * 4) }, () => randomSubResponse(rand)) });
      expect(decodeExecuteResponse(wire)).toStrictEqual(service.Execute.responseDeserialize(wire));
    }
  });

  it('decodes IterateResponse exactly like the loader, and rejects truncated input', () => {
    const rand = rng(9);
    for (let i = 0; i < 200; i++) {
      const wire = service.Iterate.responseSerialize({ items: Array.from({ length: Math.floor(rand() * 6) }, () => randomEntry(rand)), done: rand() < 0.5 });
      expect(decodeIterateResponse(wire)).toStrictEqual(service.Iterate.responseDeserialize(wire));
    }
    const wire = service.Iterate.responseSerialize({ items: [{ found: true, key: Buffer.from('key'), value: Buffer.from('v'), sequence: '1' }], done: true });
    expect(() => decodeIterateResponse(wire.subarray(0, 4))).toThrow(/truncated/);
  });
});
