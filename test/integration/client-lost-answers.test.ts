/**
 * An update whose answer is lost after the store applied it (the connection breaks in between; real
 * processes, the store reached through a TCP proxy that holds its answers and then cuts the
 * connection): the client must not send it again, since another client may have written the key
 * meanwhile. It ends in UnavailableError with maybeApplied, and the other client's write stays.
 *
 * Found by the linearizability test: an unconditional put retried after a SIGKILL broke its stream
 * was applied twice, a reader saw it with two versions, and a conditional update made in between by
 * another client was silently overwritten.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyValueTable, KeyValueTableFactory, KeyValueTableManager, Serializers, UnavailableError } from '../../client';
import type { ModificationInput } from '../../segmentstore/storage/validation';
import { fetchRouting } from '../harness/oracle';
import { freePort, KvtProcess, startController, startSegmentStore, tempDir } from '../harness/process';
import { TcpProxy } from '../harness/tcp-proxy';
import { grpcAdapter } from '../suites/segment-store-adapter';

/** Keys this long make the update's request the one large chunk on the connection. */
const KEY = 'k'.repeat(4_000);
const CLIENT = { timeoutMs: 10_000, retry: { maxRetries: 3, initialBackoffMs: 100, maxBackoffMs: 100 } };

interface Case {
  name: string;
  family: string | null;
  /** The update whose answer is lost, and how to tell that the store applied it. */
  call(table: KeyValueTable<string, string>): Promise<unknown>;
  applied(value: string | undefined): boolean;
  /** The other client's write, made after the store applied the first one (`sequence`: what it saw). */
  other(segmentId: string, sequence: string): ModificationInput;
}

const CASES: Case[] = [
  {
    name: 'put',
    family: null,
    call: (t) => t.put(null, KEY, 'first'),
    applied: (v) => v === 'first',
    other: (segmentId, sequence) => ({ type: 'PUT', family: '', key: Buffer.from(KEY), value: Buffer.from('other'), condition: { kind: 'VERSION', segmentId, sequence } }),
  },
  {
    name: 'remove',
    family: null,
    call: (t) => t.remove(null, KEY),
    applied: (v) => v === undefined,
    other: () => ({ type: 'INSERT', family: '', key: Buffer.from(KEY), value: Buffer.from('other') }),
  },
  {
    name: 'putAll',
    family: 'f',
    call: (t) =>
      t.putAll('f', [
        [KEY, 'first'],
        ['k2', 'first'],
      ]),
    applied: (v) => v === 'first',
    other: (segmentId, sequence) => ({ type: 'PUT', family: 'f', key: Buffer.from(KEY), value: Buffer.from('other'), condition: { kind: 'VERSION', segmentId, sequence } }),
  },
];

describe('an update whose answer was lost after the store applied it', () => {
  const dir = tempDir('kvt-lost-answers-');
  let controller: KvtProcess;
  let store: KvtProcess;
  let proxy: TcpProxy;
  let direct: ReturnType<typeof grpcAdapter>;
  let segmentId: string;

  beforeAll(async () => {
    controller = await startController(path.join(dir.path, 'controller'));
    const storePort = await freePort();
    proxy = await TcpProxy.start(storePort);
    // Everyone else reaches the store through the proxy.
    store = await startSegmentStore(path.join(dir.path, 'store'), controller.address, ['--port', String(storePort), '--advertise-address', proxy.address]);
    await store.waitForLog('registered with controller');
    await using manager = new KeyValueTableManager({ controller: controller.address });
    await manager.createScope('lost');
    await manager.createKeyValueTable('lost', 'answers', { partitionCount: 1 });
    segmentId = (await fetchRouting(controller.address, 'lost', 'answers')).partitions[0].segmentId;
    direct = grpcAdapter(store.address);
  });
  afterAll(async () => {
    direct?.close();
    await store?.stop();
    await controller?.stop();
    await proxy?.[Symbol.asyncDispose]();
    dir.dispose();
  });

  it.each(CASES)("is not sent again: $name ends in UnavailableError with maybeApplied and the other client's write stays", async (c) => {
    await using factory = KeyValueTableFactory.withScope('lost', { controller: controller.address, ...CLIENT });
    const table = factory.forKeyValueTable('answers', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    await table.put(c.family, KEY, 'before'); // the stream is open, the key exists
    const read = async () => (await direct.get({ segmentId, keys: [{ family: c.family ?? '', key: Buffer.from(KEY) }] })).entries[0];

    const held = proxy.holdAnswersAfterRequest(KEY.length);
    const outcome = c.call(table).then(
      (v) => v,
      (err: unknown) => err,
    );
    const connection = await held;
    let entry = await read();
    for (let i = 0; i < 500 && !c.applied(entry.found ? Buffer.from(entry.value).toString() : undefined); i++) {
      await new Promise((r) => setTimeout(r, 10));
      entry = await read();
    }
    expect(c.applied(entry.found ? Buffer.from(entry.value).toString() : undefined), 'the store applied the update').toBe(true);
    await direct.update({ segmentId, modifications: [c.other(segmentId, entry.sequence)] });
    connection.cut();

    const error = await outcome;
    expect((await table.get(c.family, KEY))?.value, "the other client's acknowledged write").toBe('other');
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).maybeApplied).toBe(true);
  });
});
