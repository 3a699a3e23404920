import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../harness/process';

/**
 * Lint's import-x/no-cycle skips `import type`, since types are gone at run time. A cycle of types
 * still ties two files together (bench/*\/report.ts took its result types from run.ts, which imports
 * the report), so this looks at every relative import and re-export of the sources, types included.
 */
const SOURCE_DIRS = ['bench', 'bin', 'client', 'controller', 'couch', 'proto', 'scripts', 'segmentstore', 'server-kit'];
const SKIP = new Set(['node_modules', 'dist', 'generated', 'results']);
const IMPORT = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"](\.{1,2}\/[^'"]+)['"]/gm;

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP.has(entry.name)) sources(p, out);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function resolve(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  return [`${base}.ts`, path.join(base, 'index.ts'), base].find((p) => p.endsWith('.ts') && fs.existsSync(p));
}

/** The relative module specifiers that `text` imports or re-exports from, types included. */
function specifiers(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => m[1]);
}

/** The import graph: file → the files it imports (relative imports only). */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const spec of specifiers(fs.readFileSync(file, 'utf8'))) {
      const target = resolve(file, spec);
      if (target) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(path.relative(REPO_ROOT, w));
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('imports', () => {
  it('form no cycle among the sources, type-only imports included', () => {
    const files = SOURCE_DIRS.flatMap((d) => sources(path.join(REPO_ROOT, d)));
    const graph = importGraph(files);
    // The graph was read: the client's entry imports its parts.
    expect(graph.get(path.join(REPO_ROOT, 'client', 'index.ts'))!.length).toBeGreaterThan(10);
    expect(cycles(graph)).toEqual([]);
  });

  it('reads type imports, re-exports and multi-line imports, and finds a cycle of them', () => {
    const text = [
      "import type { DocumentsBenchResult } from './run';",
      "import {\n  a,\n  b,\n} from '../core/keys';",
      "export type { Scale } from './scale';",
      "export * from './all';",
      "import './side-effect';",
      "import * as fs from 'node:fs';",
      'const s = \'import x from "./not-an-import"\';',
    ].join('\n');
    expect(specifiers(text)).toEqual(['./run', '../core/keys', './scale', './all', './side-effect']);
    const a = path.join(REPO_ROOT, 'a.ts');
    const b = path.join(REPO_ROOT, 'b.ts');
    const c = path.join(REPO_ROOT, 'c.ts');
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, []],
        ]),
      ),
    ).toEqual([]);
  });
});
