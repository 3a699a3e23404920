/**
 * The benchmark's peers keep the one contract the workloads are written against (bench/peers/peer.ts),
 * each against its real server: kvt (a cluster of real processes), etcd (Debian's etcd, installed by
 * scripts/install-etcd.sh when missing, started by the benchmark's own etcd-node.ts) through the etcd3
 * library and through plain grpc-js, and raw LevelDB in-process. A peer that did less than the
 * contract (a conditional write that also wins on a stale version, a family scan that reads its
 * neighbour's keys, a batch that is not all there) would make its figures in the report compare
 * different work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuSecondsOf } from '../../bench/core/cpu';
import { Etcd3Peer } from '../../bench/peers/etcd3-peer';
import { EtcdGrpcPeer } from '../../bench/peers/etcd-grpc-peer';
import { EtcdNode, ensureEtcdInstalled, startEtcd } from '../../bench/peers/etcd-node';
import { KvtCluster, startKvtCluster } from '../../bench/peers/kvt-cluster';
import { KvtPeer } from '../../bench/peers/kvt-peer';
import { Peer, PEER_NAMES, PeerName } from '../../bench/peers/peer';
import { RawLevelPeer } from '../../bench/peers/raw-level-peer';

const value = (text: string): Buffer => Buffer.from(text);

describe('benchmark peers against their real servers', () => {
  const peers = new Map<PeerName, Peer>();
  let etcd: EtcdNode | undefined;
  let kvt: KvtCluster | undefined;

  beforeAll(async () => {
    const installed = ensureEtcdInstalled((line) => console.log(line));
    if (!installed) throw new Error('etcd is not installed and scripts/install-etcd.sh could not install it (needs root or sudo, and Debian packages)');
    etcd = await startEtcd();
    const node = etcd;
    peers.set('etcd-grpc', new EtcdGrpcPeer(node.endpoint, () => node.pid));
    peers.set('etcd3', new Etcd3Peer(node.endpoint, () => node.pid));
    kvt = await startKvtCluster({ segmentStores: 1 });
    peers.set('kvt', await KvtPeer.open(kvt, { partitionCount: 4 }));
    peers.set('raw', await RawLevelPeer.open());
  }, 360_000);

  afterAll(async () => {
    for (const p of peers.values()) await p.close().catch(() => undefined);
    await kvt?.stop();
    await etcd?.stop();
  });

  for (const name of PEER_NAMES) {
    describe(name, () => {
      const peer = (): Peer => peers.get(name)!;

      it('reads back what it wrote, and nothing for a key never written', async () => {
        expect(await peer().get(`${name}-never`)).toBeNull();
        await peer().put(`${name}-k`, value('v1'));
        await peer().put(`${name}-k`, value('v2'));
        expect((await peer().get(`${name}-k`))?.toString()).toBe('v2');
      });

      it('writes conditionally: only while absent, or only at the version read (W3)', async () => {
        const key = `${name}-rmw`;
        expect(await peer().getVersioned(key)).toEqual({ value: null, version: null });
        expect(await peer().replaceIf(key, value('a'), null)).toBe(true);
        expect(await peer().replaceIf(key, value('b'), null)).toBe(false);
        const read = await peer().getVersioned(key);
        expect(read.value?.toString()).toBe('a');
        expect(await peer().replaceIf(key, value('c'), read.version)).toBe(true);
        expect(await peer().replaceIf(key, value('d'), read.version)).toBe(false);
        expect((await peer().get(key))?.toString()).toBe('c');
      });

      it('lets exactly one of eight conditional writes from one version win', async () => {
        const key = `${name}-race`;
        await peer().put(key, value('start'));
        const { version } = await peer().getVersioned(key);
        const won = await Promise.all(Array.from({ length: 8 }, (_, i) => peer().replaceIf(key, value(`w${i}`), version)));
        expect(won.filter(Boolean)).toHaveLength(1);
        expect((await peer().get(key))?.toString()).toBe(`w${won.indexOf(true)}`);
      });

      it('writes a batch into one family whole, and scans only that family (W4, W5)', async () => {
        const entries = Array.from({ length: 100 }, (_, i) => ({ key: `k${String(i).padStart(3, '0')}`, value: value(`v${i}`) }));
        await peer().putBatch(`${name}-fam1`, entries);
        // A family whose name starts with the other's: a prefix scan must not take its keys.
        await peer().putBatch(`${name}-fam10`, entries.slice(0, 3));
        expect(await peer().scanFamily(`${name}-fam1`)).toBe(100);
        expect(await peer().scanFamily(`${name}-fam10`)).toBe(3);
        expect(await peer().scanFamily(`${name}-fam2`)).toBe(0);
      });

      it('writes and reads single keys of families apart from each other and from family-less keys (W7, W8, W9)', async () => {
        expect(await peer().getInFamily(`${name}-one`, 'k')).toBeNull();
        await peer().putInFamily(`${name}-one`, 'k', value('first'));
        await peer().putInFamily(`${name}-one`, 'k2', value('second'));
        await peer().putInFamily(`${name}-one1`, 'k', value('other family'));
        expect((await peer().getInFamily(`${name}-one`, 'k'))?.toString()).toBe('first');
        expect((await peer().getInFamily(`${name}-one`, 'k2'))?.toString()).toBe('second');
        expect((await peer().getInFamily(`${name}-one1`, 'k'))?.toString()).toBe('other family');
        expect(await peer().get('k')).toBeNull();
        expect(await peer().scanFamily(`${name}-one`)).toBe(2);
      });

      it('loads family-less keys with putMany when it has one, readable one by one', async () => {
        const entries = Array.from({ length: 50 }, (_, i) => ({ key: `${name}-many-${i}`, value: value(`m${i}`) }));
        if (peer().putMany) await peer().putMany!(entries);
        else await Promise.all(entries.map((e) => peer().put(e.key, e.value)));
        const read = await Promise.all(entries.map((e) => peer().get(e.key)));
        expect(read.map((v) => v?.toString())).toEqual(entries.map((e) => e.value.toString()));
      });

      it("charges its server's CPU (from /proc, or this process for the in-process peer)", () => {
        const seconds = cpuSecondsOf(peer().cpu);
        expect(seconds).toBeGreaterThan(0);
      });
    });
  }
});
