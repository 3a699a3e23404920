import { describe, expect, it } from 'vitest';
import { SlabTextEncoder } from '../../../client/revisions/text-encoder';

describe('SlabTextEncoder', () => {
  it('gives the bytes Buffer.from gives: ASCII, Latin-1, the BMP, astral characters, a lone surrogate, empty', () => {
    const encoder = new SlabTextEncoder();
    const texts = ['', 'plain ASCII', 'Größe · naïve', '漢字 and — “quotes”', 'emoji 🦀 and 𝄞', 'lone \ud800 surrogate', 'x'.repeat(100_000)];
    for (const text of texts) expect(encoder.encode(text).equals(Buffer.from(text, 'utf8'))).toBe(true);
  });

  it('never changes a view it gave out, however many strings follow (they fill several slabs)', () => {
    const encoder = new SlabTextEncoder();
    const texts = Array.from({ length: 400 }, (_, i) => `${i}:${'é漢🦀'.repeat(1 + (i % 97) * 10)}`);
    const views = texts.map((t) => encoder.encode(t));
    const slabs = new Set(views.map((v) => v.buffer));
    expect(slabs.size).toBeGreaterThan(1);
    views.forEach((v, i) => expect(v.toString('utf8')).toBe(texts[i]));
  });

  it('encodes a string too long for a slab into a Buffer of its own, sized exactly', () => {
    const encoder = new SlabTextEncoder();
    const small = encoder.encode('before');
    const text = '漢'.repeat(400_000);
    const big = encoder.encode(text);
    expect(big.length).toBe(1_200_000);
    expect(big.buffer.byteLength).toBeLessThan(1_300_000);
    expect(big.buffer).not.toBe(small.buffer);
    expect(big.toString('utf8')).toBe(text);
    expect(small.toString('utf8')).toBe('before');
  });
});
