import { describe, expect, it } from 'vitest';
import { assertTransition, IllegalTableStateTransitionError, isLegalTransition, REMOVED, TABLE_STATE_TRANSITIONS, TableState, TableStateTarget } from '../../../controller/metadata/table-state';

const STATES: TableState[] = ['CREATING', 'ACTIVE', 'DELETING'];
const TARGETS: TableStateTarget[] = [...STATES, REMOVED];
const LEGAL = new Set(['CREATING>ACTIVE', 'CREATING>DELETING', 'ACTIVE>DELETING', 'DELETING>REMOVED']);

describe('table state transitions', () => {
  it('lists exactly CREATING → ACTIVE | DELETING, ACTIVE → DELETING, DELETING → removed', () => {
    const listed = Object.entries(TABLE_STATE_TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => `${from}>${to}`));
    expect(new Set(listed)).toEqual(LEGAL);
  });

  it('accepts every listed transition and refuses every other pair', () => {
    for (const from of STATES) {
      for (const to of TARGETS) {
        const legal = LEGAL.has(`${from}>${to}`);
        expect(isLegalTransition(from, to), `${from} → ${to}`).toBe(legal);
        if (legal) expect(() => assertTransition('s/t', from, to)).not.toThrow();
        else expect(() => assertTransition('s/t', from, to)).toThrow(IllegalTableStateTransitionError);
      }
    }
  });

  it('names the table, both states and the allowed moves in the refusal', () => {
    let caught: unknown;
    try {
      assertTransition('wiki/pages', 'ACTIVE', 'CREATING');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(IllegalTableStateTransitionError);
    const err = caught as IllegalTableStateTransitionError;
    expect(err.message).toBe('table wiki/pages cannot go from ACTIVE to CREATING; allowed from ACTIVE: DELETING');
    expect([err.table, err.from, err.to]).toEqual(['wiki/pages', 'ACTIVE', 'CREATING']);
  });

  it('never allows a table to go back to CREATING or to leave DELETING except by removal', () => {
    for (const from of STATES) expect(isLegalTransition(from, 'CREATING')).toBe(false);
    expect(TABLE_STATE_TRANSITIONS.DELETING).toEqual([REMOVED]);
  });
});
