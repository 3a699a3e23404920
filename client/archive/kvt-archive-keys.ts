/**
 * The keys of the archive in a kvt table. Each page is one key family (its title), so every change
 * of a page is one atomic batch of that family:
 *
 * | key | value |
 * |---|---|
 * | `M` | the page's metadata (PageState as JSON); its version is the compare-and-set token |
 * | `I` rev u64 tid(16, time order) | the block holding the render (varint) |
 * | `T` block u32 rev u64 tid(16) part u8 | a pending record of the open block, cut into parts |
 * | `O` block u32 part u8 | the image of the open block, cut into chunks |
 * | `B` block u32 part u8 | a sealed block, cut into chunks |
 *
 * Index keys sort by (rev, tid), so the latest render of a rev is the last key of its prefix. Pages
 * are listed in directory families `\u0000archive-pages/NN` (a title never holds U+0000), sharded by
 * a hash of the title so that no family holds every page.
 */
import { keyToTid, tidToKey } from './tid';

/** Directory families pages are spread over. */
export const DIRECTORY_SHARDS = 64;

export const META_KEY = Buffer.from('M');

function withBlock(tag: string, block: number, extra: number): Buffer {
  const key = Buffer.alloc(5 + extra);
  key.write(tag, 0, 'latin1');
  key.writeUInt32BE(block, 1);
  return key;
}

function writeRev(key: Buffer, at: number, rev: number): void {
  key.writeUInt32BE(Math.floor(rev / 2 ** 32), at);
  key.writeUInt32BE(rev >>> 0, at + 4);
}

/** Bytes of an index key. */
export const INDEX_KEY_BYTES = 25;
/** Bytes of a pending key, and of the part of it that names the render. */
export const PENDING_KEY_BYTES = 30;
export const PENDING_ID_BYTES = 29;

/** `I` rev tid: the index entry of a render. */
export function indexKey(rev: number, tid: string): Buffer {
  const key = Buffer.alloc(INDEX_KEY_BYTES);
  key.write('I', 0, 'latin1');
  writeRev(key, 1, rev);
  tidToKey(tid).copy(key, 9);
  return key;
}

/** `I` rev: the prefix of a rev's index entries. */
export function indexPrefix(rev: number): Buffer {
  return indexKey(rev, '00000000-0000-1000-8000-000000000000').subarray(0, 9);
}

/** The tid of an index key. */
export function indexKeyTid(key: Uint8Array): string {
  return keyToTid(key, 9);
}

/** `T` block rev tid part. */
export function pendingKey(block: number, rev: number, tid: string, part: number): Buffer {
  const key = withBlock('T', block, 25);
  writeRev(key, 5, rev);
  tidToKey(tid).copy(key, 13);
  key[29] = part;
  return key;
}

/** `T` block: every pending record of a block. */
export function pendingPrefix(block: number): Buffer {
  return withBlock('T', block, 0);
}

/** `O` block part. */
export function imageKey(block: number, part: number): Buffer {
  const key = withBlock('O', block, 1);
  key[5] = part;
  return key;
}

/** `O` block. */
export function imagePrefix(block: number): Buffer {
  return withBlock('O', block, 0);
}

/** `B` block part. */
export function blockKey(block: number, part: number): Buffer {
  const key = withBlock('B', block, 1);
  key[5] = part;
  return key;
}

/** `B` block. */
export function blockPrefix(block: number): Buffer {
  return withBlock('B', block, 0);
}

/** The directory family listing `title`. */
export function directoryFamily(title: string): string {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(title, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return directoryShard(h % DIRECTORY_SHARDS);
}

/** The name of directory family `shard`. */
export function directoryShard(shard: number): string {
  return `\u0000archive-pages/${String(shard).padStart(2, '0')}`;
}

/** The varint of a block number. */
export function encodeBlockNumber(block: number): Buffer {
  const out: number[] = [];
  let n = block;
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

/** The block number of an index value; NaN when malformed. */
export function decodeBlockNumber(value: Uint8Array): number {
  let n = 0;
  let scale = 1;
  for (let i = 0; i < value.length && i < 5; i++) {
    n += (value[i] & 0x7f) * scale;
    if ((value[i] & 0x80) === 0) return i === value.length - 1 ? n : NaN;
    scale *= 128;
  }
  return NaN;
}
