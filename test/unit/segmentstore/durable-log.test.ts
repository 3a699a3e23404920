import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DurableLog, LOG_BLOCK_BYTES, LOG_FILE, LOG_HEADER_BYTES, LogPosition, recordBytes } from '../../../segmentstore/storage/log/durable-log';
import { failNextLogWrite } from '../../harness/leveldb-faults';
import { tempDir } from '../../harness/process';

/** The payload `text`, in pieces of at most 1,000 bytes (a record is written from its pieces as they are). */
function record(text: string): Buffer[] {
  const payload = Buffer.from(text);
  const pieces: Buffer[] = [];
  for (let at = 0; at < payload.length; at += 1000) pieces.push(payload.subarray(at, at + 1000));
  return pieces;
}

const noRoom = async (): Promise<void> => {
  throw new Error('makeRoom was not expected');
};

async function appendAll(log: DurableLog, texts: string[]): Promise<LogPosition[]> {
  const after: LogPosition[] = [];
  for (const t of texts) after.push(await log.append(record(t), noRoom));
  return after;
}

describe('DurableLog', () => {
  it('reads back exactly the records after a checkpoint, in order, and continues after the last', async () => {
    using dir = tempDir('kvt-log-');
    const { log, records } = await DurableLog.open(dir.path, 1024 * 1024, undefined);
    expect(records).toEqual([]);
    const start = log.next;
    expect(start).toEqual({ lsn: 1, offset: 0, chain: 0 });
    const after = await appendAll(log, ['one', 'two', 'x'.repeat(5000), 'four']);
    expect(after.map((p) => p.lsn)).toEqual([2, 3, 4, 5]);
    expect(after[2].offset - after[1].offset).toBe(2 * LOG_BLOCK_BYTES); // 5,000 bytes and the header: two blocks
    await log.close();

    const again = await DurableLog.open(dir.path, 1024 * 1024, after[0]);
    expect(again.records.map((r) => r.payload.toString())).toEqual(['two', 'x'.repeat(5000), 'four']);
    expect(again.records.map((r) => r.next)).toEqual(after.slice(1));
    expect(again.log.next).toEqual(after[3]);
    await again.log.append(record('five'), noRoom);
    await again.log.close();
    const third = await DurableLog.open(dir.path, 1024 * 1024, after[3]);
    expect(third.records.map((r) => r.payload.toString())).toEqual(['five']);
    await third.log.close();
  });

  it('ends the log at a torn record (a bad checksum), writes the next record in its place, and never reads on into what followed it', async () => {
    using dir = tempDir('kvt-log-');
    const { log } = await DurableLog.open(dir.path, 1024 * 1024, undefined);
    const from = log.next;
    const after = await appendAll(log, ['kept', 'torn', 'after']);
    await log.close();
    // Part of the second record never reached the disk. (A crash tears only the last record written;
    // one in the middle shows that a record does not count once the one before it changed: 'after' is
    // valid by itself, but chained to the torn record's checksum, not to the record written instead.)
    const file = path.join(dir.path, LOG_FILE);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.from('XX'), 0, 2, after[0].offset + LOG_HEADER_BYTES + 2);
    fs.closeSync(fd);

    const reopened = await DurableLog.open(dir.path, 1024 * 1024, from);
    expect(reopened.records.map((r) => r.payload.toString())).toEqual(['kept']);
    expect(reopened.log.next).toEqual(after[0]);
    await reopened.log.append(record('instead'), noRoom);
    await reopened.log.close();
    const last = await DurableLog.open(dir.path, 1024 * 1024, from);
    expect(last.records.map((r) => r.payload.toString())).toEqual(['kept', 'instead']);
    await last.log.close();
  });

  it('wraps to the start once the records there are released, and never reads a record of an earlier lap as the next one', async () => {
    using dir = tempDir('kvt-log-');
    const capacity = 8 * LOG_BLOCK_BYTES;
    const { log } = await DurableLog.open(dir.path, capacity, undefined);
    const size = () => fs.statSync(path.join(dir.path, LOG_FILE)).size;
    expect(size()).toBe(capacity); // a log smaller than the initial size starts at its capacity
    const three = 'y'.repeat(2 * LOG_BLOCK_BYTES); // three blocks each
    const first = await appendAll(log, [three, three]); // blocks 0-5
    log.release(first[0]); // the first record is applied for good: blocks 0-2 are free
    const wrapped = await log.append(record(`${three}!`), noRoom); // blocks 6-7 cannot hold it: it goes to block 0
    expect(wrapped.offset).toBe(3 * LOG_BLOCK_BYTES);
    await log.close();

    // Replay from the second record goes on at offset 0 (after it, block 6 was never written), and ends
    // there: where the wrapped record ends (block 3) lies the second record, lsn 2, not the next, lsn 4.
    const again = await DurableLog.open(dir.path, capacity, first[0]);
    expect(again.records.map((r) => r.payload.length)).toEqual([three.length, three.length + 1]);
    expect(again.log.next).toEqual(wrapped);
    await again.log.close();
  });

  it('grows its file by doubling once the records held take half of it, up to its capacity', async () => {
    using dir = tempDir('kvt-log-');
    const capacity = 6 * 1024 * 1024;
    const { log } = await DurableLog.open(dir.path, capacity, undefined);
    const size = () => fs.statSync(path.join(dir.path, LOG_FILE)).size;
    expect(size()).toBe(4 * 1024 * 1024);
    const big = 'z'.repeat(1024 * 1024);
    await appendAll(log, [big]);
    expect(size()).toBe(4 * 1024 * 1024);
    // Nothing released: past half the file it grows (in the background; the fourth record, which needs
    // the room, waits for it), to its capacity rather than to twice its size.
    await appendAll(log, [big, big, big, big]);
    expect(size()).toBe(capacity);
    expect(log.heldBytes).toBe(5 * recordBytes(big.length));
    await expect(log.append(record(big), async () => undefined)).rejects.toThrow(/durable log: no room for a record of 1052672 bytes in 6291456 with 5263360 held/);
    await log.close();
  });

  it('asks for room when its background growth failed, instead of failing the record that needs it', async () => {
    using dir = tempDir('kvt-log-');
    const { log } = await DurableLog.open(dir.path, 16 * 1024 * 1024, undefined);
    const size = () => fs.statSync(path.join(dir.path, LOG_FILE)).size;
    const big = 'g'.repeat(1536 * 1024);
    const after = await appendAll(log, [big]);
    {
      // The second record takes the records held past half the file: the growth it starts fails.
      using _fault = failNextLogWrite('ENOSPC: no space left on device', { growthOnly: true });
      after.push(...(await appendAll(log, [big])));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(size()).toBe(4 * 1024 * 1024);
    // The third does not fit before the end, and the file still cannot grow: room is asked for, and
    // the space released at the start is reused.
    using _again = failNextLogWrite('ENOSPC: no space left on device', { growthOnly: true });
    let asked = 0;
    const placed = await log.append(record(big), async () => {
      asked++;
      log.release(after[0]);
    });
    expect(asked).toBe(1);
    expect(placed.offset).toBe(recordBytes(big.length));
    await log.close();
  });

  it('names the failed growth when a record finds no room because of it', async () => {
    using dir = tempDir('kvt-log-');
    const { log } = await DurableLog.open(dir.path, 16 * 1024 * 1024, undefined);
    // It fails to grow before room is asked for, and again after.
    using _first = failNextLogWrite('ENOSPC: no space left on device', { growthOnly: true });
    using _second = failNextLogWrite('ENOSPC: no space left on device', { growthOnly: true });
    await expect(log.append(record('h'.repeat(5 * 1024 * 1024)), async () => undefined)).rejects.toThrow(
      'durable log: no room for a record of 5246976 bytes in 16777216 with 0 held (growing the file failed: ENOSPC: no space left on device)',
    );
    await log.close();
  });

  it('asks for room when the records held fill it, and fails a record that still finds none', async () => {
    using dir = tempDir('kvt-log-');
    const capacity = 8 * LOG_BLOCK_BYTES;
    const { log } = await DurableLog.open(dir.path, capacity, undefined);
    const three = 'w'.repeat(2 * LOG_BLOCK_BYTES);
    const after = await appendAll(log, [three, three]);
    let asked = 0;
    const placed = await log.append(record(three), async () => {
      asked++;
      log.release(after[1]);
    });
    expect(asked).toBe(1);
    expect(placed.offset).toBe(3 * LOG_BLOCK_BYTES); // at offset 0, once released
    await log.append(record(three), noRoom); // blocks 3-5
    await expect(log.append(record(three), async () => undefined)).rejects.toThrow('durable log: no room for a record of 12288 bytes in 32768 with 24576 held');
    // A record of at most half the capacity fits (once the others are released); a larger one never does.
    expect(log.fits(4 * LOG_BLOCK_BYTES - LOG_HEADER_BYTES)).toBe(true);
    expect(log.fits(4 * LOG_BLOCK_BYTES - LOG_HEADER_BYTES + 1)).toBe(false);
    await log.close();
  });

  it('refuses to open without its file when the checkpoint says it holds writes', async () => {
    using dir = tempDir('kvt-log-');
    await expect(DurableLog.open(dir.path, 1024 * 1024, { lsn: 7, offset: 4096, chain: 0 })).rejects.toThrow(
      `${path.join(dir.path, LOG_FILE)} is missing, and the database's checkpoint says it holds acknowledged writes not yet in LevelDB; restore the file (or the whole directory) from where it was`,
    );
  });
});
