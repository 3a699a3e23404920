import { describe, expect, it } from 'vitest';
import { BadKeyVersionError, ConditionalTableUpdateError, KvtError, RenderExistsError } from '../../../client';

describe('revision layer errors', () => {
  it('RenderExistsError is a BadKeyVersionError with code BAD_KEY_VERSION naming the render', () => {
    const cause = new Error('the store said so');
    const err = new RenderExistsError('en/Main_Page', 3, '6ba7b810-9dad-11d1-80b4-00c04fd430c8', { cause });
    for (const cls of [RenderExistsError, BadKeyVersionError, ConditionalTableUpdateError, KvtError, Error]) expect(err).toBeInstanceOf(cls);
    expect([err.code, err.name, err.message]).toEqual(['BAD_KEY_VERSION', 'RenderExistsError', 'render 6ba7b810-9dad-11d1-80b4-00c04fd430c8 of revision 3 of page "en/Main_Page" already exists']);
    expect([err.title, err.rev, err.tid, err.cause]).toEqual(['en/Main_Page', 3, '6ba7b810-9dad-11d1-80b4-00c04fd430c8', cause]);
  });
});
