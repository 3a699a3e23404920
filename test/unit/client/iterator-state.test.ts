import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../client';
import { decodeState, encodeState, IteratorState } from '../../../client/internal/iterator-state';

const state: IteratorState = {
  table: 'wiki/pages', family: 'Main_Page', entries: true, maxKeysAtOnce: 7,
  prefix: Buffer.from('rev-'), from: Buffer.from([0, 1]), to: Buffer.from([0xff]), toInclusive: true, reverse: true,
  after: Buffer.from([0x80, 0x00, 0x7f]), done: false,
};

describe('iterator state tokens', () => {
  it('round-trip every option and the position', () => {
    const token = encodeState(state);
    expect(decodeState(token, 'wiki/pages', 'Main_Page', true)).toEqual(state);
  });

  it('round-trip the start and the end of an iteration', () => {
    const fresh = { ...state, after: undefined, prefix: Buffer.alloc(0) };
    expect(decodeState(encodeState(fresh), 'wiki/pages', 'Main_Page', true)).toEqual(fresh);
    expect(decodeState(encodeState({ ...state, done: true }), 'wiki/pages', 'Main_Page', true).done).toBe(true);
  });

  it('reject a token with one character altered', () => {
    const token = encodeState(state);
    for (const at of [0, 5, Math.floor(token.length / 2), token.length - 1]) {
      const c = token[at] === 'A' ? 'B' : 'A';
      const altered = token.slice(0, at) + c + token.slice(at + 1);
      expect(() => decodeState(altered, 'wiki/pages', 'Main_Page', true)).toThrow('iterator state (fromState) is malformed or was altered');
    }
  });

  it.each(['', 'garbage', '.', 'abc.def', 'eyJ2IjoxfQ.x'])('reject the malformed token %j with InvalidArgumentError', (token) => {
    expect(() => decodeState(token, 'wiki/pages', 'Main_Page', true)).toThrow(InvalidArgumentError);
  });

  it('reject a token of another table, family or kind of iterator', () => {
    const token = encodeState(state);
    expect(() => decodeState(token, 'wiki/other', 'Main_Page', true)).toThrow('belongs to another iteration (table wiki/pages, family "Main_Page")');
    expect(() => decodeState(token, 'wiki/pages', 'Other', true)).toThrow(InvalidArgumentError);
    expect(() => decodeState(token, 'wiki/pages', 'Main_Page', false)).toThrow('belongs to a entry iterator');
  });
});
