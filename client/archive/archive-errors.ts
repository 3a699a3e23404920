/** The archive tier's own error: a block or record that fails its checks. */
import { KvtError, KvtErrorContext } from '../errors';

/**
 * A block of the archive (or a pending record of an open block) failed its checks: a wrong header,
 * checksum or length, an undecodable compressed stream, or an index entry the block does not hold.
 * Nothing is returned from such a block. Code `ARCHIVE_CORRUPTED`; `title` and `block` name it.
 */
export class ArchiveCorruptedError extends KvtError {
  override name = 'ArchiveCorruptedError';
  /** The page whose block failed. */
  readonly title: string;
  /** The block number within the page. */
  readonly block: number;

  constructor(title: string, block: number, reason: string, context?: KvtErrorContext) {
    super('ARCHIVE_CORRUPTED', `archive block ${block} of page ${JSON.stringify(title)} is corrupted: ${reason}`, context);
    this.title = title;
    this.block = block;
  }
}
