/** Pure parts of `kvt import`: line parsing and the terminal progress bar. */
import { describe, expect, it } from 'vitest';
import { InFlight, parseImportLine, ProgressBar } from '../../../bin/cli-bulk';
import { MAX_KEY_LENGTH, MAX_VALUE_LENGTH } from '../../../client';
import { parseTablePath } from '../../../bin/cli';

function fakeTerminal(isTTY: boolean): { stream: NodeJS.WriteStream; written: string[] } {
  const written: string[] = [];
  const stream = { isTTY, write: (s: string) => written.push(s) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

describe('parseImportLine', () => {
  it('reads family, key and value as bytes, turning non-string values into JSON', () => {
    expect(parseImportLine('{"family":"f","key":"k","value":"v"}', 1)).toEqual({ family: 'f', key: Buffer.from('k'), value: Buffer.from('v') });
    expect(parseImportLine('{"key":"k","value":{"a":[1]}}', 1)).toEqual({ family: null, key: Buffer.from('k'), value: Buffer.from('{"a":[1]}') });
    expect(parseImportLine('{"key":"é","value":""}', 1)).toEqual({ family: null, key: Buffer.from('c3a9', 'hex'), value: Buffer.alloc(0) });
  });

  it('reads binary keys and values from key_b64 / value_b64', () => {
    expect(parseImportLine('{"family":"f","key_b64":"/wE=","value_b64":"AMMo/w=="}', 1)).toEqual({ family: 'f', key: Buffer.from([0xff, 1]), value: Buffer.from([0, 0xc3, 0x28, 0xff]) });
    expect(() => parseImportLine('{"key":"k","key_b64":"aw==","value":"v"}', 2)).toThrow('line 2: give "key" or "key_b64", not both');
    expect(() => parseImportLine('{"key_b64":"!!","value":"v"}', 3)).toThrow('line 3: "key_b64" must be a base64 string');
  });

  it('checks the limits and the text before anything is sent, naming the line and the field', () => {
    expect(() => parseImportLine('{"key":"","value":"v"}', 4)).toThrow('line 4: "key" is empty');
    expect(() => parseImportLine('{"family":"","key":"k","value":"v"}', 5)).toThrow('line 5: "family" must be a non-empty string or null');
    expect(() => parseImportLine(JSON.stringify({ family: 'ff', key: 'k'.repeat(MAX_KEY_LENGTH - 1), value: 'v' }), 6)).toThrow(
      `line 6: "key" with its family is ${MAX_KEY_LENGTH + 1} bytes; the maximum is ${MAX_KEY_LENGTH}`,
    );
    expect(() => parseImportLine(JSON.stringify({ key: 'k', value: 'v'.repeat(MAX_VALUE_LENGTH + 1) }), 7)).toThrow(
      `line 7: "value" is ${MAX_VALUE_LENGTH + 1} bytes; the maximum is ${MAX_VALUE_LENGTH}`,
    );
    // Two lone surrogates would both become U+FFFD: distinct keys merged.
    expect(() => parseImportLine('{"key":"a\\ud800","value":"v"}', 8)).toThrow('line 8: "key" holds a lone UTF-16 surrogate (not valid UTF-8 text; use "key_b64")');
  });

  it('names the line and the field of a bad record', () => {
    expect(() => parseImportLine('nope', 7)).toThrow('line 7: not valid JSON');
    expect(() => parseImportLine('[1]', 2)).toThrow('line 2: expected a JSON object');
    expect(() => parseImportLine('{"key":1,"value":"v"}', 3)).toThrow('line 3: "key" must be a string');
    expect(() => parseImportLine('{"key":"k"}', 4)).toThrow('line 4: "value" is missing');
    expect(() => parseImportLine('{"family":3,"key":"k","value":"v"}', 5)).toThrow('line 5: "family" must be a non-empty string or null');
  });
});

describe('InFlight', () => {
  it('sends a later write of a key only once the earlier one settled, whatever their speeds', async () => {
    const inFlight = new InFlight();
    const order: string[] = [];
    let finishFirst!: () => void;
    await inFlight.add(['k'], 1, 1, 1, () => {
      order.push('send 1');
      return new Promise<void>(
        (r) =>
          (finishFirst = () => {
            order.push('done 1');
            r();
          }),
      );
    });
    const second = inFlight.add(['k'], 2, 2, 1, async () => {
      order.push('send 2');
    });
    await inFlight.add(['other'], 3, 3, 1, async () => {
      order.push('send 3');
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['send 1', 'send 3']);
    finishFirst();
    await second;
    await inFlight.drain();
    expect(order).toEqual(['send 1', 'send 3', 'done 1', 'send 2']);
    expect(inFlight.written).toBe(3);
  });
});

describe('ProgressBar (cli-progress)', () => {
  /** What a terminal shows of `written`: the text, without the cursor and line-wrap control sequences. */
  const shown = (written: string[]) => written.join('').replace(/\x1b(?:\[[0-9;?]*[A-Za-z]|[78])/g, '');

  it('draws a bar with the percentage and entry count on a terminal, from the first update, and ends its line', () => {
    const { stream, written } = fakeTerminal(true);
    const bar = new ProgressBar(200, stream);
    expect(written).toEqual([]);
    bar.update(50, 1234);
    expect(shown(written)).toBe(`[${'#'.repeat(8)}${'-'.repeat(22)}]  25%  1,234 entries`);
    written.length = 0;
    bar.finish(5000);
    expect(shown(written)).toBe(`[${'#'.repeat(30)}] 100%  5,000 entries\n`);
    written.length = 0;
    bar.abandon();
    expect(written).toEqual([]);
  });

  it('names what it counts, and ends where it stands when abandoned', () => {
    const { stream, written } = fakeTerminal(true);
    const bar = new ProgressBar(10, stream, 'revisions');
    bar.update(1, 1);
    bar.abandon();
    expect(shown(written)).toBe(`[###${'-'.repeat(27)}]  10%  1 revisions\n`);
  });

  it('writes nothing when stderr is not a terminal', () => {
    const { stream, written } = fakeTerminal(false);
    const bar = new ProgressBar(10, stream);
    bar.update(5, 1);
    bar.finish(1);
    bar.abandon();
    expect(written).toEqual([]);
  });
});

describe('parseTablePath', () => {
  it('splits SCOPE/TABLE and rejects anything else', () => {
    expect(parseTablePath('wiki/pages')).toEqual({ scope: 'wiki', table: 'pages' });
    for (const bad of ['wiki', '/pages', 'wiki/', 'a/b/c']) expect(() => parseTablePath(bad)).toThrow(`table must be written SCOPE/TABLE; got "${bad}"`);
  });
});
