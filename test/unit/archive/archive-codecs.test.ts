/** The archive's pieces on their own: tids, records, blocks, the cache, options, the error, the CLI's archive address. */
import { describe, expect, it } from 'vitest';
import { parseArchiveTarget } from '../../../bin/cli-archive';
import { ArchiveCorruptedError, InvalidArgumentError, KvtError } from '../../../client';
import { BlockCache } from '../../../client/archive/block-cache';
import { decodeBlock, decodePending, encodeBlock, encodePending } from '../../../client/archive/block-codec';
import { decodeRecord, encodeRecord, indexRecords, joinRecords } from '../../../client/archive/record-codec';
import { resolveArchiveOptions } from '../../../client/archive/render-validation';
import { isTimeUuid, keyToTid, tidToKey } from '../../../client/archive/tid';
import { UsageError } from '../../../server-kit/flags';
import { timeUuid } from '../../suites/archive-context';

const SETTINGS = { quality: 6, windowBits: 24 };

describe('archive tids', () => {
  it('keys a version 1 UUID in time order and reads it back in lower case', () => {
    const tids = [timeUuid(1_000), timeUuid(1_000, 1), timeUuid(2_000_000_000_000), timeUuid(2_000_000_000_000, 5_000)];
    const keys = tids.map(tidToKey);
    expect([...keys].sort(Buffer.compare)).toEqual(keys);
    expect(keys.map((k) => keyToTid(k))).toEqual(tids);
    expect(keyToTid(tidToKey(tids[2].toUpperCase()))).toBe(tids[2]);
  });

  it('accepts only version 1 UUIDs of the RFC 4122 variant', () => {
    expect(isTimeUuid(timeUuid(5))).toBe(true);
    expect(isTimeUuid('5f0c7d2e-0000-4000-8000-000000000000')).toBe(false);
    expect(isTimeUuid('5f0c7d2e-0000-1000-c000-000000000000')).toBe(false);
    expect(isTimeUuid(42)).toBe(false);
  });
});

describe('archive records', () => {
  const render = { title: 'P', rev: 2 ** 40 + 3, tid: timeUuid(9), value: 'héllo', headers: { a: 'b' }, parts: { bin: new Uint8Array([1, 2]), txt: 'x' } };

  it('round-trips a render with text, bytes, headers and parts, and counts its raw bytes', () => {
    const record = encodeRecord(render);
    expect(record.rawBytes).toBe(Buffer.byteLength('héllo') + JSON.stringify({ a: 'b' }).length + 'bin'.length + 2 + 'txt'.length + 1);
    expect(decodeRecord('P', record.bytes)).toEqual(render);
  });

  it('joins records in (rev, tid) order and finds each again', () => {
    const a = encodeRecord({ ...render, rev: 7 });
    const b = encodeRecord({ ...render, rev: 3 });
    const c = encodeRecord({ ...render, rev: 3, tid: timeUuid(10) });
    const payload = joinRecords([a, c, b]);
    expect(payload).toEqual(Buffer.concat([b.bytes, c.bytes, a.bytes]));
    const spans = indexRecords(payload);
    expect([...spans.keys()]).toEqual([b.id, c.id, a.id]);
    expect(decodeRecord('P', payload, spans.get(c.id))).toMatchObject({ rev: 3, tid: timeUuid(10) });
  });

  it('refuses a payload that is cut short instead of reading past it', () => {
    const { bytes } = encodeRecord(render);
    expect(() => indexRecords(bytes.subarray(0, bytes.length - 1))).toThrow(/runs past the end/);
    expect(() => indexRecords(bytes.subarray(0, 10))).toThrow('a record at byte 0 is cut short');
  });
});

describe('archive blocks', () => {
  it('compresses a payload and reads it back after checking header, length and checksum', async () => {
    const payload = Buffer.from('the same words again and again. '.repeat(500));
    const stored = await encodeBlock('sealed', 3, 12, payload, SETTINGS);
    expect(stored.length).toBeLessThan(payload.length / 20);
    expect(await decodeBlock('P', 3, 'sealed', stored)).toEqual({ records: 12, payload });
    await expect(decodeBlock('P', 3, 'image', stored)).rejects.toThrow('archive block 3 of page "P" is corrupted: its kind is sealed; expected image');
    await expect(decodeBlock('P', 4, 'sealed', stored)).rejects.toThrow('archive block 4 of page "P" is corrupted: its header names block 3');
  });

  it('reads a payload of several MiB whole, and refuses a stream whose length differs from its header', async () => {
    const payload = Buffer.from(Array.from({ length: 60_000 }, (_, i) => `line ${i % 977} of a long page\n`).join(''));
    expect(payload.length).toBeGreaterThan(1024 * 1024);
    const stored = await encodeBlock('sealed', 2, 40, payload, SETTINGS);
    expect((await decodeBlock('P', 2, 'sealed', stored)).payload.equals(payload)).toBe(true);
    // The payload length (header bytes 14–17) is outside the checksum: a header claiming less or more is damage.
    const shorter = Buffer.from(stored);
    shorter.writeUInt32BE(payload.length - 1, 14);
    await expect(decodeBlock('P', 2, 'sealed', shorter)).rejects.toThrow(
      `archive block 2 of page "P" is corrupted: it decompresses to more than ${payload.length - 1} bytes; its header says ${payload.length - 1}`,
    );
    const longer = Buffer.from(stored);
    longer.writeUInt32BE(payload.length + 1, 14);
    await expect(decodeBlock('P', 2, 'sealed', longer)).rejects.toThrow(`archive block 2 of page "P" is corrupted: it decompresses to ${payload.length} bytes; its header says ${payload.length + 1}`);
  });

  it('checks a pending record', () => {
    const record = Buffer.from('pending');
    const stored = encodePending(record);
    expect(decodePending('P', 0, stored)).toEqual(record);
    stored[stored.length - 1] ^= 1;
    expect(() => decodePending('P', 0, stored)).toThrow('archive block 0 of page "P" is corrupted: a pending record fails its checksum');
  });

  it('reports ArchiveCorruptedError with its code, page and block', () => {
    const err = new ArchiveCorruptedError('Main Page', 7, 'its checksum does not match');
    expect(err).toBeInstanceOf(KvtError);
    expect(err).toMatchObject({ name: 'ArchiveCorruptedError', code: 'ARCHIVE_CORRUPTED', title: 'Main Page', block: 7 });
    expect(err.message).toBe('archive block 7 of page "Main Page" is corrupted: its checksum does not match');
  });
});

describe('archive block cache', () => {
  const block = (bytes: number) => ({ payload: Buffer.alloc(bytes), spans: new Map() });

  it('keeps at most its size in bytes, evicting the least recently used', () => {
    const cache = new BlockCache(250);
    cache.set('a', 0, block(100));
    cache.set('a', 1, block(100));
    expect(cache.get('a', 0)).toBeDefined(); // now the most recently used
    cache.set('b', 0, block(100));
    expect(cache.size).toBe(200);
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.get('a', 0)).toBeDefined();
    cache.set('c', 0, block(300)); // larger than the cache: not kept
    expect(cache.get('c', 0)).toBeUndefined();
    expect(cache.size).toBe(200);
  });
});

describe('archive options', () => {
  it('fills in the defaults', () => {
    expect(resolveArchiveOptions()).toEqual({ blockRevisions: 128, blockBytes: 4 * 1024 * 1024, quality: 6, windowBits: 24, cacheBytes: 64 * 1024 * 1024, concurrency: 8, flushOnClose: true });
  });

  it('names a bad option and its limits', () => {
    const cases: [object, string][] = [
      [{ blockRevisions: 0 }, 'blockRevisions is 0; it must be an integer from 1 to 1,000'],
      [{ blockBytes: 16 * 1024 * 1024 }, 'blockBytes is 16777216; it must be an integer from 1,024 to 8,388,608'],
      [{ quality: 12 }, 'quality is 12; it must be an integer from 0 to 11'],
      [{ windowBits: 25 }, 'windowBits is 25; it must be an integer from 10 to 24'],
      [{ flushOnClose: 'yes' }, 'flushOnClose is string; it must be a boolean'],
    ];
    for (const [options, message] of cases) {
      expect(() => resolveArchiveOptions(options)).toThrow(InvalidArgumentError);
      expect(() => resolveArchiveOptions(options)).toThrow(message);
    }
  });
});

describe('kvt archive addresses', () => {
  it('reads kvt:SCOPE/TABLE and cassandra:HOST[:PORT]/KEYSPACE', () => {
    expect(parseArchiveTarget('kvt:wiki/archive')).toEqual({ kind: 'kvt', scope: 'wiki', table: 'archive' });
    expect(parseArchiveTarget('cassandra:127.0.0.1:9142/history')).toEqual({ kind: 'cassandra', host: '127.0.0.1', port: 9142, keyspace: 'history' });
    expect(parseArchiveTarget('cassandra:db.local/history')).toEqual({ kind: 'cassandra', host: 'db.local', port: 9042, keyspace: 'history' });
    expect(parseArchiveTarget('cassandra:[::1]:9042/h')).toEqual({ kind: 'cassandra', host: '::1', port: 9042, keyspace: 'h' });
  });

  it('refuses anything else with a usage error naming both forms', () => {
    for (const bad of ['wiki/archive', 'kvt:wiki', 'cassandra:host:99999/ks', 'cassandra:host/bad-name']) {
      expect(() => parseArchiveTarget(bad)).toThrow(UsageError);
    }
    expect(() => parseArchiveTarget('x')).toThrow('archive must be written kvt:SCOPE/TABLE or cassandra:HOST:PORT/KEYSPACE; got "x"');
  });
});
