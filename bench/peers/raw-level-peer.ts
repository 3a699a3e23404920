/**
 * The limit: classic-level in this process, every write with `sync: true` (the same durability the
 * servers give). Versions are a per-key counter kept in memory next to the store, checked and bumped
 * synchronously so a conditional write cannot interleave with another. LevelDB gets the segment
 * store's memtable size, so kvt / raw compares the work done around the same engine settings.
 */
import { ClassicLevel } from 'classic-level';
import { DEFAULT_WRITE_BUFFER_BYTES } from '../../segmentstore/storage/segments/segment-state';
import { makeTempDir, removeDir } from '../core/processes';
import { BatchEntry, Peer, VersionedValue } from './peer';

const FAMILY_SEP = '\u0000';

function familyKey(family: string, key: string): string {
  return `\u0001${family}${FAMILY_SEP}${key}`;
}

/** Raw LevelDB, opened in a temp dir that `close()` removes. */
export class RawLevelPeer implements Peer {
  readonly name = 'raw' as const;
  readonly cpu = { kind: 'self' } as const;
  private readonly versions = new Map<string, number>();
  private counter = 0;

  private constructor(
    private readonly db: ClassicLevel<string, Buffer>,
    private readonly dir: string,
  ) {}

  /** Opens a fresh store. */
  static async open(): Promise<RawLevelPeer> {
    const dir = makeTempDir('raw');
    const db = new ClassicLevel<string, Buffer>(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer', writeBufferSize: DEFAULT_WRITE_BUFFER_BYTES });
    await db.open();
    return new RawLevelPeer(db, dir);
  }

  async put(key: string, value: Buffer): Promise<void> {
    this.versions.set(key, ++this.counter);
    await this.db.put(key, value, { sync: true });
  }

  async get(key: string): Promise<Buffer | null> {
    return (await this.db.get(key)) ?? null;
  }

  async getVersioned(key: string): Promise<VersionedValue> {
    const value = (await this.db.get(key)) ?? null;
    const v = this.versions.get(key);
    return { value, version: v === undefined ? null : String(v) };
  }

  async replaceIf(key: string, value: Buffer, version: string | null): Promise<boolean> {
    const current = this.versions.get(key);
    if ((current === undefined ? null : String(current)) !== version) return false;
    this.versions.set(key, ++this.counter);
    await this.db.put(key, value, { sync: true });
    return true;
  }

  async putBatch(family: string, entries: BatchEntry[]): Promise<void> {
    const ops = entries.map((e) => ({ type: 'put' as const, key: familyKey(family, e.key), value: e.value }));
    await this.db.batch(ops, { sync: true });
  }

  async putInFamily(family: string, key: string, value: Buffer): Promise<void> {
    await this.db.put(familyKey(family, key), value, { sync: true });
  }

  async getInFamily(family: string, key: string): Promise<Buffer | null> {
    return (await this.db.get(familyKey(family, key))) ?? null;
  }

  async putMany(entries: BatchEntry[]): Promise<void> {
    for (const e of entries) this.versions.set(e.key, ++this.counter);
    await this.db.batch(
      entries.map((e) => ({ type: 'put' as const, key: e.key, value: e.value })),
      { sync: true },
    );
  }

  async scanFamily(family: string): Promise<number> {
    const prefix = familyKey(family, '');
    let n = 0;
    for await (const _ of this.db.iterator({ gte: prefix, lt: `\u0001${family}\u0001` })) n++;
    return n;
  }

  async close(): Promise<void> {
    await this.db.close();
    removeDir(this.dir);
  }
}
