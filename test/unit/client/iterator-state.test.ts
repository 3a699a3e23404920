import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../client';
import { decodeState, encodeState, IteratorState, pageWithState } from '../../../client/internal/iterator-state';

const state: IteratorState = {
  table: 'wiki/pages',
  family: 'Main_Page',
  entries: true,
  maxKeysAtOnce: 7,
  prefix: Buffer.from('rev-'),
  from: Buffer.from([0, 1]),
  to: Buffer.from([0xff]),
  toInclusive: true,
  reverse: true,
  after: Buffer.from([0x80, 0x00, 0x7f]),
  done: false,
};

describe('a page with its state', () => {
  it('gives the token of the state as it was when the page was made, however the iteration moves on', () => {
    const moving: IteratorState = { ...state, done: false };
    const page = pageWithState([1, 2], moving);
    moving.after = Buffer.from([0xff, 0xff]);
    moving.done = true;
    expect(page.state).toBe(encodeState(state));
    expect(page.state).toBe(page.state);
  });

  it('carries its token when spread or serialized', () => {
    const page = pageWithState(['a'], state);
    expect({ ...page }).toEqual({ items: ['a'], state: encodeState(state) });
    expect(JSON.parse(JSON.stringify(page))).toEqual({ items: ['a'], state: encodeState(state) });
  });
});

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

  it('reject a token forged with a valid checksum but a field of the wrong type', () => {
    const good = { v: 1, t: 's/t', f: 'f', e: 0, n: 10, p: '', fr: '', to: '', ti: 0, r: 0, a: null, d: 0 };
    const forge = (fields: object) => {
      const payload = Buffer.from(JSON.stringify({ ...good, ...fields })).toString('base64url');
      return `${payload}.${createHash('sha256').update('kvt-iterator-state-v1').update(payload).digest('base64url').slice(0, 16)}`;
    };
    expect(decodeState(forge({}), 's/t', 'f', false).maxKeysAtOnce).toBe(10);
    for (const bad of [{ p: 5 }, { fr: null }, { to: '%%' }, { a: 7 }, { ti: 'yes' }, { r: 2 }, { d: true }, { e: '0' }, { n: '10' }]) {
      expect(() => decodeState(forge(bad), 's/t', 'f', false), JSON.stringify(bad)).toThrow('iterator state (fromState) is malformed or was altered');
    }
  });

  it('reject a token of another table, family or kind of iterator', () => {
    const token = encodeState(state);
    expect(() => decodeState(token, 'wiki/other', 'Main_Page', true)).toThrow('belongs to another iteration (table wiki/pages, family "Main_Page")');
    expect(() => decodeState(token, 'wiki/pages', 'Other', true)).toThrow(InvalidArgumentError);
    expect(() => decodeState(token, 'wiki/pages', 'Main_Page', false)).toThrow('belongs to a entry iterator');
  });
});
