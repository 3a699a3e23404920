/**
 * A bounded, seeded fuzzer against every RPC of kvt.v1.SegmentStore and kvt.v1.Controller on real
 * processes (ExecuteStream: fuzzed messages on streams): random bytes, mutated encodings of valid
 * messages (encoded with the real .proto files),
 * string fields carrying invalid UTF-8, oversized messages and huge pages; plus, through the public
 * client, malformed resume tokens and versions. The processes must stay up and answer every case
 * with OK or the right error (INVALID_ARGUMENT, NOT_FOUND, …; never INTERNAL or UNKNOWN), with the
 * `kvt-error-code` trailer, and no data may change.
 *
 * What keeps the check sound: mutated messages can still decode as valid writes. So the fuzz is aimed
 * at its own table ("fuzz/target") and at segment ids and scopes that do not exist, and every case is
 * decoded first (with the same codec as the servers): a case that would address the protected table's
 * segments or scope, register a store, or create segments in the controller's id range is skipped and
 * counted. The protected table ("safe/protected", filled before) is then checksummed with the Scan RPC
 * before and after, and its metadata (configuration, routing, scopes) compared.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, KeyValueTableFactory, KeyValueTableManager, Serializers, Version } from '../../client';
import { kvtPackage } from '../../proto/load';
import { MAX_MESSAGE_BYTES } from '../../proto/limits';
import type { ExecuteStreamResponse } from '../../proto/messages';
import { decodeExecuteStreamRequest } from '../../segmentstore/service/wire-codec';
import { INVALID_UTF8, mutate, randomBytes, RawCaller, replaceMarker, requestCodec, stringsNamed } from '../harness/fuzz';
import { parseIntegerFlag } from '../../bench/core/flags';
import { fetchRouting, mulberry32, scanChecksum } from '../harness/oracle';
import { TestCluster } from '../harness/process';

/**
 * Cases per service and the seed offset; `KVT_FUZZ_CASES` and `KVT_FUZZ_SEED` raise or vary them for a
 * longer soak (`KVT_FUZZ_CASES=50000 KVT_FUZZ_SEED=7 npx vitest run test/integration/fuzz-rpc.test.ts`).
 */
const CASES_PER_SERVICE = envCount('KVT_FUZZ_CASES', 2_000);
const SEED = envCount('KVT_FUZZ_SEED', 0);
/** Time for the services' cases: 2 minutes per 2,000. */
const CASES_TIMEOUT_MS = 120_000 * Math.max(1, CASES_PER_SERVICE / 2_000);
const PARALLEL = 32;
const MARKER = 'XMARKERX';
const ACCEPTED = new Set([grpc.status.OK, grpc.status.INVALID_ARGUMENT, grpc.status.NOT_FOUND, grpc.status.FAILED_PRECONDITION, grpc.status.RESOURCE_EXHAUSTED, grpc.status.OUT_OF_RANGE]);

function envCount(name: string, fallback: number): number {
  const given = process.env[name];
  return given === undefined || given === '' ? fallback : parseIntegerFlag(name, given, 0);
}

/** One fuzzed method: valid seed messages and the rule that skips cases that would touch protected state. */
interface Target {
  method: string;
  seeds: object[];
  skip?: (decoded: Record<string, unknown>) => boolean;
  /** Called with the decoded request of a case the server answered OK. */
  accepted?: (decoded: Record<string, unknown>) => void;
}

interface Tally {
  sent: number;
  skipped: number;
  codes: Record<string, number>;
  violations: string[];
}

const sameId = (a: string, b: string) => a === b || (/^\d{1,20}$/.test(a) && /^\d{1,20}$/.test(b) && BigInt(a) === BigInt(b));

describe('RPC fuzzing', () => {
  let cluster: TestCluster;
  let protectedSegments: { address: string; ids: string[] }[];
  let fuzzSegment: string;
  /** The store hosting `fuzzSegment`. */
  let fuzzStore: string;
  let storeIds: string[];
  let before: { data: { digest: string; entries: number }[]; meta: string };

  beforeAll(async () => {
    cluster = await TestCluster.start({ stores: 2 });
    await using manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('safe');
    await manager.createKeyValueTable('safe', 'protected', { partitionCount: 4 });
    await manager.createScope('fuzz');
    await manager.createKeyValueTable('fuzz', 'target', { partitionCount: 2 });
    await using factory = KeyValueTableFactory.withScope('safe', { controller: cluster.controllerAddress });
    const table = factory.forKeyValueTable('protected', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    for (let f = 0; f < 20; f++)
      await table.putAll(
        `fam-${f}`,
        Array.from({ length: 10 }, (_, k) => [`key-${k}`, `value-${f}-${k}`] as const),
      );
    for (let k = 0; k < 50; k++) await table.put(null, `loose-${k}`, `v${k}`);

    const routing = await fetchRouting(cluster.controllerAddress, 'safe', 'protected');
    storeIds = [...new Set(routing.partitions.map((p) => p.storeId))];
    protectedSegments = cluster.stores.map((s) => ({
      address: s.address,
      ids: routing.partitions.filter((p) => p.storeAddress === s.address).map((p) => p.segmentId),
    }));
    const fuzzPartition = (await fetchRouting(cluster.controllerAddress, 'fuzz', 'target')).partitions[0];
    fuzzSegment = fuzzPartition.segmentId;
    fuzzStore = fuzzPartition.storeAddress;
    before = await snapshot();
    expect(before.data.reduce((n, d) => n + d.entries, 0)).toBe(250);
  });
  afterAll(async () => {
    await cluster?.[Symbol.asyncDispose]();
  });

  async function snapshot(): Promise<{ data: { digest: string; entries: number }[]; meta: string }> {
    const data = await Promise.all(protectedSegments.map((p) => scanChecksum(p.address, p.ids)));
    await using manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    const config = await manager.getKeyValueTableConfiguration('safe', 'protected');
    const routing = await fetchRouting(cluster.controllerAddress, 'safe', 'protected');
    const partitions = routing.partitions.map((p) => [p.index, p.segmentId, p.storeId, p.storeAddress]);
    return { data, meta: JSON.stringify({ config, partitions }) };
  }

  const isProtected = (d: Record<string, unknown>) => stringsNamed(d, 'segmentId').some((id) => protectedSegments.some((p) => p.ids.some((q) => sameId(id, q))));

  function segmentStoreTargets(): Target[] {
    const seg = () => fuzzSegment;
    const mods = [
      { type: 'PUT', family: MARKER, key: Buffer.from('k1'), value: Buffer.from('v1'), condition: { kind: 'VERSION', segmentId: seg(), sequence: '3' }, ttlMs: '1000' },
      { type: 'INSERT', family: MARKER, key: Buffer.from('k2'), value: Buffer.from('v2') },
      { type: 'REMOVE', family: MARKER, key: Buffer.from('k3'), condition: { kind: 'NOT_EXISTS' } },
      { type: 'REMOVE_RANGE', family: MARKER, rangeFrom: Buffer.from('a'), rangeTo: Buffer.from('z'), rangePrefix: Buffer.from('k') },
    ];
    const get = {
      segmentId: seg(),
      keys: [
        { family: MARKER, key: Buffer.from('k1') },
        { family: '', key: Buffer.from('loose') },
      ],
    };
    return [
      {
        method: 'CreateSegment',
        seeds: [{ segmentId: '4242424242', table: MARKER }],
        skip: (d) => isProtected(d) || stringsNamed(d, 'segmentId').some((id) => /^\d+$/.test(id) && BigInt(id) < 1_000_000n),
      },
      // Deleting the fuzz segment itself is a valid call, but the checks after the fuzz need it.
      { method: 'DeleteSegment', seeds: [{ segmentId: '4242424243' }], skip: (d) => isProtected(d) || stringsNamed(d, 'segmentId').some((id) => sameId(id, fuzzSegment)) },
      { method: 'GetSegmentInfo', seeds: [{ segmentId: seg() }, { segmentId: '99999' }] },
      { method: 'ListSegments', seeds: [{}] },
      {
        method: 'Update',
        seeds: [
          { segmentId: seg(), modifications: mods },
          { segmentId: seg(), modifications: [mods[1]] },
        ],
        skip: isProtected,
      },
      { method: 'Get', seeds: [get] },
      {
        method: 'Iterate',
        seeds: [
          {
            segmentId: seg(),
            family: MARKER,
            includeValues: true,
            maxItems: 5,
            prefix: Buffer.from('k'),
            from: Buffer.from('a'),
            to: Buffer.from('z'),
            toInclusive: true,
            reverse: true,
            hasAfter: true,
            after: Buffer.from('k1'),
          },
        ],
      },
      { method: 'Scan', seeds: [{ segmentId: seg(), includeValues: true, maxItems: 7, after: Buffer.from('0a0b', 'hex') }] },
      { method: 'Execute', seeds: [{ requests: [{ update: { segmentId: seg(), modifications: mods.slice(0, 2) } }, { get }] }], skip: isProtected },
    ];
  }

  function controllerTargets(): Target[] {
    const existing = new Set(['safe', 'fuzz']);
    const scopeExists = (d: Record<string, unknown>) => existing.has(String(d.scope));
    const read = { scope: 'safe', table: 'protected' };
    const missing = { scope: MARKER, table: MARKER };
    return [
      { method: 'CreateScope', seeds: [{ scope: MARKER }], accepted: (d) => existing.add(String(d.scope)) },
      { method: 'DeleteScope', seeds: [{ scope: MARKER }], skip: (d) => d.scope === 'safe' || d.scope === 'fuzz' },
      { method: 'ListScopes', seeds: [{}] },
      { method: 'CreateTable', seeds: [{ ...missing, config: { partitionCount: 3 } }], skip: scopeExists },
      { method: 'GetTable', seeds: [read, missing] },
      { method: 'UpdateTable', seeds: [{ ...missing, config: { partitionCount: 3 } }], skip: scopeExists },
      { method: 'DeleteTable', seeds: [missing], skip: scopeExists },
      {
        method: 'ListTables',
        seeds: [
          { scope: 'safe', continuationToken: MARKER, limit: 2 },
          { scope: MARKER, continuationToken: '', limit: 0 },
        ],
      },
      { method: 'GetRouting', seeds: [read, missing] },
      { method: 'DescribeTable', seeds: [read, missing] },
      // A registration that decodes with a store id would add a store (or move a real one): skipped.
      { method: 'RegisterSegmentStore', seeds: [{ storeId: MARKER, address: `${MARKER}:1` }], skip: (d) => String(d.storeId ?? '') !== '' },
      { method: 'Heartbeat', seeds: [{ storeId: MARKER, address: `${MARKER}:1` }], skip: (d) => storeIds.includes(String(d.storeId)) },
      { method: 'ListSegmentStores', seeds: [{}] },
      // The cluster's stores are live (refused anyway), but a removal is never aimed at them.
      { method: 'RemoveSegmentStore', seeds: [{ storeId: MARKER, force: true }, { storeId: MARKER }], skip: (d) => storeIds.includes(String(d.storeId)) },
    ];
  }

  async function fuzzService(service: 'SegmentStore' | 'Controller', address: string, targets: Target[], seed: number): Promise<Tally> {
    const random = mulberry32(seed + SEED * 1000);
    const caller = new RawCaller(address);
    const tally: Tally = { sent: 0, skipped: 0, codes: {}, violations: [] };
    const codecs = targets.map((t) => requestCodec(service, t.method));
    try {
      for (let start = 0; start < CASES_PER_SERVICE; start += PARALLEL) {
        const batch: Promise<void>[] = [];
        for (let i = start; i < Math.min(start + PARALLEL, CASES_PER_SERVICE); i++) {
          const target = targets[i % targets.length];
          const codec = codecs[i % targets.length];
          const bytes = fuzzCase(codec.encode(target.seeds[Math.floor(random() * target.seeds.length)]), random);
          let decoded: Record<string, unknown> | undefined;
          try {
            decoded = codec.decode(bytes);
          } catch {
            decoded = undefined; // not a message: exactly what the server must reject cleanly
          }
          if (decoded && target.skip?.(decoded)) {
            tally.skipped++;
            continue;
          }
          tally.sent++;
          batch.push(
            caller.call(codec.path, bytes).then((outcome) => {
              tally.codes[grpc.status[outcome.code]] = (tally.codes[grpc.status[outcome.code]] ?? 0) + 1;
              if (outcome.code === grpc.status.OK && decoded) target.accepted?.(decoded);
              const untyped = outcome.code !== grpc.status.OK && outcome.code !== grpc.status.RESOURCE_EXHAUSTED && !outcome.errorCode;
              if (!ACCEPTED.has(outcome.code) || untyped) {
                tally.violations.push(`${target.method} case ${i}: ${grpc.status[outcome.code]} ${outcome.details} [${bytes.subarray(0, 48).toString('hex')}]`);
              }
            }),
          );
        }
        await Promise.all(batch);
      }
    } finally {
      caller.close();
    }
    return tally;
  }

  it(
    `answers ${CASES_PER_SERVICE} fuzzed segment-store requests with OK or a typed error and changes no protected data`,
    async () => {
      const tallies = await Promise.all(cluster.stores.map((s, i) => fuzzService('SegmentStore', s.address, segmentStoreTargets(), 100 + i)));
      const tally = merge(tallies);
      expect(tally.violations.slice(0, 20)).toEqual([]);
      expect(tally.sent).toBeGreaterThan(CASES_PER_SERVICE); // two stores; skips are few
      expect(cluster.stores.every((s) => s.running)).toBe(true);
      console.log(`fuzz-rpc SegmentStore: ${tally.sent} cases sent, ${tally.skipped} skipped (would address protected data or delete the fuzz segment), codes ${JSON.stringify(tally.codes)}`);
    },
    CASES_TIMEOUT_MS,
  );

  it(
    `answers ${CASES_PER_SERVICE} fuzzed controller requests with OK or a typed error and keeps all metadata`,
    async () => {
      const tally = await fuzzService('Controller', cluster.controllerAddress, controllerTargets(), 200);
      expect(tally.violations.slice(0, 20)).toEqual([]);
      expect(cluster.controller.running).toBe(true);
      console.log(`fuzz-rpc Controller: ${tally.sent} cases sent, ${tally.skipped} skipped (would touch protected state), codes ${JSON.stringify(tally.codes)}`);
    },
    CASES_TIMEOUT_MS,
  );

  it('answers fuzzed ExecuteStream messages with a response or a typed error, ending a stream only on a malformed one after answering those before it', async () => {
    const random = mulberry32(400 + SEED * 1000);
    const stream = requestCodec('SegmentStore', 'ExecuteStream');
    const inner = segmentStoreTargets().find((t) => t.method === 'Execute')!;
    const responses = kvtPackage().SegmentStore.service.ExecuteStream;
    const tally: Tally = { sent: 0, skipped: 0, codes: {}, violations: [] };
    let answers = 0;
    let pageErrors = 0;
    await Promise.all(
      cluster.stores.map(async (store, s) => {
        const caller = new RawCaller(store.address);
        try {
          for (let batch = 0; batch < 100; batch++) {
            // The cases that decode go first; half of the streams then get one that does not. "Decodes" as
            // the store decodes: stricter than protobufjs, which lets a field overrun its parent message;
            // a message whose request or iterate alone does not decode is answered under its id.
            const good: Buffer[] = [];
            const bad: Buffer[] = [];
            for (let i = 0; i < 20; i++) {
              const seed =
                i % 3 === 2
                  ? { id: 1 + i, iterate: { segmentId: fuzzSegment, family: MARKER, includeValues: true, maxItems: 5, prefix: Buffer.from('k'), reverse: true } }
                  : { id: 1 + i, request: inner.seeds[0] };
              const bytes = fuzzCase(stream.encode(seed), random);
              let decoded: Record<string, unknown> | undefined;
              try {
                decoded = { ...decodeExecuteStreamRequest(bytes) };
              } catch {
                decoded = undefined;
              }
              if (decoded && isProtected(decoded)) tally.skipped++;
              else (decoded ? good : bad).push(bytes);
            }
            const malformed = batch % 2 === 1 && bad.length > 0;
            const messages = malformed ? [...good, bad[0]] : good;
            tally.sent += messages.length;
            const outcome = await caller.stream(stream.path, messages);
            tally.codes[grpc.status[outcome.code]] = (tally.codes[grpc.status[outcome.code]] ?? 0) + 1;
            const where = `store ${s} batch ${batch}`;
            // Every message before the malformed one answered; then OK, or INVALID_ARGUMENT (with the
            // trailer) at the malformed one.
            if (malformed ? outcome.code !== grpc.status.INVALID_ARGUMENT || outcome.errorCode !== 'INVALID_ARGUMENT' : outcome.code !== grpc.status.OK) {
              tally.violations.push(`${where}: ${grpc.status[outcome.code]} ${outcome.details}`);
            }
            if (outcome.answers.length !== good.length) tally.violations.push(`${where}: ${outcome.answers.length} answers to ${good.length} messages`);
            for (const a of outcome.answers) {
              answers++;
              const msg = responses.responseDeserialize(a) as ExecuteStreamResponse;
              const codes = [msg.error?.code, ...(msg.response?.responses ?? []).map((r) => r.error?.code)];
              if (msg.error?.code === 'INVALID_ARGUMENT' || msg.error?.code === 'SEGMENT_NOT_FOUND') pageErrors++;
              if (codes.includes('INTERNAL')) tally.violations.push(`${where}: INTERNAL ${JSON.stringify(msg).slice(0, 200)}`);
            }
          }
        } finally {
          caller.close();
        }
      }),
    );
    expect(tally.violations.slice(0, 20)).toEqual([]);
    expect(tally.sent).toBeGreaterThan(500);
    expect(answers).toBeGreaterThan(300);
    expect(tally.codes.INVALID_ARGUMENT).toBeGreaterThan(0);
    expect(cluster.stores.every((p) => p.running)).toBe(true);
    expect(pageErrors).toBeGreaterThan(0); // mutated iterator requests refused as messages, the stream kept
    console.log(
      `fuzz-rpc ExecuteStream: ${tally.sent} messages sent on ${Object.values(tally.codes).reduce((a, b) => a + b, 0)} streams, ${answers} answered, ${tally.skipped} skipped, stream ends ${JSON.stringify(tally.codes)}`,
    );
  }, 120_000);

  it('rejects oversized messages, invalid UTF-8 and huge pages with the right codes', async () => {
    const store = new RawCaller(fuzzStore);
    const controller = new RawCaller(cluster.controllerAddress);
    try {
      const update = requestCodec('SegmentStore', 'Update');
      const big = (n: number) => update.encode({ segmentId: fuzzSegment, modifications: [{ type: 'PUT', family: 'f', key: Buffer.from('k'), value: Buffer.alloc(n) }] });
      expect((await store.call(update.path, big(MAX_MESSAGE_BYTES + 1024))).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const createScope = requestCodec('Controller', 'CreateScope');
      expect((await controller.call(createScope.path, createScope.encode({ scope: 'x'.repeat(MAX_MESSAGE_BYTES + 1024) }))).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const garbage = await store.call(update.path, Buffer.from([0xff, 0xff, 0xff]));
      expect([garbage.code, garbage.errorCode]).toEqual([grpc.status.INVALID_ARGUMENT, 'INVALID_ARGUMENT']);
      expect(garbage.details).toMatch(/^request is not a valid kvt\.v1\.SegmentStore\/Update message: /);
      const tooLong = await store.call(update.path, big(2 * 1024 * 1024));
      expect([tooLong.code, tooLong.errorCode]).toEqual([grpc.status.INVALID_ARGUMENT, 'INVALID_ARGUMENT']);
      expect(tooLong.details).toMatch(/is 2097152 bytes; the maximum is 1040384/);

      const pages: [string, object][] = [
        ['Iterate', { segmentId: fuzzSegment, family: 'f', maxItems: 4294967295 }],
        ['Iterate', { segmentId: fuzzSegment, family: 'f', maxItems: 10_001 }],
        ['Scan', { segmentId: fuzzSegment, maxItems: 4294967295 }],
        ['Get', { segmentId: fuzzSegment, keys: Array.from({ length: 10_001 }, (_, i) => ({ family: '', key: Buffer.from(`k${i}`) })) }],
      ];
      for (const [method, message] of pages) {
        const codec = requestCodec('SegmentStore', method);
        const outcome = await store.call(codec.path, codec.encode(message));
        expect([method, outcome.code, outcome.errorCode]).toEqual([method, grpc.status.INVALID_ARGUMENT, 'INVALID_ARGUMENT']);
      }

      for (const bad of INVALID_UTF8) {
        for (const [service, method, message, caller] of [
          ['SegmentStore', 'Get', { segmentId: fuzzSegment, keys: [{ family: MARKER, key: Buffer.from('k') }] }, store],
          ['SegmentStore', 'Iterate', { segmentId: fuzzSegment, family: MARKER, maxItems: 3 }, store],
          ['SegmentStore', 'Update', { segmentId: fuzzSegment, modifications: [{ type: 'PUT', family: MARKER, key: Buffer.from('k'), value: Buffer.from('v') }] }, store],
          ['Controller', 'CreateScope', { scope: MARKER }, controller],
          ['Controller', 'GetTable', { scope: 'safe', table: MARKER }, controller],
        ] as const) {
          const codec = requestCodec(service, method);
          const outcome = await caller.call(codec.path, replaceMarker(codec.encode(message), MARKER, bad));
          expect(ACCEPTED.has(outcome.code), `${method} with ${bad.toString('hex')}: ${grpc.status[outcome.code]} ${outcome.details}`).toBe(true);
        }
      }
    } finally {
      store.close();
      controller.close();
    }
  }, 60_000);

  it('rejects malformed versions, resume tokens and page sizes in the client with InvalidArgumentError', async () => {
    const random = mulberry32(300 + SEED * 1000);
    await using factory = KeyValueTableFactory.withScope('safe', { controller: cluster.controllerAddress });
    const table = factory.forKeyValueTable('protected', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    const first = await table.keyIterator('fam-1', { maxKeysAtOnce: 3 })[Symbol.asyncIterator]().next();
    const token = first.value!.state;
    const version = first.value!.items[0].version!.toString();
    let versions = 0;
    let tokens = 0;
    for (let i = 0; i < 2_000; i++) {
      const text = i % 2 ? mutate(Buffer.from(version), random).toString('latin1') : randomBytes(random, 40).toString(i % 3 ? 'latin1' : 'utf8');
      try {
        expect(Version.fromString(text).toString()).toBe(text); // a survivor must round-trip
      } catch (err) {
        expect(err, JSON.stringify(text)).toBeInstanceOf(InvalidArgumentError);
        versions++;
      }
    }
    for (let i = 0; i < 500; i++) {
      const bad = i % 2 ? mutate(Buffer.from(token), random).toString('latin1') : randomBytes(random, 120).toString('base64url');
      if (bad === token) continue;
      const outcome = await (async () => {
        for await (const page of table.keyIterator('fam-1', { fromState: bad })) void page;
      })().then(
        () => null,
        (err: unknown) => err,
      );
      expect(outcome, JSON.stringify(bad)).toBeInstanceOf(InvalidArgumentError);
      tokens++;
    }
    for (const n of [0, -1, 1.5, Number.NaN, 10_001, 1e9, Number.MAX_SAFE_INTEGER]) {
      expect(() => table.keyIterator('fam-1', { maxKeysAtOnce: n }), String(n)).toThrow(InvalidArgumentError);
    }
    expect(versions).toBeGreaterThan(1_500);
    expect(tokens).toBeGreaterThan(450);
    console.log(`fuzz-rpc client: ${versions} malformed versions and ${tokens} malformed resume tokens rejected`);
  }, 60_000);

  it('leaves the protected data and metadata unchanged and the cluster working', async () => {
    const after = await snapshot();
    expect(after).toEqual(before);
    expect([cluster.controller, ...cluster.stores].every((p) => p.running)).toBe(true);
    const internal = [cluster.controller, ...cluster.stores].flatMap((p) => p.logs.filter((r) => r.msg === 'internal error'));
    expect(internal).toEqual([]);
    await using manager = new KeyValueTableManager({ controller: cluster.controllerAddress });
    await manager.createScope('after-fuzz');
    expect(await manager.createKeyValueTable('after-fuzz', 't', { partitionCount: 2 })).toBe(true);
    await using factory = KeyValueTableFactory.withScope('after-fuzz', { controller: cluster.controllerAddress });
    const table = factory.forKeyValueTable('t', { keySerializer: Serializers.utf8, valueSerializer: Serializers.utf8 });
    await table.put('f', 'k', 'v');
    expect((await table.get('f', 'k'))?.value).toBe('v');
  }, 60_000);
});

/** One case from an encoded seed: random bytes, invalid UTF-8 in the marked string fields, or a mutation. */
function fuzzCase(encoded: Buffer, random: () => number): Buffer {
  const r = random();
  if (r < 0.15) return randomBytes(random, 300);
  if (r < 0.3 && encoded.includes(MARKER)) return replaceMarker(encoded, MARKER, INVALID_UTF8[Math.floor(random() * INVALID_UTF8.length)]);
  return mutate(encoded, random);
}

function merge(tallies: Tally[]): Tally {
  const out: Tally = { sent: 0, skipped: 0, codes: {}, violations: [] };
  for (const t of tallies) {
    out.sent += t.sent;
    out.skipped += t.skipped;
    out.violations.push(...t.violations);
    for (const [k, v] of Object.entries(t.codes)) out.codes[k] = (out.codes[k] ?? 0) + v;
  }
  return out;
}
