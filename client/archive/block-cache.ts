/**
 * Recently read blocks, decompressed, bounded by their size in bytes: least recently used out first.
 * A sealed block never changes, so its entry never goes stale; an open block's image is cached under
 * its checksum as well, so a replaced image is simply another entry (the old one ages out).
 */
import type { RecordSpan } from './record-codec';

/** A decompressed block: its payload and where each record lies in it. */
export interface DecodedBlock {
  payload: Buffer;
  spans: Map<string, RecordSpan>;
}

/** An LRU of decoded blocks by (title, block), at most `maxBytes` of payload. */
export class BlockCache {
  private readonly entries = new Map<string, DecodedBlock>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  private static key(title: string, block: number, tag: string): string {
    return `${block}\u0000${tag}\u0000${title}`;
  }

  /** The block (`tag`: 'sealed', or an image's checksum), now the most recently used; undefined when absent. */
  get(title: string, block: number, tag = 'sealed'): DecodedBlock | undefined {
    const key = BlockCache.key(title, block, tag);
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  /** Adds a block (a block larger than the whole cache is not kept), evicting the least recently used. */
  set(title: string, block: number, decoded: DecodedBlock, tag = 'sealed'): void {
    const size = decoded.payload.length;
    if (size > this.maxBytes) return;
    const key = BlockCache.key(title, block, tag);
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.payload.length;
    }
    this.entries.set(key, decoded);
    this.bytes += size;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.payload.length;
    }
  }

  /** Payload bytes held. */
  get size(): number {
    return this.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
