/**
 * The page tokens of listRevisions: opaque to callers, signed so that a caller cannot forge a
 * position (or read another page's listing with one). A token is base64url of
 * `version (1) · mode (1) · cursor length (1) · cursor · mac (16)`, where the cursor is the key to
 * continue from (inclusive) and the mac is the first 16 bytes of HMAC-SHA256(secret, domain · title ·
 * the rest). The title is in the mac but not in the token: a token of another page fails the check.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError } from '../errors';

const VERSION = 1;
const MAC_BYTES = 16;
const DOMAIN = 'kvt.revisions.listRevisions\u0000';
/** Longest token accepted before decoding (a cursor is at most a key of 25 bytes). */
const MAX_TOKEN_LENGTH = 128;

/** What a listing is of: the latest render of each revision, or every render. */
export type ListMode = 'latest' | 'all';

/** Signs and checks page tokens with one secret. */
export class PageTokens {
  private readonly secret: Buffer;

  constructor(secret: Uint8Array) {
    this.secret = Buffer.from(secret);
  }

  /** A token that resumes a listing of `title` in `mode` at `cursor`. */
  sign(title: string, mode: ListMode, cursor: Uint8Array): string {
    const body = Buffer.concat([Buffer.of(VERSION, mode === 'all' ? 1 : 0, cursor.length), cursor]);
    return Buffer.concat([body, this.mac(title, body)]).toString('base64url');
  }

  /**
   * The cursor of a token made by {@link sign} for this title and mode with this secret.
   * @throws InvalidArgumentError when the token is malformed, truncated, tampered with, or made for
   *   another page, another mode or with another secret.
   */
  verify(title: string, mode: ListMode, token: unknown): Buffer {
    if (typeof token !== 'string') throw new InvalidArgumentError(`pageToken must be a string, got ${token === null ? 'null' : typeof token}`);
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) {
      throw new InvalidArgumentError(`pageToken is malformed: not a token listRevisions made (${token.length} characters; the maximum is ${MAX_TOKEN_LENGTH}, base64url)`);
    }
    const bytes = Buffer.from(token, 'base64url');
    const cursorLength = bytes[2];
    if (bytes.length < 3 + MAC_BYTES || bytes.length !== 3 + cursorLength + MAC_BYTES) throw new InvalidArgumentError('pageToken is malformed: truncated or padded');
    const body = bytes.subarray(0, bytes.length - MAC_BYTES);
    const mac = bytes.subarray(bytes.length - MAC_BYTES);
    if (!timingSafeEqual(mac, this.mac(title, body))) {
      throw new InvalidArgumentError(`pageToken is not valid for page ${JSON.stringify(title)}: it was altered, or made for another page or by a store with another tokenSecret`);
    }
    if (body[0] !== VERSION) throw new InvalidArgumentError(`pageToken has version ${body[0]}; this store reads version ${VERSION}`);
    const tokenMode: ListMode = body[1] === 1 ? 'all' : 'latest';
    if (tokenMode !== mode) throw new InvalidArgumentError(`pageToken was made for a listing with allRenders ${tokenMode === 'all'}; this one has allRenders ${mode === 'all'}`);
    return Buffer.from(body.subarray(3));
  }

  private mac(title: string, body: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(DOMAIN).update(title, 'utf8').update('\u0000').update(body).digest().subarray(0, MAC_BYTES);
  }
}
