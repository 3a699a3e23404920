/**
 * How blocks and pending records are stored: a header with a checksum, then the body, cut into
 * chunks no larger than a backend value may be.
 *
 * A block (sealed, or the image of an open block) is the brotli stream of its payload (the records,
 * see record-codec.ts) behind a 26-byte header: `"KVTA" | format u8 | kind u8 | block u32 |
 * records u32 | payload length u32 | stream length u32 | crc32(stream) u32`. A pending record is
 * `"KVTP" | format u8 | record length u32 | crc32(record) u32` then the record. Every read checks
 * the header, the lengths and the checksum before it decodes anything, so damage is reported as
 * {@link ArchiveCorruptedError}, never returned.
 */
import * as zlib from 'node:zlib';
import { promisify } from 'node:util';
import { ArchiveCorruptedError } from './archive-errors';

const brotliCompress = promisify(zlib.brotliCompress);
const brotliDecompress = promisify(zlib.brotliDecompress);

const BLOCK_MAGIC = 0x4b565441; // "KVTA"
const PENDING_MAGIC = 0x4b565450; // "KVTP"
const FORMAT = 1;
/** Bytes of a block's header. */
export const BLOCK_HEADER_BYTES = 26;
/** Bytes of a pending record's header. */
export const PENDING_HEADER_BYTES = 13;
/** The largest output chunk of one decompression: a block's whole payload (blockBytes plus one render) fits in one. */
const MAX_OUTPUT_CHUNK = 16 * 1024 * 1024;

/** What a block holds. */
export type BlockKind = 'sealed' | 'image';
const KIND_CODE: Record<BlockKind, number> = { sealed: 1, image: 2 };

/** Brotli settings of a block. */
export interface CompressionSettings {
  quality: number;
  windowBits: number;
}

const crcTable = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/** CRC-32 (zlib's, where Node has it). */
export function crc32(data: Uint8Array): number {
  if (typeof zlib.crc32 === 'function') return zlib.crc32(data) >>> 0;
  let c = -1;
  for (let i = 0; i < data.length; i++) c = crcTable[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** Compresses a payload into a whole stored block (header + stream). Runs on libuv's thread pool. */
export async function encodeBlock(kind: BlockKind, block: number, records: number, payload: Buffer, settings: CompressionSettings): Promise<Buffer> {
  const stream = await brotliCompress(payload, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: settings.quality,
      [zlib.constants.BROTLI_PARAM_LGWIN]: settings.windowBits,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: payload.length,
    },
  });
  const header = Buffer.allocUnsafe(BLOCK_HEADER_BYTES);
  header.writeUInt32BE(BLOCK_MAGIC, 0);
  header[4] = FORMAT;
  header[5] = KIND_CODE[kind];
  header.writeUInt32BE(block, 6);
  header.writeUInt32BE(records, 10);
  header.writeUInt32BE(payload.length, 14);
  header.writeUInt32BE(stream.length, 18);
  header.writeUInt32BE(crc32(stream), 22);
  return Buffer.concat([header, stream]);
}

/** The total stored length announced by a block's first chunk (header included); throws ArchiveCorruptedError on a bad header. */
export function blockStoredLength(title: string, block: number, first: Uint8Array): number {
  const buf = Buffer.from(first.buffer, first.byteOffset, first.byteLength);
  if (buf.length < BLOCK_HEADER_BYTES || buf.readUInt32BE(0) !== BLOCK_MAGIC) throw new ArchiveCorruptedError(title, block, 'its header is missing or damaged');
  if (buf[4] !== FORMAT) throw new ArchiveCorruptedError(title, block, `its format is ${buf[4]}; this version reads format ${FORMAT}`);
  return BLOCK_HEADER_BYTES + buf.readUInt32BE(18);
}

/** The number of chunks of a block whose first chunk is `first` (a block is cut into equal chunks but the last). */
export function blockChunkCount(title: string, block: number, first: Uint8Array): number {
  const total = blockStoredLength(title, block, first);
  if (first.length === 0) throw new ArchiveCorruptedError(title, block, 'its first chunk is empty');
  return Math.ceil(total / first.length);
}

/** Checks a whole stored block and decompresses its payload. @throws ArchiveCorruptedError */
export async function decodeBlock(title: string, block: number, kind: BlockKind, stored: Buffer): Promise<{ records: number; payload: Buffer }> {
  const total = blockStoredLength(title, block, stored);
  if (stored[5] !== KIND_CODE[kind]) {
    const actual = (Object.keys(KIND_CODE) as BlockKind[]).find((k) => KIND_CODE[k] === stored[5]) ?? `unknown (${stored[5]})`;
    throw new ArchiveCorruptedError(title, block, `its kind is ${actual}; expected ${kind}`);
  }
  if (stored.readUInt32BE(6) !== block) throw new ArchiveCorruptedError(title, block, `its header names block ${stored.readUInt32BE(6)}`);
  if (stored.length !== total) throw new ArchiveCorruptedError(title, block, `it is ${stored.length} bytes; its header says ${total}`);
  const stream = stored.subarray(BLOCK_HEADER_BYTES);
  if (crc32(stream) !== stored.readUInt32BE(22)) throw new ArchiveCorruptedError(title, block, 'its checksum does not match');
  const expected = stored.readUInt32BE(14);
  let payload: Buffer;
  try {
    // The payload in one output chunk of the size the header gives: with zlib's default chunk (16 KiB) a block
    // of a few MiB hops between the thread pool and the event loop hundreds of times, several times slower than
    // the decompression itself. The output is capped at that size, so a stream longer than its header says
    // fails instead of growing.
    payload = await brotliDecompress(stream, { chunkSize: Math.min(MAX_OUTPUT_CHUNK, Math.max(zlib.constants.Z_MIN_CHUNK, expected)), maxOutputLength: Math.max(1, expected) });
  } catch (err) {
    const longer = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    const why = longer ? `it decompresses to more than ${expected} bytes; its header says ${expected}` : `it does not decompress (${(err as Error).message})`;
    throw new ArchiveCorruptedError(title, block, why, { cause: err });
  }
  if (payload.length !== expected) throw new ArchiveCorruptedError(title, block, `it decompresses to ${payload.length} bytes; its header says ${expected}`);
  return { records: stored.readUInt32BE(10), payload };
}

/** A pending record as stored: header + record. */
export function encodePending(record: Buffer): Buffer {
  const header = Buffer.allocUnsafe(PENDING_HEADER_BYTES);
  header.writeUInt32BE(PENDING_MAGIC, 0);
  header[4] = FORMAT;
  header.writeUInt32BE(record.length, 5);
  header.writeUInt32BE(crc32(record), 9);
  return Buffer.concat([header, record]);
}

/** The total stored length announced by a pending record's first chunk. @throws ArchiveCorruptedError */
export function pendingStoredLength(title: string, block: number, first: Uint8Array): number {
  const buf = Buffer.from(first.buffer, first.byteOffset, first.byteLength);
  if (buf.length < PENDING_HEADER_BYTES || buf.readUInt32BE(0) !== PENDING_MAGIC || buf[4] !== FORMAT)
    throw new ArchiveCorruptedError(title, block, 'a pending record has a missing or damaged header');
  return PENDING_HEADER_BYTES + buf.readUInt32BE(5);
}

/** Checks a whole stored pending record and returns the record. @throws ArchiveCorruptedError */
export function decodePending(title: string, block: number, stored: Buffer): Buffer {
  const total = pendingStoredLength(title, block, stored);
  if (stored.length !== total) throw new ArchiveCorruptedError(title, block, `a pending record is ${stored.length} bytes; its header says ${total}`);
  const record = stored.subarray(PENDING_HEADER_BYTES);
  if (crc32(record) !== stored.readUInt32BE(9)) throw new ArchiveCorruptedError(title, block, 'a pending record fails its checksum');
  return record;
}

/** Cuts stored bytes into chunks of at most `size` bytes (views, no copies). */
export function chunk(stored: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < stored.length; at += size) out.push(stored.subarray(at, Math.min(stored.length, at + size)));
  return out.length ? out : [stored];
}
