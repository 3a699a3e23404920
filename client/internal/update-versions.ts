/**
 * The versions an update gave, from the store's answer (UpdateResponse in segmentstore.proto): its
 * PUTs and INSERTs got consecutive sequences from `firstSequence`, in modification order; removes
 * get none. Stores before that answered one sequence per modification, which is read as well.
 */
import type { UpdateResponse } from '../../proto/messages';
import { ServiceError } from '../errors';
import { Version } from '../version';
import { MODIFICATION_TYPES } from '../../proto/enums';

function takesSequence(type: number): boolean {
  return type === MODIFICATION_TYPES.PUT || type === MODIFICATION_TYPES.INSERT;
}

/** One Version per modification of `types` (null for removes), in order, of segment `segmentId`. */
export function versionsOf(response: UpdateResponse | undefined, types: Uint8Array, segmentId: string): (Version | null)[] {
  const out = new Array<Version | null>(types.length);
  const listed = response?.sequences;
  if (listed && listed.length > 0) {
    if (listed.length !== types.length) throw new ServiceError(`the store answered ${listed.length} sequences for ${types.length} modifications`, { code: 'SERVICE_ERROR' });
    for (let i = 0; i < types.length; i++) out[i] = takesSequence(types[i]) ? Version.of(segmentId, listed[i]) : null;
    return out;
  }
  const first = response?.firstSequence ?? '';
  let next = first.length > 0 && first.length <= 15 ? Number(first) : NaN;
  // Decimals of up to 15 digits add up exactly as numbers; longer ones (never handed out by a store
  // of JS numbers, but the wire allows them) as bigints.
  let big = Number.isNaN(next) && /^[0-9]+$/.test(first) ? BigInt(first) : undefined;
  for (let i = 0; i < types.length; i++) {
    if (!takesSequence(types[i])) {
      out[i] = null;
      continue;
    }
    if (big !== undefined) out[i] = Version.of(segmentId, String(big++));
    else if (Number.isNaN(next)) throw new ServiceError(`the store answered no sequence for modification ${i}`, { code: 'SERVICE_ERROR' });
    else out[i] = Version.of(segmentId, String(next++));
  }
  return out;
}
