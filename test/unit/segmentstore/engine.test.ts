/** The storage conformance suite against the in-process engine, plus engine-only behaviour. */
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { failNextChainedWrite, failNextLogWrite } from '../../harness/leveldb-faults';
import { tempDir } from '../../harness/process';
import { scratchEngines } from '../../harness/scratch-engines';
import { kvtPackage } from '../../../proto/load';
import type { ExecuteRequest, ExecuteResponse } from '../../../proto/messages';
import { execute } from '../../../segmentstore/service/segment-store-service';
import { SegmentEngine, StorageLockedError } from '../../../segmentstore/storage/segment-engine';
import { engineAdapter } from '../../suites/segment-store-adapter';
import { storageConformance } from '../../suites/storage-conformance';

/** `execute`'s answer as the loader decodes it off the wire: an iterator page (written as its bytes) decoded. */
async function executeAsDecoded(engine: SegmentEngine, req: ExecuteRequest): Promise<ExecuteResponse> {
  const res = await execute(engine, req);
  const pages = kvtPackage().SegmentStore.service.Iterate;
  return { responses: res.responses.map((r) => (Buffer.isBuffer(r.iterate) ? { ...r, iterate: pages.responseDeserialize(r.iterate) } : r)) } as ExecuteResponse;
}

storageConformance('in-process engine', async () => {
  const dir = tempDir('kvt-engine-');
  let now = 1_700_000_000_000;
  const engine = await SegmentEngine.open(path.join(dir.path, 'db'), { clock: () => now, expirySweepIntervalMs: 0 });
  return {
    store: engineAdapter(engine, (req) => executeAsDecoded(engine, req)),
    advanceClock: (ms) => {
      now += ms;
    },
    dispose: async () => {
      await engine.close();
      dir.dispose();
    },
  };
});

describe('SegmentEngine', () => {
  const scratch = scratchEngines();
  const open = (location: string, clock?: () => number): Promise<SegmentEngine> => scratch.open(location, { clock });

  it('goes opening → open → closing → closed and refuses calls once closed', async () => {
    const engine = await SegmentEngine.open(scratch.location(), { expirySweepIntervalMs: 0 });
    expect(engine.state).toBe('open');
    await engine.createSegment('1');
    const write = engine.update({ segmentId: '1', modifications: [{ key: Buffer.from('k'), value: Buffer.from('v') }] });
    const closing = engine.close();
    expect(engine.state).toBe('closing');
    await write;
    await closing;
    await engine.close();
    expect(engine.state).toBe('closed');
    await expect(engine.get({ segmentId: '1', keys: [] })).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'segment store is closed' });
  });

  it.each([
    { write: 'its durable log write', logBytes: undefined, fault: failNextLogWrite },
    { write: 'its LevelDB write (no durable log)', logBytes: 0, fault: failNextChainedWrite },
  ])('stops for good after a flush fails in $write (fail-stop): later calls get UNAVAILABLE, a reopen recovers what was durable', async ({ logBytes, fault }) => {
    const location = scratch.location();
    const failures: unknown[] = [];
    const engine = await SegmentEngine.open(location, { expirySweepIntervalMs: 0, logBytes, onStorageFailure: (err) => failures.push(err) });
    await engine.createSegment('1');
    const put = (k: string) => engine.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from(k), value: Buffer.from(`v-${k}`) }] });
    const durable = await put('a');
    {
      using _fault = fault('injected write failure');
      // The caller of the failed write learns the cause (the outcome of a failed write is not known
      // to be "not written", so it is not reported as UNAVAILABLE, which clients may retry blindly).
      await expect(put('b')).rejects.toThrow('injected write failure');
    }
    expect(engine.state).toBe('failed');
    expect(failures).toHaveLength(1);
    expect((failures[0] as Error).message).toBe('injected write failure');
    const refused = { code: 'UNAVAILABLE', message: expect.stringMatching(/^segment store storage failed \(injected write failure\); restart it to recover$/) };
    await expect(put('c')).rejects.toMatchObject(refused);
    await expect(engine.get({ segmentId: '1', keys: [{ family: 'f', key: Buffer.from('a') }] })).rejects.toMatchObject(refused);
    await expect(engine.createSegment('2')).rejects.toMatchObject(refused);
    await engine.close();
    expect(engine.state).toBe('closed');
    expect(failures).toHaveLength(1);

    const reopened = await SegmentEngine.open(location, { expirySweepIntervalMs: 0, logBytes });
    scratch.defer(() => reopened.close());
    const got = await reopened.get({ segmentId: '1', keys: ['a', 'b', 'c'].map((k) => ({ family: 'f', key: Buffer.from(k) })) });
    expect(got.entries.map((e) => e.found)).toEqual([true, false, false]);
    expect(got.entries[0].sequence).toBe(durable.sequences[0]);
    const next = await reopened.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from('d'), value: Buffer.from('v') }] });
    expect(BigInt(next.sequences[0])).toBeGreaterThan(BigInt(durable.sequences[0]));
  });

  it('stops for good when LevelDB fails to take writes the log holds, and a reopen replays every acknowledged one', async () => {
    const location = scratch.location();
    const failures: unknown[] = [];
    // Applied only when asked (a count), so the writes below wait in the log.
    const engine = await SegmentEngine.open(location, { expirySweepIntervalMs: 0, logApplyMs: 60_000, onStorageFailure: (err) => failures.push(err) });
    await engine.createSegment('1');
    const acked = await Promise.all(['a', 'b', 'c'].map((k) => engine.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from(k), value: Buffer.from(`v-${k}`) }] })));
    await engine.update({ segmentId: '1', modifications: [{ key: Buffer.from('plain'), value: Buffer.from('p') }] });
    {
      using _fault = failNextChainedWrite('injected apply failure');
      await expect(engine.segmentInfo('1')).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'segment store storage failed (injected apply failure); restart it to recover' });
    }
    expect(engine.state).toBe('failed');
    expect(failures.map((f) => (f as Error).message)).toEqual(['injected apply failure']);
    await expect(engine.update({ segmentId: '1', modifications: [{ key: Buffer.from('later'), value: Buffer.from('v') }] })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await engine.close();

    const reopened = await open(location);
    const got = await reopened.get({
      segmentId: '1',
      keys: [...['a', 'b', 'c'].map((k) => ({ family: 'f', key: Buffer.from(k) })), { family: '', key: Buffer.from('plain') }, { family: '', key: Buffer.from('later') }],
    });
    expect(got.entries.map((e) => e.found)).toEqual([true, true, true, true, false]);
    expect(got.entries.slice(0, 3).map((e) => e.sequence)).toEqual(acked.map((a) => a.sequences[0]));
    expect((await reopened.segmentInfo('1')).entryCount).toBe('4');
  });

  it('keeps data and strictly increasing versions across a reopen, and refuses a second opener', async () => {
    const location = scratch.location();
    const first = await SegmentEngine.open(location, { expirySweepIntervalMs: 0 });
    await first.createSegment('7', 'scope/t#0');
    const res = await first.update({ segmentId: '7', modifications: [{ family: 'f', key: Buffer.from('k'), value: Buffer.from('v') }] });
    await expect(SegmentEngine.open(location)).rejects.toBeInstanceOf(StorageLockedError);
    await first.close();
    const second = await open(location);
    const got = await second.get({ segmentId: '7', keys: [{ family: 'f', key: Buffer.from('k') }] });
    expect(got.entries[0]).toMatchObject({ found: true, sequence: res.sequences[0] });
    const next = await second.update({ segmentId: '7', modifications: [{ family: 'f', key: Buffer.from('k2'), value: Buffer.from('v') }] });
    expect(BigInt(next.sequences[0])).toBeGreaterThan(BigInt(res.sequences[0]));
    expect((await second.segmentInfo('7')).table).toBe('scope/t#0');
  });

  it('sweeps expired entries in the background batches without touching rewritten keys', async () => {
    let now = 1_000_000;
    const engine = await open(scratch.location(), () => now);
    await engine.createSegment('1');
    const mods = Array.from({ length: 50 }, (_, i) => ({ family: 'f', key: Buffer.from(`k${i}`), value: Buffer.from('v'), ttlMs: '1000' }));
    await engine.update({ segmentId: '1', modifications: mods });
    await engine.update({ segmentId: '1', modifications: [{ family: 'f', key: Buffer.from('k0'), value: Buffer.from('kept') }] });
    now += 1000;
    expect(await engine.sweepExpired()).toBe(49);
    expect(await engine.sweepExpired()).toBe(0);
    const info = await engine.segmentInfo('1');
    expect(info.entryCount).toBe('1');
    const got = await engine.get({ segmentId: '1', keys: [{ family: 'f', key: Buffer.from('k0') }] });
    expect(got.entries[0].value.toString()).toBe('kept');
  });

  it('never lets an expired entry come back when the wall clock steps back, not even across a reopen', async () => {
    const location = scratch.location();
    let wall = 1_000_000;
    const read = async (e: SegmentEngine, segmentId: string, key: string) => {
      const [entry] = (await e.get({ segmentId, keys: [{ family: '', key: Buffer.from(key) }] })).entries;
      return entry.found ? Buffer.from(entry.value).toString() : null;
    };
    const first = await SegmentEngine.open(location, { clock: () => wall, expirySweepIntervalMs: 0 });
    await first.createSegment('1');
    // 'x' expires at 1,001,000, 'y' at 1,002,000.
    await first.update({ segmentId: '1', modifications: [{ family: '', key: Buffer.from('x'), value: Buffer.from('v'), ttlMs: '1000' }] });
    await first.update({ segmentId: '1', modifications: [{ family: '', key: Buffer.from('y'), value: Buffer.from('v'), ttlMs: '2000' }] });
    wall += 1500;
    expect(await read(first, '1', 'x')).toBeNull();
    expect(await read(first, '1', 'y')).toBe('v');
    // NTP steps the clock back a minute: what was expired stays expired, and time stands still for
    // expiry until the wall clock is back where it was.
    wall -= 60_000;
    expect(await read(first, '1', 'x')).toBeNull();
    expect(await read(first, '1', 'y')).toBe('v');
    await first.close();
    // Restarted while the clock is still behind: the store remembers how far its clock had gone.
    const again = await open(location, () => wall);
    expect(await read(again, '1', 'x')).toBeNull();
    expect(await read(again, '1', 'y')).toBe('v');
    wall += 60_000 + 500;
    expect(await read(again, '1', 'y')).toBeNull();
  });

  it('group-commits concurrent updates into few flushes', async () => {
    const engine = await open(scratch.location());
    await engine.createSegment('1');
    const before = engine.commitStats.flushes;
    await Promise.all(Array.from({ length: 200 }, (_, i) => engine.update({ segmentId: '1', modifications: [{ key: Buffer.from(`k${i}`), value: Buffer.from('v') }] })));
    expect(engine.commitStats.flushes - before).toBeLessThan(10);
  });

  it("sizes LevelDB's memtable by writeBufferBytes: 6 MiB of writes stay in memory at the 64 MiB default, not at 1 MiB", async () => {
    const tables = (location: string) => fs.readdirSync(location).filter((f) => f.endsWith('.ldb'));
    const value = Buffer.alloc(64 * 1024, 'v');
    /**
     * Opens an engine with `writeBufferBytes`, writes 96 × 64 KiB and returns its LevelDB directory
     * (left open). Without a durable log, so that each update is a LevelDB write of its own (LevelDB
     * starts a new memtable before a write that finds the current one full).
     */
    async function writeSixMiB(writeBufferBytes: number | undefined): Promise<string> {
      const location = scratch.location();
      const engine = await SegmentEngine.open(location, { expirySweepIntervalMs: 0, writeBufferBytes, logBytes: 0 });
      scratch.defer(() => engine.close());
      await engine.createSegment('1');
      for (let i = 0; i < 96; i++) await engine.update({ segmentId: '1', modifications: [{ key: Buffer.from(`k${i}`), value }] });
      return location;
    }

    expect(tables(await writeSixMiB(undefined))).toEqual([]);
    // A full memtable is written to a level-0 table by LevelDB's background thread.
    const small = await writeSixMiB(1024 * 1024);
    const deadline = Date.now() + 10_000;
    while (tables(small).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(tables(small).length).toBeGreaterThan(0);
  });
});
