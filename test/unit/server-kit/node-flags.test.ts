import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { missingNodeFlags, SEGMENT_STORE_NODE_FLAGS } from '../../../server-kit/node-flags';

const REPO = path.resolve(__dirname, '..', '..', '..');

describe('SEGMENT_STORE_NODE_FLAGS', () => {
  it('are the flags of the kvt launcher shebang (npx kvt segmentstore runs with them)', () => {
    const shebang = fs.readFileSync(path.join(REPO, 'bin', 'kvt.js'), 'utf8').split('\n')[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${SEGMENT_STORE_NODE_FLAGS.join(' ')}`);
  });

  it('are the flags of the Dockerfile entry point', () => {
    const dockerfile = fs.readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`ENTRYPOINT ["node", ${SEGMENT_STORE_NODE_FLAGS.map((f) => JSON.stringify(f)).join(', ')}, "bin/kvt.js"]`);
  });
});

describe('missingNodeFlags', () => {
  it('names the wanted flags a command line lacks, whatever value or spelling it gives the others', () => {
    expect(missingNodeFlags([])).toEqual([...SEGMENT_STORE_NODE_FLAGS]);
    expect(missingNodeFlags(['--initial-old-space-size=256'], ['--initial-old-space-size=128'])).toEqual([]);
    expect(missingNodeFlags(['--initial_old_space_size=64'], ['--initial-old-space-size=128'])).toEqual([]);
    expect(missingNodeFlags(['--cpu-prof'], ['--initial-old-space-size=128', '--cpu-prof'])).toEqual(['--initial-old-space-size=128']);
  });
});
