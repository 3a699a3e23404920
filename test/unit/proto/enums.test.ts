import { describe, expect, it } from 'vitest';
import * as protobuf from 'protobufjs';
import { CONDITION_KIND_NAMES, CONDITION_KINDS, enumName, enumNumber, MODIFICATION_TYPE_NAMES, MODIFICATION_TYPES } from '../../../proto/enums';
import { messageType } from '../../harness/random-messages';

/** The tables of proto/enums.ts by the full name of their enum. */
const TABLES: Record<string, { names: readonly string[]; numbers: Readonly<Record<string, number>> }> = {
  '.kvt.v1.Modification.Type': { names: MODIFICATION_TYPE_NAMES, numbers: MODIFICATION_TYPES },
  '.kvt.v1.Condition.Kind': { names: CONDITION_KIND_NAMES, numbers: CONDITION_KINDS },
};

/** Every enum of the loaded `.proto` files. */
function loadedEnums(ns: protobuf.NamespaceBase = messageType('Modification').root): protobuf.Enum[] {
  return ns.nestedArray.flatMap((n) => (n instanceof protobuf.Enum ? [n] : n instanceof protobuf.Namespace ? loadedEnums(n) : []));
}

describe('proto/enums', () => {
  it('has a table for every enum of the loaded .proto, with its names and numbers', () => {
    const enums = loadedEnums();
    expect(enums.map((e) => e.fullName).sort()).toEqual(Object.keys(TABLES).sort());
    for (const e of enums) {
      const table = TABLES[e.fullName];
      expect(Object.fromEntries(table.names.map((name, n) => [name, n])), e.fullName).toEqual(e.values);
      expect({ ...table.numbers }, e.fullName).toEqual(e.values);
    }
  });

  it('names a number the table does not know by the number itself, as the loader does', () => {
    expect([enumName(MODIFICATION_TYPE_NAMES, 3), enumName(MODIFICATION_TYPE_NAMES, 4), enumName(CONDITION_KIND_NAMES, -1)]).toEqual(['REMOVE_RANGE', 4, -1]);
  });

  it('numbers a name, passes a number through, and gives 0 (the default) for anything else', () => {
    expect([enumNumber(CONDITION_KINDS, 'VERSION'), enumNumber(CONDITION_KINDS, 7), enumNumber(CONDITION_KINDS, 'nope')]).toEqual([2, 7, 0]);
    expect([enumNumber(MODIFICATION_TYPES, 'toString'), enumNumber(MODIFICATION_TYPES, undefined), enumNumber(MODIFICATION_TYPES, null)]).toEqual([0, 0, 0]);
  });
});
