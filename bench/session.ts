/**
 * The systems under test for one run: starts the servers (kvt cluster, etcd), opens a client per
 * peer, loads datasets once per server, and tears everything down. A peer that cannot start is
 * recorded as missing with the reason, and the run goes on without it.
 */
import { loadDataset } from './datasets';
import { CassandraPeer } from './peers/cassandra-peer';
import { Etcd3Peer } from './peers/etcd3-peer';
import { EtcdGrpcPeer } from './peers/etcd-grpc-peer';
import { EtcdNode, ensureEtcdInstalled, startEtcd } from './peers/etcd-node';
import { KvtCluster, startKvtCluster } from './peers/kvt-cluster';
import { KvtPeer } from './peers/kvt-peer';
import { Peer, PeerName } from './peers/peer';
import { PravegaPeer } from './peers/pravega-peer';
import { RawLevelPeer } from './peers/raw-level-peer';
import { BenchSettings, Dataset } from './workloads';

/** Options of a session. */
export interface SessionOptions {
  peers: readonly PeerName[];
  /** Passed to the kvt servers as `--cpu-prof-dir`. */
  profileDir?: string;
  /** Segment stores of the kvt cluster. */
  segmentStores: number;
  /** Bound on loading one dataset into one server. */
  loadTimeoutMs: number;
  log: (line: string) => void;
}

function serverOf(p: PeerName): string {
  return p === 'etcd3' || p === 'etcd-grpc' ? 'etcd' : p;
}

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

/** The peers of one run. */
export class Session {
  readonly peers = new Map<PeerName, Peer>();
  readonly missing = new Map<PeerName, string>();
  etcd?: EtcdNode;
  kvt?: KvtCluster;
  private readonly loaded = new Map<string, Promise<void>>();

  private constructor(private readonly opts: SessionOptions) {}

  /** Starts whatever the requested peers need. */
  static async start(opts: SessionOptions): Promise<Session> {
    const s = new Session(opts);
    await s.startEtcdPeers();
    await s.startKvtPeer();
    if (opts.peers.includes('raw')) await s.attempt('raw', () => RawLevelPeer.open());
    // The JVM peers start their own servers (scripts/pravega.sh, scripts/cassandra.sh; close() stops them), side by side.
    await Promise.all([
      opts.peers.includes('pravega') ? s.attempt('pravega', () => PravegaPeer.start({ log: opts.log })) : undefined,
      opts.peers.includes('cassandra') ? s.attempt('cassandra', () => CassandraPeer.start({ log: opts.log })) : undefined,
    ]);
    return s;
  }

  private async attempt(name: PeerName, open: () => Promise<Peer>): Promise<void> {
    try {
      this.peers.set(name, await open());
    } catch (err) {
      this.missing.set(name, message(err));
      this.opts.log(`${name}: missing (${message(err)})`);
    }
  }

  private async startEtcdPeers(): Promise<void> {
    const wanted = this.opts.peers.filter((p) => serverOf(p) === 'etcd');
    if (wanted.length === 0) return;
    try {
      ensureEtcdInstalled(this.opts.log);
      this.etcd = await startEtcd();
      this.opts.log(`etcd: ${this.etcd.version} on ${this.etcd.endpoint}`);
    } catch (err) {
      for (const p of wanted) this.missing.set(p, message(err));
      this.opts.log(`etcd: missing (${message(err)})`);
      return;
    }
    const etcd = this.etcd;
    const pid = (): number => etcd.pid;
    if (wanted.includes('etcd-grpc')) await this.attempt('etcd-grpc', async () => new EtcdGrpcPeer(etcd.endpoint, pid));
    if (wanted.includes('etcd3')) await this.attempt('etcd3', async () => new Etcd3Peer(etcd.endpoint, pid));
  }

  private async startKvtPeer(): Promise<void> {
    if (!this.opts.peers.includes('kvt')) return;
    await this.attempt('kvt', async () => {
      this.kvt = await startKvtCluster({ profileDir: this.opts.profileDir, segmentStores: this.opts.segmentStores });
      this.opts.log(`kvt: controller on ${this.kvt.controller}, pids ${this.kvt.pids.join(' ')}`);
      return KvtPeer.open(this.kvt);
    });
  }

  /** Loads `dataset` into the server behind `peer` unless already there (etcd: through etcd-grpc). */
  ensureLoaded(peer: PeerName, dataset: Dataset, s: BenchSettings): Promise<void> {
    const server = serverOf(peer);
    const key = `${server}:${dataset}`;
    let p = this.loaded.get(key);
    if (!p) {
      const loader = server === 'etcd' ? (this.peers.get('etcd-grpc') ?? this.peers.get(peer)!) : this.peers.get(peer)!;
      const started = Date.now();
      p = loadDataset(loader, dataset, s, this.opts.loadTimeoutMs).then(async () => {
        this.opts.log(`loaded ${dataset} into ${server} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        if (server === 'etcd') await this.restartEtcd();
      });
      this.loaded.set(key, p);
    }
    return p;
  }

  /**
   * Restarts etcd after a load, and waits until each etcd client reads again. etcd 3.4 (Debian's) copies
   * its backend's read buffer for every read and every Txn (etcd-io/etcd#12933 stopped that in 3.5),
   * and the buffer keeps the size the busiest write burst gave it: after the bulk load a single-key get
   * cost etcd ~430 µs of CPU instead of ~60 µs. The load is set-up, not workload, so each case starts
   * from the state a restarted etcd would be in; what the workloads' own writes do to the buffer counts.
   */
  private async restartEtcd(): Promise<void> {
    const started = Date.now();
    await this.etcd!.restart();
    const deadline = Date.now() + this.opts.loadTimeoutMs;
    for (const name of ['etcd-grpc', 'etcd3'] as const) {
      const peer = this.peers.get(name);
      if (!peer) continue;
      for (;;) {
        try {
          await peer.get('restart-probe');
          break;
        } catch (err) {
          if (Date.now() > deadline) throw new Error(`${name} did not reconnect after etcd's restart: ${message(err)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    this.opts.log(`restarted etcd after the load in ${((Date.now() - started) / 1000).toFixed(1)} s (see restartEtcd)`);
  }

  /** Closes every client and stops every server (best effort, each step bounded by its own stop). */
  async stop(): Promise<void> {
    for (const p of this.peers.values()) await p.close().catch(() => undefined);
    this.peers.clear();
    await this.kvt?.stop().catch(() => undefined);
    await this.etcd?.stop().catch(() => undefined);
  }
}
