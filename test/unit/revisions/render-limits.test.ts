/** The limits of a render's parts, checked before anything is written (the suite checks the others). */
import { describe, expect, it } from 'vitest';
import { InMemoryKeyValueTable, MAX_PART_NAME_LENGTH, MAX_RENDER_PARTS, PageRevisionStore, Serializers } from '../../../client';
import { expectInvalid, familyKeys, T0, tidAt } from '../../suites/revisions-context';

function freshStore() {
  const table = new InMemoryKeyValueTable({ keySerializer: Serializers.bytes, valueSerializer: Serializers.bytes, partitionCount: 2, name: 'memory/limits' });
  return { table, store: new PageRevisionStore(table) };
}

const partsOf = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, String(i)]));

describe('PageRevisionStore part limits', () => {
  it('takes MAX_RENDER_PARTS parts and refuses one more, naming the count and the limit, writing nothing', async () => {
    const { store, table } = freshStore();
    await store.putRender({ title: 'Full', rev: 1, tid: tidAt(T0), value: 'v', parts: partsOf(MAX_RENDER_PARTS) });
    expect(Object.keys((await store.getLatest('Full'))!.parts)).toHaveLength(MAX_RENDER_PARTS);
    await expectInvalid(
      store.putRender({ title: 'P', rev: 1, tid: tidAt(T0), value: 'v', parts: partsOf(MAX_RENDER_PARTS + 1) }),
      `parts has ${MAX_RENDER_PARTS + 1} parts; the maximum is ${MAX_RENDER_PARTS}`,
    );
    await expectInvalid(
      store.putRenders([{ title: 'P', rev: 2, value: 'v', parts: partsOf(MAX_RENDER_PARTS + 1) }]),
      `renders[0]: parts has ${MAX_RENDER_PARTS + 1} parts; the maximum is ${MAX_RENDER_PARTS}`,
    );
    expect(await familyKeys(table, 'P')).toEqual([]);
  });

  it('takes a part name of MAX_PART_NAME_LENGTH bytes and refuses a longer one', async () => {
    const { store, table } = freshStore();
    const name = 'é'.repeat(MAX_PART_NAME_LENGTH / 2);
    await store.putRender({ title: 'Named', rev: 1, tid: tidAt(T0), value: 'v', parts: { [name]: 'x' } });
    expect((await store.getLatest('Named'))!.parts).toEqual({ [name]: 'x' });
    await expectInvalid(
      store.putRender({ title: 'P', rev: 1, tid: tidAt(T0), value: 'v', parts: { [name + 'x']: 'x' } }),
      `part name ${JSON.stringify(name.slice(0, 40))}… is ${MAX_PART_NAME_LENGTH + 1} bytes; the maximum is ${MAX_PART_NAME_LENGTH}`,
    );
    expect(await familyKeys(table, 'P')).toEqual([]);
  });
});
