/**
 * A modification as the store's wire decoder reads it (execute-request-decoder.ts): the key and value
 * stay ranges of the request's bytes, and become Buffers only when read as `key`/`value`.
 * Why: making two views per modification (Buffer.from on the ArrayBuffer) was the largest part of
 * decoding a W4 batch; validation and the chunk merge read the ranges instead (storage knows it as a
 * RangedModification).
 */
import { RangedModification, viewOf } from '../storage/validation';

const EMPTY: Buffer = Buffer.alloc(0);

/** A decoded `Modification` whose key and value are ranges of `source`, the request's bytes. */
export class WireModification implements RangedModification {
  type: string | number = 'PUT';
  family = '';
  condition: RangedModification['condition'] = null;
  ttlMs = '';
  rangeFrom: Buffer = EMPTY;
  rangeTo: Buffer = EMPTY;
  rangePrefix: Buffer = EMPTY;
  keyStart = 0;
  keyEnd = 0;
  valueStart = 0;
  valueEnd = 0;

  /** @param source the bytes of the request the key and value ranges refer to */
  constructor(readonly source: Buffer) {}

  get key(): Buffer {
    return viewOf(this.source, this.keyStart, this.keyEnd);
  }

  get value(): Buffer {
    return viewOf(this.source, this.valueStart, this.valueEnd);
  }
}
