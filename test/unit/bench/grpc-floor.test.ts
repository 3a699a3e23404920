/** The revisions benchmark's floor (bench/revisions/grpc-floor.ts): a bare grpc-js stream in another process answers what is asked. */
import { describe, expect, it } from 'vitest';
import { startGrpcFloor } from '../../../bench/revisions/grpc-floor';

describe('grpc-js floor of the mixed load', () => {
  it('answers page reads (with no text when none is asked for) and writes, concurrently, then stops its server', async () => {
    const sizes = new Map([
      ['a', 10],
      ['b', 70_000],
      ['c', 0],
    ]);
    const asked: string[] = [];
    const floor = await startGrpcFloor((title) => {
      asked.push(title);
      return sizes.get(title) ?? 0;
    });
    try {
      const reads = await Promise.all(['a', 'b', 'c', 'b', 'a'].map((t) => floor.latest(t)));
      // A read is true when the answer carried text: 'c' asks for none.
      expect(reads).toEqual([true, true, false, true, true]);
      expect(asked).toEqual(['a', 'b', 'c', 'b', 'a']);
      await Promise.all([floor.put({ title: 'a', value: 'x'.repeat(100_000) }), floor.put({ title: 'b', value: 'é' })]);
    } finally {
      await floor.close();
    }
  }, 30_000);
});
