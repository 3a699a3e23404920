/**
 * Versions of table entries. A version is (segment id, sequence): both unsigned 64-bit integers kept
 * as canonical decimal strings. Sequences strictly increase within a segment, so two versions of one
 * segment are ordered; a version of another segment never matches a condition. The string form
 * `"<segment>.<sequence>"` round-trips through {@link Version.fromString} and is safe as an ETag.
 */
import { InvalidArgumentError } from './errors';

const U64_MAX = (1n << 64n) - 1n;
const NO_VERSION_TEXT = 'NO_VERSION';
const NOT_EXISTS_TEXT = 'NOT_EXISTS';
const FORM = /^(0|[1-9][0-9]{0,19})\.(0|[1-9][0-9]{0,19})$/;

type Kind = 'none' | 'not-exists' | 'version';

/** The version of a table entry, or one of the two condition sentinels. */
export class Version {
  /** Unconditional: the update applies whatever the key's current version. */
  static readonly NO_VERSION = new Version('none', '', '');
  /** The key must be absent for the update to apply. */
  static readonly NOT_EXISTS = new Version('not-exists', '', '');

  private constructor(
    private readonly kind: Kind,
    /** Table segment id (uint64, decimal); empty for the sentinels. */
    readonly segmentId: string,
    /** Sequence within the segment (uint64, decimal); empty for the sentinels. */
    readonly sequence: string,
  ) {}

  /** @internal Builds a version from wire fields (already canonical decimal strings). */
  static of(segmentId: string, sequence: string): Version {
    return new Version('version', segmentId, sequence);
  }

  /**
   * Parses the output of {@link Version.toString}.
   * @throws InvalidArgumentError when `text` is not a version.
   */
  static fromString(text: string): Version {
    if (text === NO_VERSION_TEXT) return Version.NO_VERSION;
    if (text === NOT_EXISTS_TEXT) return Version.NOT_EXISTS;
    const match = typeof text === 'string' ? FORM.exec(text) : null;
    if (!match || BigInt(match[1]) > U64_MAX || BigInt(match[2]) > U64_MAX) {
      throw new InvalidArgumentError(`version "${String(text).slice(0, 64)}" is malformed; expected "<segment>.<sequence>", NO_VERSION or NOT_EXISTS`);
    }
    return new Version('version', match[1], match[2]);
  }

  /** True for {@link Version.NO_VERSION}. */
  get isNoVersion(): boolean {
    return this.kind === 'none';
  }

  /** True for {@link Version.NOT_EXISTS}. */
  get isNotExists(): boolean {
    return this.kind === 'not-exists';
  }

  /** `"<segment>.<sequence>"`, or `NO_VERSION` / `NOT_EXISTS` for the sentinels. */
  toString(): string {
    if (this.kind === 'none') return NO_VERSION_TEXT;
    if (this.kind === 'not-exists') return NOT_EXISTS_TEXT;
    return `${this.segmentId}.${this.sequence}`;
  }

  /** Same as {@link Version.toString}, so versions serialise as strings. */
  toJSON(): string {
    return this.toString();
  }

  /** True when both denote the same version (or the same sentinel). */
  equals(other: Version): boolean {
    return other instanceof Version && this.kind === other.kind && this.segmentId === other.segmentId && this.sequence === other.sequence;
  }

  /**
   * Orders two versions of one segment: negative when this one is older, 0 when equal, positive when newer.
   * @throws InvalidArgumentError when the versions belong to different segments or one is a sentinel.
   */
  compareTo(other: Version): number {
    if (this.kind !== 'version' || other.kind !== 'version') {
      throw new InvalidArgumentError(`cannot order ${this} and ${other}: only versions of one segment are ordered`);
    }
    if (this.segmentId !== other.segmentId) {
      throw new InvalidArgumentError(`cannot order ${this} and ${other}: they belong to different segments (${this.segmentId} and ${other.segmentId})`);
    }
    // Canonical decimals without leading zeros: a longer string is a larger number.
    if (this.sequence.length !== other.sequence.length) return this.sequence.length < other.sequence.length ? -1 : 1;
    return this.sequence < other.sequence ? -1 : this.sequence > other.sequence ? 1 : 0;
  }
}
