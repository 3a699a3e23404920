/**
 * The segment-store registry: who is registered (persisted in the metadata store) and who is live
 * (in memory, from heartbeats). A store is live while its last heartbeat is younger than
 * `storeTimeoutMs`. After a controller restart every known store gets that much grace, as if it had
 * just heartbeated: a healthy store proves itself within one interval, a dead one is marked dead once
 * the grace runs out. The grace keeps routing to the stores as it was; new segments go only to stores
 * heard from since this controller started (a store that died before the restart would otherwise
 * receive partitions of new tables and leave them CREATING). Any change of liveness or address bumps
 * the routing generation.
 *
 * One id, one process: while a store id is live at one address, a registration of the same id from
 * another address is refused (UNAVAILABLE, naming both) and a heartbeat from another address is
 * answered known=false. Two processes sharing a STORE_ID (a copied data directory) would otherwise
 * take the id in turns, and routing would flip between them on every heartbeat. A store that really
 * moved registers at its new address once the old one has been silent for `storeTimeoutMs`, or at
 * once when the old address was only granted grace after a controller restart (never heard from).
 * The refusal says when that will be (`retryAfterMs`, the `kvt-retry-after-ms` trailer), so a moved
 * store does not wait out a backoff longer than needed.
 *
 * A store removed for good (MetadataStore.removeStore) is refused with SEGMENT_STORE_REMOVED; while
 * its removal is being written it is claimed: registrations are refused UNAVAILABLE (retried) and
 * heartbeats answered known=false, so it cannot come back to life under the removal.
 */
import { ErrorCodes } from '../../proto/error-codes';
import type { Logger } from '../../server-kit/log';
import { KvtFault } from '../../server-kit/fault';
import type { SegmentStoreInfo } from '../../proto/messages';
import type { MetadataStore } from '../metadata/metadata-store';

/**
 * Added to a refused registration's wait: the store's timer and this clock may differ by a
 * millisecond, and an attempt that comes a moment too early is refused again.
 */
export const RETRY_MARGIN_MS = 20;

/** What the registry needs to know of the controller's config. */
export interface StoreRegistryOptions {
  heartbeatIntervalMs: number;
  storeTimeoutMs: number;
  /** @default Date.now */
  clock?: () => number;
}

/** Liveness and registration of segment stores. */
export class StoreRegistry {
  private readonly lastSeen = new Map<string, number>();
  /** Stores that registered or heartbeated since this registry started (not merely granted grace). */
  private readonly heardFrom = new Set<string>();
  /** Stores whose removal is being written ({@link claimForRemoval}). */
  private readonly removing = new Set<string>();
  /** The live set as of the last check: a change against it bumps the generation. */
  private observedLive = new Set<string>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly clock: () => number;
  private readonly liveListeners: Array<(storeId: string) => void> = [];
  /** The latest generation bump for a liveness change; settled once it is durable. */
  private bumping: Promise<void> = Promise.resolve();

  constructor(
    private readonly meta: MetadataStore,
    private readonly options: StoreRegistryOptions,
    private readonly logger: Logger,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /** Grants every persisted store its grace period and starts watching heartbeats. */
  start(): void {
    const now = this.clock();
    for (const store of this.meta.listStores()) this.lastSeen.set(store.storeId, now);
    this.observedLive = new Set(this.lastSeen.keys());
    const every = Math.max(20, Math.min(this.options.heartbeatIntervalMs, Math.floor(this.options.storeTimeoutMs / 4)));
    this.sweepTimer = setInterval(() => void this.refreshLiveness().catch((err) => this.logger.error('liveness check failed', { err })), every);
    this.sweepTimer.unref();
  }

  stop(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  /** Calls `listener(storeId)` whenever a store becomes live (registration or a returning heartbeat). */
  onStoreLive(listener: (storeId: string) => void): void {
    this.liveListeners.push(listener);
  }

  /**
   * Registers (or re-registers) a store: same id with a new address keeps its segments, once the old
   * address is no longer live.
   * @throws KvtFault UNAVAILABLE while the id is live at another address
   */
  async register(storeId: string, address: string): Promise<void> {
    if (this.meta.getRemovedStore(storeId)) {
      throw new KvtFault(
        ErrorCodes.SEGMENT_STORE_REMOVED,
        `segment store ${storeId} was removed from the cluster; its data directory holds segments no table uses any more: ` + 'wipe it and start the store again to join as a new store',
      );
    }
    if (this.removing.has(storeId)) throw new KvtFault(ErrorCodes.UNAVAILABLE, `segment store ${storeId} is being removed from the cluster`);
    const known = this.meta.getStore(storeId);
    // Only a store heard from since this controller started holds its id: one merely granted grace
    // after a restart may be gone (a whole cluster restarted, its stores on new addresses).
    if (known && known.address !== address && this.isLive(storeId) && this.heardFrom.has(storeId)) {
      const silentMs = this.clock() - this.lastSeen.get(storeId)!;
      throw new KvtFault(
        ErrorCodes.UNAVAILABLE,
        `segment store id ${storeId} is live at ${known.address} (heard from ${silentMs} ms ago); ${address} cannot take it until that store ` +
          `has been silent for ${this.options.storeTimeoutMs} ms (two stores started from one data directory?)`,
        -1,
        this.options.storeTimeoutMs - silentMs + RETRY_MARGIN_MS,
      );
    }
    const change = await this.meta.upsertStore(storeId, address, this.clock());
    this.lastSeen.set(storeId, this.clock());
    this.heardFrom.add(storeId);
    this.logger.info('segment store registered', { storeId, address, new: change.created, addressChanged: change.addressChanged });
    await this.refreshLiveness();
  }

  /**
   * Records a heartbeat; false when the store must register again: its id is unknown, or registered
   * at another address (another process holds the id, see the file's comment).
   */
  async heartbeat(storeId: string, address: string): Promise<boolean> {
    const known = this.meta.getStore(storeId);
    if (!known || this.removing.has(storeId)) return false;
    if (address !== '' && address !== known.address) {
      this.logger.warn('heartbeat from another address than the registered one; asked to register again', { storeId, address, registered: known.address });
      return false;
    }
    this.lastSeen.set(storeId, this.clock());
    this.heardFrom.add(storeId);
    await this.refreshLiveness();
    return true;
  }

  /**
   * Claims a dead store for its removal: until {@link releaseClaim} or {@link forget}, it cannot
   * register or heartbeat (see the file's comment). Synchronous, so nothing revives it in between.
   * @throws KvtFault SEGMENT_STORE_LIVE while the store is live
   */
  claimForRemoval(storeId: string, address: string): void {
    if (this.isLive(storeId)) {
      const ageMs = this.clock() - this.lastSeen.get(storeId)!;
      const why = this.heardFrom.has(storeId)
        ? `heard from ${ageMs} ms ago`
        : `not heard from since the controller started ${ageMs} ms ago, and every store counts as live for its first ${this.options.storeTimeoutMs} ms`;
      throw new KvtFault(
        ErrorCodes.SEGMENT_STORE_LIVE,
        `segment store ${storeId} at ${address} is live (${why}); only a store not heard from for ${this.options.storeTimeoutMs} ms can be removed: stop it first`,
      );
    }
    this.removing.add(storeId);
  }

  /** Ends a claim whose removal was not written: the store may register again. */
  releaseClaim(storeId: string): void {
    this.removing.delete(storeId);
  }

  /** Drops a removed store (and its claim) from the liveness state. */
  forget(storeId: string): void {
    this.removing.delete(storeId);
    this.lastSeen.delete(storeId);
    this.heardFrom.delete(storeId);
    this.observedLive.delete(storeId);
  }

  /** True when the store heartbeated within the timeout. */
  isLive(storeId: string): boolean {
    const seen = this.lastSeen.get(storeId);
    return seen !== undefined && this.clock() - seen <= this.options.storeTimeoutMs;
  }

  /** Ids of the live stores, sorted. */
  liveStoreIds(): string[] {
    return this.meta
      .listStores()
      .map((s) => s.storeId)
      .filter((id) => this.isLive(id));
  }

  /**
   * Ids of the live stores heard from since this registry started, sorted: the stores new segments
   * may go to. A store only granted grace after a restart may have died before it.
   */
  placeableStoreIds(): string[] {
    return this.liveStoreIds().filter((id) => this.heardFrom.has(id));
  }

  /** Every known store with its liveness and segment count. */
  list(): SegmentStoreInfo[] {
    const counts = this.meta.segmentCountsByStore();
    const now = this.clock();
    return this.meta.listStores().map((s) => {
      const lastHeartbeatMs = this.lastSeen.get(s.storeId) ?? s.lastHeartbeatMs;
      return {
        storeId: s.storeId,
        address: s.address,
        live: this.isLive(s.storeId),
        lastHeartbeatMs: String(lastHeartbeatMs),
        lastHeartbeatAgeMs: String(Math.max(0, now - lastHeartbeatMs)),
        segmentCount: counts.get(s.storeId) ?? 0,
      };
    });
  }

  /**
   * Compares liveness with the last check; any change is logged and bumps the routing generation.
   * Resolves once the generation reflects what this check saw: a change already being bumped for by
   * a concurrent check is waited for, so a caller reading the generation next (GetRouting) never
   * pairs new liveness with the old generation.
   */
  async refreshLiveness(): Promise<void> {
    const live = new Set(this.liveStoreIds());
    const died = [...this.observedLive].filter((id) => !live.has(id));
    const revived = [...live].filter((id) => !this.observedLive.has(id));
    if (died.length === 0 && revived.length === 0) return this.bumping;
    // Updated before the await so concurrent checks do not report (and bump for) the same change twice.
    this.observedLive = live;
    for (const storeId of died) this.logger.warn('segment store is dead', { storeId, timeoutMs: this.options.storeTimeoutMs });
    for (const storeId of revived) this.logger.info('segment store is live', { storeId });
    // Metadata writes are serialized, so this bump settles after any earlier one.
    const bump = this.meta.bumpGeneration();
    this.bumping = bump.then(
      () => undefined,
      () => undefined,
    );
    await bump;
    for (const storeId of revived) for (const listener of this.liveListeners) listener(storeId);
  }

  /**
   * Resolves true once some store may receive segments ({@link placeableStoreIds}), false when
   * `deadlineMs` (controller clock) passes first or `cancelled()` turns true.
   */
  async waitForPlaceableStore(deadlineMs: number, cancelled: () => boolean = () => false, pollMs = 100): Promise<boolean> {
    for (;;) {
      if (this.placeableStoreIds().length > 0) return true;
      const left = deadlineMs - this.clock();
      if (left <= 0 || cancelled()) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, left)));
    }
  }
}
