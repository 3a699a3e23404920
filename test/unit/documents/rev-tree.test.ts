/** The revision tree's pure rules: the winner order, known revs, and how replicated paths merge. */
import { describe, expect, it } from 'vitest';
import { Branch, childAncestors, compareBranches, hasRev, mergePath, winnerOf } from '../../../client/documents/rev-tree';

const b = (pos: number, hash: string, ancestors: string[] = [], deleted = false): Branch => ({ pos, hash, ancestors, deleted });

describe('rev-tree', () => {
  it('orders branches as CouchDB picks its winner: live over deleted, then pos, then hash', () => {
    const order = [b(9, 'z', [], true), b(1, 'a'), b(1, 'b'), b(2, '0'), b(2, 'a'), b(2, 'ab')];
    for (let i = 0; i + 1 < order.length; i++) expect(compareBranches(order[i], order[i + 1])).toBeLessThan(0);
    expect(winnerOf([...order].reverse())).toBe(order[order.length - 1]);
    expect(winnerOf([])).toBeNull();
  });

  it('knows a rev that is the leaf or an ancestor it keeps', () => {
    const leaf = b(4, 'd', ['c', 'b']);
    expect([hasRev(leaf, 4, 'd'), hasRev(leaf, 3, 'c'), hasRev(leaf, 2, 'b'), hasRev(leaf, 1, 'a'), hasRev(leaf, 3, 'x'), hasRev(leaf, 5, 'e')]).toEqual([true, true, true, false, false, false]);
  });

  it('stems a child path to revsLimit positions counting the leaf', () => {
    const parent = b(4, 'd', ['c', 'b', 'a']);
    expect([1, 2, 3, 5, 1000].map((limit) => childAncestors(parent, limit))).toEqual([[], ['d'], ['d', 'c'], ['d', 'c', 'b', 'a'], ['d', 'c', 'b', 'a']]);
  });

  it('merges a path: known, extending a leaf, a new branch, a disjoint tree, and history below the path', () => {
    const tree = [b(2, 'b', ['a']), b(3, 'y', ['x', 'a'])];
    expect(mergePath(tree, { pos: 1, ids: ['a'], deleted: false }, 10).known).toBe(true);
    expect(mergePath(tree, { pos: 2, ids: ['x'], deleted: false }, 10).known).toBe(true);
    const extend = mergePath(tree, { pos: 4, ids: ['d', 'c', 'b'], deleted: false }, 10);
    expect([extend.known, extend.extended, extend.ancestors]).toEqual([false, [tree[0]], ['c', 'b', 'a']]);
    const branch = mergePath(tree, { pos: 2, ids: ['q', 'a'], deleted: false }, 10);
    expect([branch.extended, branch.ancestors]).toEqual([[], ['a']]);
    const disjoint = mergePath(tree, { pos: 7, ids: ['g', 'f'], deleted: true }, 10);
    expect([disjoint.extended, disjoint.ancestors]).toEqual([[], ['f']]);
    // A path whose oldest rev (3-y) is a leaf: it extends it and keeps the leaf's history below.
    const short = mergePath(tree, { pos: 4, ids: ['z', 'y'], deleted: false }, 3);
    expect([short.extended, short.ancestors]).toEqual([[tree[1]], ['y', 'x']]);
    expect(mergePath(tree, { pos: 4, ids: ['z', 'y'], deleted: false }, 1).ancestors).toEqual([]);
  });

  it('continues a path below its oldest rev with the longest history a branch keeps there', () => {
    // Both leaves hold 2-b; the longer branch was stemmed past 1-a, the shorter one keeps it.
    const tree = [b(3, 'y', ['b', 'a']), b(4, 'x', ['w', 'b'])];
    expect(mergePath(tree, { pos: 3, ids: ['z', 'b'], deleted: false }, 10).ancestors).toEqual(['b', 'a']);
    expect(mergePath([...tree].reverse(), { pos: 3, ids: ['z', 'b'], deleted: false }, 10).ancestors).toEqual(['b', 'a']);
  });
});
