/**
 * The compression figures on one core: the blocks a store builds from the shared data (each page's
 * renders cut by the store's rules: `blockRevisions` renders or `blockBytes` raw bytes, the last
 * partial block of a page as its image), compressed synchronously with the store's brotli settings.
 * `sweep` measures other settings for comparison.
 */
import * as zlib from 'node:zlib';
import { encodeRecord, joinRecords } from '../../client/archive/record-codec';
import { byPage, TextRender } from './data';

/** Brotli settings and block sizes. */
export interface CodecSettings {
  quality: number;
  windowBits: number;
  blockRevisions: number;
  blockBytes: number;
}

/** What one setting gives on the data. */
export interface CodecResult extends CodecSettings {
  blocks: number;
  rawBytes: number;
  compressedBytes: number;
  /** compressed / raw, in percent. */
  percentOfRaw: number;
  /** Raw megabytes (10^6) per second of compression on one core. */
  compressMBps: number;
  /** Raw megabytes per second of decompression on one core. */
  decompressMBps: number;
}

/** The payloads of the blocks a store builds, page by page. */
export function blockPayloads(renders: TextRender[], s: CodecSettings): Buffer[] {
  const out: Buffer[] = [];
  for (const list of byPage(renders).values()) {
    let block: ReturnType<typeof encodeRecord>[] = [];
    let raw = 0;
    for (const r of list) {
      const record = encodeRecord(r);
      if (block.length > 0 && raw + record.rawBytes > s.blockBytes) {
        out.push(joinRecords(block));
        block = [];
        raw = 0;
      }
      block.push(record);
      raw += record.rawBytes;
      if (block.length >= s.blockRevisions || raw >= s.blockBytes) {
        out.push(joinRecords(block));
        block = [];
        raw = 0;
      }
    }
    if (block.length) out.push(joinRecords(block));
  }
  return out;
}

/** CPU time of this process in ms (user + system): what one core spends, whatever else the machine runs. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Compresses and decompresses every block once on this thread, timed by the process's CPU time (the
 * synchronous codec runs on this one core; wall time would count the other processes of a busy machine).
 */
export function measureCodec(renders: TextRender[], s: CodecSettings): CodecResult {
  const payloads = blockPayloads(renders, s);
  const params = { [zlib.constants.BROTLI_PARAM_QUALITY]: s.quality, [zlib.constants.BROTLI_PARAM_LGWIN]: s.windowBits };
  let compressMs = 0;
  let decompressMs = 0;
  let compressedBytes = 0;
  let rawBytes = 0;
  for (const payload of payloads) {
    const t0 = cpuMs();
    const stream = zlib.brotliCompressSync(payload, { params: { ...params, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: payload.length } });
    const t1 = cpuMs();
    zlib.brotliDecompressSync(stream);
    decompressMs += cpuMs() - t1;
    compressMs += t1 - t0;
    compressedBytes += stream.length;
    rawBytes += payload.length;
  }
  return {
    ...s,
    blocks: payloads.length,
    rawBytes,
    compressedBytes,
    percentOfRaw: (100 * compressedBytes) / rawBytes,
    compressMBps: rawBytes / 1e6 / (compressMs / 1000),
    decompressMBps: rawBytes / 1e6 / (decompressMs / 1000),
  };
}

/** Settings compared by `--sweep`: qualities and block sizes around the default. */
export function sweepSettings(base: CodecSettings): CodecSettings[] {
  const out: CodecSettings[] = [];
  for (const blockRevisions of [32, 64, 128, 256]) for (const quality of [4, 5, 6, 7, 8]) out.push({ ...base, blockRevisions, quality });
  for (const blockBytes of [1, 2, 8]) out.push({ ...base, blockBytes: blockBytes * 1024 * 1024 });
  return out;
}
