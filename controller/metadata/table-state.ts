/**
 * The lifecycle of a key-value table as an explicit transition table (as Pravega's KVT state machine):
 *
 * ```
 * CREATING ──▶ ACTIVE ──▶ DELETING ──▶ (removed)
 *     └───────────────────────▲
 * ```
 *
 * CREATING: metadata and placement are persisted, segments may not all exist yet.
 * ACTIVE: every partition's segment exists on its store; clients may route to it.
 * DELETING: segments are being removed; the name stays taken until the metadata is removed.
 * A table left CREATING or DELETING by a crash is finished by the controller's resumer.
 */
import type { TableStateName } from '../../proto/messages';

/** A persisted state of a table. */
export type TableState = TableStateName;

/** The pseudo-state after DELETING: the table's metadata no longer exists. */
export const REMOVED = 'REMOVED' as const;

/** Where a table may go next: a persisted state, or removal. */
export type TableStateTarget = TableState | typeof REMOVED;

/** The transition table: every legal move, and no other. */
export const TABLE_STATE_TRANSITIONS: Readonly<Record<TableState, readonly TableStateTarget[]>> = Object.freeze({
  CREATING: Object.freeze(['ACTIVE', 'DELETING'] as const),
  ACTIVE: Object.freeze(['DELETING'] as const),
  DELETING: Object.freeze([REMOVED] as const),
});

/** Thrown for a transition the table does not list: always a controller bug, never bad input. */
export class IllegalTableStateTransitionError extends Error {
  override readonly name = 'IllegalTableStateTransitionError';
  constructor(
    readonly table: string,
    readonly from: TableState,
    readonly to: TableStateTarget,
  ) {
    super(`table ${table} cannot go from ${from} to ${to}; allowed from ${from}: ${TABLE_STATE_TRANSITIONS[from].join(', ')}`);
  }
}

/** True when `from → to` is listed in {@link TABLE_STATE_TRANSITIONS}. */
export function isLegalTransition(from: TableState, to: TableStateTarget): boolean {
  return TABLE_STATE_TRANSITIONS[from]?.includes(to) ?? false;
}

/**
 * Refuses an illegal transition.
 * @throws {@link IllegalTableStateTransitionError} when `from → to` is not in the table.
 */
export function assertTransition(table: string, from: TableState, to: TableStateTarget): void {
  if (!isLegalTransition(from, to)) throw new IllegalTableStateTransitionError(table, from, to);
}
