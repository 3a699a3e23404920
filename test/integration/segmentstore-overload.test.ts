/**
 * The segment store's store-wide bound on requests in flight (`--max-in-flight-mb`), with a real
 * controller and a real store process whose disk stalls (test/harness/leveldb-fault-preload.cjs):
 * updates then wait for their group commit holding their requests, and without the bound every unary
 * call (and every stream, up to its own 64 MiB) would add to what the store holds. Past the bound a
 * request is refused UNAVAILABLE without running, over unary calls and over the client's streams alike;
 * what was taken runs once the disk moves again, and the bound is given back. Answers a client does not
 * read count too, until they are sent or the client goes away.
 */
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { status as grpcStatus } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTableFactory, KeyValueTableManager, OverloadedError, Serializers, UnavailableError } from '../../client';
import { ERROR_CODE_TRAILER } from '../../proto/error-codes';
import { fetchRouting, rawCall, rawClient } from '../harness/oracle';
import { DiskStall } from '../harness/disk-stall';
import { KvtProcess, startController, startSegmentStore, tempDir } from '../harness/process';
import { unreadExecuteStream, unreadUnaryCalls } from '../harness/unread-stream';

/** Each request carries a 300 KB value: the 1 MiB bound takes three of them (300 KB alone always runs). */
const VALUE_BYTES = 300_000;

describe('a segment store past its in-flight bound (--max-in-flight-mb 1, its disk stalled)', () => {
  let dir: ReturnType<typeof tempDir>;
  let controller: KvtProcess;
  let store: KvtProcess;
  let disk: DiskStall;
  let segmentId: string;

  beforeAll(async () => {
    dir = tempDir('kvt-overload-');
    disk = new DiskStall(path.join(dir.path, 'hold'));
    controller = await startController(path.join(dir.path, 'controller'));
    store = await startSegmentStore(path.join(dir.path, 'store'), controller.address, ['--max-in-flight-mb', '1'], disk.env());
    await store.waitForLog('registered with controller');
    await using manager = new KeyValueTableManager({ controller: controller.address });
    await manager.createScope('o');
    await manager.createKeyValueTable('o', 't', { partitionCount: 1 });
    segmentId = (await fetchRouting(controller.address, 'o', 't')).partitions[0].segmentId;
  });
  afterAll(async () => {
    disk?.release();
    await store?.stop();
    await controller?.stop();
    dir?.[Symbol.dispose]();
  });

  /** A unary Update putting a VALUE_BYTES value under `key` of family `u`. */
  function unaryPut(client: ReturnType<typeof rawClient>, key: string): Promise<unknown> {
    return rawCall(
      client,
      'Update',
      {
        segmentId,
        modifications: [{ type: 'PUT', family: 'u', key: Buffer.from(key), value: Buffer.alloc(VALUE_BYTES, key) }],
      },
      60_000,
    );
  }

  /** Whether each call was taken ('ok', once the disk moves) or refused at once ('refused'). */
  function outcomes(calls: Promise<unknown>[]): Promise<string>[] {
    return calls.map((p) =>
      p.then(
        () => 'ok',
        (err: grpc.ServiceError) => (err.details?.startsWith('segment store is overloaded') ? 'refused' : String(err)),
      ),
    );
  }

  /** The outcome of one 300 KB unary put under `key`: 'ok' or 'refused'. */
  async function probe(client: ReturnType<typeof rawClient>, key: string): Promise<string> {
    return (await outcomes([unaryPut(client, key)]))[0];
  }

  /** The outcome of probe puts until one is `wanted` (10 s at most): answers count from when they are written, shortly after their calls. */
  async function probeUntil(client: ReturnType<typeof rawClient>, wanted: string, prefix: string): Promise<string> {
    let seen = '';
    for (let i = 0; i < 100 && seen !== wanted; i++) {
      seen = await probe(client, `${prefix}${i}`);
      if (seen !== wanted) await new Promise((r) => setTimeout(r, 100));
    }
    return seen;
  }

  it('refuses unary updates past the bound at once, runs the ones it took once the disk moves, and takes new ones after', async () => {
    const client = rawClient('SegmentStore', store.address);
    const put = (key: string) => unaryPut(client, key);
    try {
      const { running: first } = await disk.stallWith(() => put('k0'));
      const rest = Array.from({ length: 9 }, (_, i) => put(`k${i + 1}`));
      const settled = rest.map((p) =>
        p.then(
          () => 'ok',
          (err: grpc.ServiceError) => err,
        ),
      );
      // Refusals come while the disk is still stalled: nothing waits for it.
      const refused = await Promise.race([Promise.all(settled.slice(2)), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no refusal while the disk stalls')), 10_000))]);
      for (const err of refused) {
        expect(err).not.toBe('ok');
        const status = err as grpc.ServiceError;
        expect([status.code, status.metadata.get(ERROR_CODE_TRAILER)]).toEqual([grpcStatus.UNAVAILABLE, ['OVERLOADED']]);
        expect(status.details).toMatch(
          /^segment store is overloaded: requests of 0\.86 MiB are in flight and this Update call of 0\.29 MiB would pass the limit of 1 MiB \(--max-in-flight-mb\); it was not run, try again$/,
        );
      }
      disk.release();
      await first;
      expect(await Promise.all(settled.slice(0, 2))).toEqual(['ok', 'ok']);
      // What was refused was never written; what was taken was.
      const got = await rawCall<{ entries: Array<{ found: boolean }> }>(client, 'Get', {
        segmentId,
        keys: Array.from({ length: 10 }, (_, i) => ({ family: 'u', key: Buffer.from(`k${i}`) })),
      });
      expect(got.entries.map((e) => e.found)).toEqual([true, true, true, false, false, false, false, false, false, false]);
      // The bound was given back: three at once are taken again.
      await Promise.all(['k7', 'k8', 'k9'].map(put));
    } finally {
      client.close();
    }
  });

  it('runs a request larger than the bound when the store holds nothing else (refusing it would refuse it forever)', async () => {
    const client = rawClient('SegmentStore', store.address);
    try {
      const values = ['big0', 'big1'].map((key) => ({ type: 'PUT', family: 'u', key: Buffer.from(key), value: Buffer.alloc(900_000, key) }));
      await rawCall(client, 'Update', { segmentId, modifications: values }, 60_000);
      const got = await rawCall<{ entries: Array<{ found: boolean; value: Buffer }> }>(client, 'Get', {
        segmentId,
        keys: values.map((m) => ({ family: 'u', key: m.key })),
      });
      expect(got.entries.map((e) => [e.found, e.value.length])).toEqual([
        [true, 900_000],
        [true, 900_000],
      ]);
    } finally {
      client.close();
    }
  });

  it("refuses a client's stream messages past the bound the same way: OverloadedError, nothing applied", async () => {
    await using factory = KeyValueTableFactory.withScope('o', { controller: controller.address, retry: { maxRetries: 0, initialBackoffMs: 10, maxBackoffMs: 10 } });
    const table = factory.forKeyValueTable('t', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    const value = (key: string) => key.repeat(VALUE_BYTES / key.length);
    const { running: first } = await disk.stallWith(() => table.put('s', 'a0', value('a0')));
    // Queued behind the stalled call, these travel as one Execute message of ~3 MB: refused whole.
    const rest = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        table.put('s', `b${i}`, value(`b${i}`)).then(
          () => undefined,
          (err: unknown) => err,
        ),
      ),
    );
    for (const err of rest) {
      expect(err).toBeInstanceOf(OverloadedError);
      expect(err).toBeInstanceOf(UnavailableError);
      expect([(err as OverloadedError).code, (err as OverloadedError).maybeApplied]).toEqual(['OVERLOADED', false]);
      expect((err as Error).message).toContain('segment store is overloaded');
      expect((err as Error).message).toContain('Execute message');
    }
    disk.release();
    await first;
    expect((await table.getAll('s', ['a0', 'b0', 'b9'])).map((e) => e?.value.length ?? null)).toEqual([VALUE_BYTES, null, null]);
    await table.putAll('s', [
      ['b0', 'x'],
      ['b9', 'y'],
    ]);
    expect((await table.getAll('s', ['b0', 'b9'])).map((e) => e?.value)).toEqual(['x', 'y']);
  });

  it("stops counting a broken stream's messages when its client goes away, so the bound is not lost", async () => {
    const factory = KeyValueTableFactory.withScope('o', { controller: controller.address, retry: { maxRetries: 0, initialBackoffMs: 10, maxBackoffMs: 10 } });
    const table = factory.forKeyValueTable('t', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    const { running: gone } = await disk.stallWith(() => table.put('g', 'gone', 'g'.repeat(VALUE_BYTES)));
    await factory.close();
    await expect(gone).rejects.toThrow();
    // The disk still stalls and the gone put still waits in it, but its stream holds nothing any more:
    // a whole 1 MiB is free again, three Updates are taken and the fourth refused (two and the third, had it leaked).
    const client = rawClient('SegmentStore', store.address);
    try {
      const calls = outcomes(['g1', 'g2', 'g3', 'g4'].map((key) => unaryPut(client, key)));
      expect(await calls[3]).toBe('refused');
      disk.release();
      expect(await Promise.all(calls)).toEqual(['ok', 'ok', 'ok', 'refused']);
    } finally {
      client.close();
    }
  });

  /** Calls whose answers nobody reads until `readAll`; `close` drops their connection. */
  interface Unread<R> {
    readAll(): Promise<R>;
    close(): void;
  }

  /**
   * Answers of `open()`'s calls (three 300 KB values) count until sent: while they wait a 300 KB update
   * is refused (before: taken, the answers held without bound), once read (checked by `checkRead`) or
   * once their client is gone it is taken again. `prefix` names the probe keys.
   */
  async function expectAnswersHeldUntilSent<R>(open: () => Unread<R>, checkRead: (read: R) => void, prefix: string, what: string): Promise<void> {
    const client = rawClient('SegmentStore', store.address);
    try {
      await unaryPut(client, 'big');
      const unread = open();
      expect(await probeUntil(client, 'refused', prefix), `a 300 KB update while ${what} 0.9 MB of answers wait to be sent`).toBe('refused');
      checkRead(await unread.readAll());
      expect(await probe(client, `after-read-${prefix}`), 'the answers, sent, no longer count').toBe('ok');
      // A reader that goes away gives its answers' bytes back as well.
      const gone = open();
      expect(await probeUntil(client, 'refused', prefix)).toBe('refused');
      gone.close();
      expect(await probeUntil(client, 'ok', prefix), 'the answers of a reader that went away no longer count').toBe('ok');
    } finally {
      client.close();
    }
  }

  const getBig = () => ({ segmentId, keys: [{ family: 'u', key: Buffer.from('big') }] });

  it('counts a unary answer until it has been sent: answers a client does not read hold the bound until read, or until the client goes away', async () => {
    // Three answers of 300 KB wait behind the reader's 64 KiB window; nothing else is in flight.
    await expectAnswersHeldUntilSent(
      () => unreadUnaryCalls<{ entries: Array<{ found: boolean; value: Buffer }> }>(store.address, 'Get', [getBig(), getBig(), getBig()]),
      (read) =>
        expect(read.map((r) => [r.status, r.answer?.entries[0].value.length])).toEqual([
          [0, VALUE_BYTES],
          [0, VALUE_BYTES],
          [0, VALUE_BYTES],
        ]),
      'p',
      "unary calls'",
    );
  });

  it("counts a stream's answers until they are sent, as the unary calls' answers", async () => {
    // Each stream holds its answers within its own bound (64 MiB), so without the store-wide count a
    // client could make the store hold that much per stream it opens.
    await expectAnswersHeldUntilSent(
      () =>
        unreadExecuteStream(
          store.address,
          [0, 1, 2].map((id) => ({ id, request: { requests: [{ get: getBig() }] } })),
        ),
      ({ answers, status }) => expect([status, answers.length]).toEqual([0, 3]),
      's',
      "a stream's",
    );
  });

  it("retries a busy store without asking the controller for new routing: with the controller gone, the store's refusal is what the caller gets", async () => {
    await using factory = KeyValueTableFactory.withScope('o', {
      controller: controller.address,
      timeoutMs: 20_000,
      retry: { maxRetries: 3, initialBackoffMs: 20, maxBackoffMs: 40 },
    });
    const table = factory.forKeyValueTable('t', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    await table.put('r', 'warm', 'x'); // routing cached
    const { running: first } = await disk.stallWith(() => table.put('r', 'a', 'a'.repeat(VALUE_BYTES)));
    await controller.kill('SIGKILL');
    // Each attempt is refused OVERLOADED; before, every retry went to the (dead) controller for routing
    // first and the caller got the controller's unavailability, at its deadline.
    const started = Date.now();
    const err = await table
      .putAll(
        'r',
        Array.from({ length: 10 }, (_, i): [string, string] => [`b${i}`, 'b'.repeat(VALUE_BYTES)]),
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(OverloadedError);
    expect((err as Error).message).toContain('segment store is overloaded');
    expect([(err as OverloadedError).code, (err as OverloadedError).maybeApplied]).toEqual(['OVERLOADED', false]);
    expect(Date.now() - started, 'three retries with 40 ms backoffs, not the 20 s deadline').toBeLessThan(10_000);
    disk.release();
    await first;
  });
});
