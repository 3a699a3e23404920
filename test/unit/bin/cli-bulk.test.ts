/** Pure parts of `kvt import`: line parsing and the terminal progress bar. */
import { describe, expect, it } from 'vitest';
import { parseImportLine, ProgressBar } from '../../../bin/cli-bulk';
import { parseTablePath } from '../../../bin/cli';

function fakeTerminal(isTTY: boolean): { stream: NodeJS.WriteStream; written: string[] } {
  const written: string[] = [];
  const stream = { isTTY, write: (s: string) => written.push(s) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

describe('parseImportLine', () => {
  it('reads family, key and value, turning non-string values into JSON', () => {
    expect(parseImportLine('{"family":"f","key":"k","value":"v"}', 1)).toEqual({ family: 'f', key: 'k', value: 'v' });
    expect(parseImportLine('{"key":"k","value":{"a":[1]}}', 1)).toEqual({ family: null, key: 'k', value: '{"a":[1]}' });
  });

  it('names the line and the field of a bad record', () => {
    expect(() => parseImportLine('nope', 7)).toThrow('line 7: not valid JSON');
    expect(() => parseImportLine('[1]', 2)).toThrow('line 2: expected a JSON object');
    expect(() => parseImportLine('{"key":1,"value":"v"}', 3)).toThrow('line 3: "key" must be a string');
    expect(() => parseImportLine('{"key":"k"}', 4)).toThrow('line 4: "value" is missing');
    expect(() => parseImportLine('{"family":3,"key":"k","value":"v"}', 5)).toThrow('line 5: "family" must be a string or null');
  });
});

describe('ProgressBar', () => {
  it('draws a bar with the percentage and entry count on a terminal', () => {
    const { stream, written } = fakeTerminal(true);
    const bar = new ProgressBar(200, stream);
    bar.update(50, 1234, true);
    expect(written.at(-1)).toBe(`\r[${'#'.repeat(8)}${'-'.repeat(22)}]  25%  1,234 entries`);
    bar.finish(5000);
    expect(written.at(-2)).toBe(`\r[${'#'.repeat(30)}] 100%  5,000 entries`);
    expect(written.at(-1)).toBe('\n');
  });

  it('writes nothing when stderr is not a terminal', () => {
    const { stream, written } = fakeTerminal(false);
    const bar = new ProgressBar(10, stream);
    bar.update(5, 1, true);
    bar.finish(1);
    expect(written).toEqual([]);
  });
});

describe('parseTablePath', () => {
  it('splits SCOPE/TABLE and rejects anything else', () => {
    expect(parseTablePath('wiki/pages')).toEqual({ scope: 'wiki', table: 'pages' });
    for (const bad of ['wiki', '/pages', 'wiki/', 'a/b/c']) expect(() => parseTablePath(bad)).toThrow(`table must be written SCOPE/TABLE; got "${bad}"`);
  });
});
