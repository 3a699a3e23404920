import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../client/errors';
import { MODIFICATION_TYPES } from '../../../proto/enums';
import { versionsOf } from '../../../client/internal/update-versions';

const { PUT, INSERT, REMOVE, REMOVE_RANGE } = MODIFICATION_TYPES;
const text = (vs: ReturnType<typeof versionsOf>) => vs.map((v) => (v === null ? null : v.toString()));

describe('versionsOf', () => {
  it('gives the PUTs and INSERTs consecutive sequences from the first one, in order, and removes none', () => {
    const types = Uint8Array.of(PUT, REMOVE, INSERT, REMOVE_RANGE, PUT);
    expect(text(versionsOf({ sequences: [], firstSequence: '41' }, types, '7'))).toEqual(['7.41', null, '7.42', null, '7.43']);
  });

  it('counts past 2^53 exactly when the first sequence is that long', () => {
    const types = Uint8Array.of(PUT, PUT);
    expect(text(versionsOf({ sequences: [], firstSequence: '18446744073709551614' }, types, '1'))).toEqual(['1.18446744073709551614', '1.18446744073709551615']);
    expect(text(versionsOf({ sequences: [], firstSequence: '999999999999999' }, types, '1'))).toEqual(['1.999999999999999', '1.1000000000000000']);
  });

  it('reads the earlier answer, one sequence per modification', () => {
    const types = Uint8Array.of(PUT, REMOVE, INSERT);
    expect(text(versionsOf({ sequences: ['5', '', '9'], firstSequence: '' }, types, '3'))).toEqual(['3.5', null, '3.9']);
  });

  it('needs no sequence for an update of removes only', () => {
    expect(versionsOf({ sequences: [], firstSequence: '' }, Uint8Array.of(REMOVE, REMOVE_RANGE), '3')).toEqual([null, null]);
  });

  it('fails with ServiceError SERVICE_ERROR on an answer it cannot read', () => {
    const missing = () => versionsOf({ sequences: [], firstSequence: '' }, Uint8Array.of(REMOVE, PUT), '3');
    expect(missing).toThrow(ServiceError);
    expect(missing).toThrow('the store answered no sequence for modification 1');
    const short = () => versionsOf({ sequences: ['1'], firstSequence: '' }, Uint8Array.of(PUT, PUT), '3');
    expect(short).toThrow('the store answered 1 sequences for 2 modifications');
    try {
      short();
    } catch (err) {
      expect((err as ServiceError).code).toBe('SERVICE_ERROR');
    }
  });
});
