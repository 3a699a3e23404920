/** The errors of the page revision layer. */
import { BadKeyVersionError, KvtErrorContext } from '../errors';

/**
 * `putRender(…, { ifAbsent: true })` found a render with the same (rev, tid) already stored; nothing
 * was written. A {@link BadKeyVersionError} (code `BAD_KEY_VERSION`, a failed condition), so code
 * that handles conditional failures handles this too; `title`, `rev` and `tid` name the render.
 */
export class RenderExistsError extends BadKeyVersionError {
  override name = 'RenderExistsError';
  readonly title: string;
  readonly rev: number;
  readonly tid: string;

  constructor(title: string, rev: number, tid: string, context?: KvtErrorContext) {
    super(`render ${tid} of revision ${rev} of page ${JSON.stringify(title)} already exists`, context);
    this.title = title;
    this.rev = rev;
    this.tid = tid;
  }
}
