/**
 * The wire numbers of the `kvt.v1` enums, for the hand-written codecs: name → number to encode,
 * number → name to decode. The names come from the generated code (proto/generated/, in the order
 * the `.proto` declares them) rather than from a hand-kept list; test/unit/proto/enums.test.ts checks
 * every table against the enums of the loaded `.proto`, numbers included. Why not read the loaded
 * `.proto` here: storage and the in-memory table use these tables and load no `.proto` at all.
 */
import { _kvt_v1_Condition_Kind } from './generated/kvt/v1/Condition';
import { _kvt_v1_Modification_Type } from './generated/kvt/v1/Modification';
import type { ConditionKind, ModificationType } from './messages';

// The tables are readonly by type only: V8 reads frozen objects and arrays measurably slower on the
// codecs' hot paths.

/** The names of an enum by wire number: its values number from 0 without gaps, in declaration order. */
function namesOf<N extends string>(generated: Record<string, N>): readonly N[] {
  return Object.values(generated);
}

/** Name → wire number. */
function numbersOf<N extends string>(names: readonly N[]): Readonly<Record<N, number>> {
  return Object.fromEntries(names.map((name, n) => [name, n])) as Record<N, number>;
}

/** `kvt.v1.Modification.Type` names by wire number. */
export const MODIFICATION_TYPE_NAMES: readonly ModificationType[] = namesOf(_kvt_v1_Modification_Type);
/** Wire numbers of `kvt.v1.Modification.Type`. */
export const MODIFICATION_TYPES: Readonly<Record<ModificationType, number>> = numbersOf(MODIFICATION_TYPE_NAMES);

/** `kvt.v1.Condition.Kind` names by wire number. */
export const CONDITION_KIND_NAMES: readonly ConditionKind[] = namesOf(_kvt_v1_Condition_Kind);
/** Wire numbers of `kvt.v1.Condition.Kind`. */
export const CONDITION_KINDS: Readonly<Record<ConditionKind, number>> = numbersOf(CONDITION_KIND_NAMES);

/** The name of enum value `n`, or `n` itself when `names` has none (as the loader decodes it). */
export function enumName<N extends string>(names: readonly N[], n: number): N | number {
  return n >= 0 && n < names.length ? names[n] : n;
}

/** The wire number of `v`: a number as it is, a name by `numbers`, anything else 0 (the default). */
export function enumNumber<N extends string>(numbers: Readonly<Record<N, number>>, v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return 0;
  const n = (numbers as Record<string, unknown>)[v];
  // Not `|| 0` on the lookup alone: an inherited name ("toString") must not pass as a number.
  return typeof n === 'number' ? n : 0;
}
