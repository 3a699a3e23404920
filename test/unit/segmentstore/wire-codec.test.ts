import { describe, expect, it } from 'vitest';
import { kvtPackage } from '../../../proto/load';
import type { ExecuteResponse, IterateResponse } from '../../../proto/messages';
import { decodeExecuteRequest, encodeExecuteResponse, encodeIterateResponse } from '../../../segmentstore/service/wire-codec';

const service = kvtPackage().SegmentStore.service;
const loaderDecode = (name: 'Execute' | 'Iterate', buf: Buffer): unknown => service[name].responseDeserialize(buf);

/** A small deterministic generator, so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function bytes(rand: () => number, max: number): Buffer {
  const n = Math.floor(rand() * max);
  return Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));
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
  if (rand() < 0.4) m.condition = { kind: ['NONE', 'NOT_EXISTS', 'VERSION'][Math.floor(rand() * 3)], segmentId: text(rand), sequence: text(rand) };
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
  if (r < 0.95) {
    const index = [-1, 0, 3, 255, 2 ** 31 - 1, -(2 ** 31)][Math.floor(rand() * 6)];
    return { error: { code: text(rand), message: text(rand), index, segmentId: text(rand) } };
  }
  return {};
}

describe('segment store wire codecs', () => {
  it('decodes ExecuteRequest exactly like the loader, for many random requests', () => {
    const rand = rng(7);
    for (let i = 0; i < 300; i++) {
      const req = { requests: Array.from({ length: Math.floor(rand() * 4) }, () => randomSubRequest(rand)) };
      const wire = service.Execute.requestSerialize(req);
      expect(decodeExecuteRequest(wire)).toStrictEqual(service.Execute.requestDeserialize(wire));
    }
  });

  it('skips unknown fields and rejects truncated input', () => {
    // field 15 (varint 5) and field 14 (bytes "ab") before a real sub-request
    const unknown = Buffer.from([0x78, 0x05, 0x72, 0x02, 0x61, 0x62]);
    const wire = Buffer.concat([unknown, service.Execute.requestSerialize({ requests: [{ get: { segmentId: '3', keys: [] } }] })]);
    expect(decodeExecuteRequest(wire)).toStrictEqual(service.Execute.requestDeserialize(wire));
    const full = service.Execute.requestSerialize({ requests: [{ update: { segmentId: '1', modifications: [{ key: Buffer.from('k') }] } }] });
    expect(() => decodeExecuteRequest(full.subarray(0, full.length - 1))).toThrow(/truncated/);
  });

  it('encodes ExecuteResponse to bytes the loader decodes to the same message', () => {
    const rand = rng(11);
    for (let i = 0; i < 300; i++) {
      const res = { responses: Array.from({ length: Math.floor(rand() * 4) }, () => randomSubResponse(rand)) } as unknown as ExecuteResponse;
      const ours = encodeExecuteResponse(res);
      expect(loaderDecode('Execute', ours)).toStrictEqual(loaderDecode('Execute', service.Execute.responseSerialize(res)));
      // Default-valued fields are left out, so ours is never larger than the loader's.
      expect(ours.length).toBeLessThanOrEqual(service.Execute.responseSerialize(res).length);
    }
  });

  it('encodes IterateResponse to bytes the loader decodes to the same message', () => {
    const rand = rng(13);
    for (let i = 0; i < 200; i++) {
      const res = { items: Array.from({ length: Math.floor(rand() * 6) }, () => randomEntry(rand)), done: rand() < 0.5 } as unknown as IterateResponse;
      const ours = encodeIterateResponse(res);
      expect(loaderDecode('Iterate', ours)).toStrictEqual(loaderDecode('Iterate', service.Iterate.responseSerialize(res)));
      expect(ours.length).toBeLessThanOrEqual(service.Iterate.responseSerialize(res).length);
    }
  });
});
