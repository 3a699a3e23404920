/** GroupCommitter: an idle family sends at once; items arriving while a call is in flight go together. */
import { describe, expect, it } from 'vitest';
import { GroupCommitter } from '../../../client/documents/group-committer';

describe('GroupCommitter', () => {
  it('sends the first item alone and the items queued meanwhile in one group, results in order', async () => {
    const groups: number[][] = [];
    let release: () => void = () => undefined;
    const committer = new GroupCommitter<number, string>(async (items) => {
      groups.push(items);
      if (groups.length === 1) await new Promise<void>((r) => (release = r));
      return items.map((i) => `r${i}`);
    });
    const first = committer.submit(0);
    const rest = [1, 2, 3].map((i) => committer.submit(i));
    release();
    expect(await Promise.all([first, ...rest])).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect(groups).toEqual([[0], [1, 2, 3]]);
    expect(await committer.submit(4)).toBe('r4');
    expect(groups).toEqual([[0], [1, 2, 3], [4]]);
  });

  it('rejects every item of a failed group, and goes on with the next', async () => {
    let calls = 0;
    const committer = new GroupCommitter<number, number>(async (items) => {
      if (calls++ === 0) throw new Error('store down');
      return items;
    });
    await expect(committer.submit(1)).rejects.toThrow('store down');
    expect(await committer.submit(2)).toBe(2);
  });
});
