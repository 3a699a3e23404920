/**
 * Mutation checks (`npm run mutants [-- ID …]`): does the test suite notice when a guard of the code
 * is taken away? Each mutant in scripts/mutants.json names one line that guards a promise (a
 * condition checked against the right segment, a read that must not be cached, a feed position that
 * must not pass its clock …), the change that removes the guard, and the tests that must then fail.
 * A mutant that no test kills is a blind spot of the checkers: write the test that kills it.
 *
 * The mutants are applied to a copy of the tracked files in a temporary folder (the working tree is
 * never touched, so an interrupted run leaves nothing behind), one at a time; a mutant of server
 * code that integration tests must see rebuilds the copy's dist before them and after.
 * test/unit/mutants.test.ts checks that every mutant still names exactly one place of its file.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** One mutant of scripts/mutants.json. */
export interface Mutant {
  id: string;
  /** What the mutated line guards, in a sentence. */
  guards: string;
  /** The file, relative to the repository's root. */
  file: string;
  /** Text that occurs exactly once in the file … */
  from: string;
  /** … and what replaces it. */
  to: string;
  /** Test files or folders, at least one of which must fail. */
  tests: string[];
}

/** What one mutant's run showed. */
interface Outcome {
  mutant: Mutant;
  killed: boolean;
  /** The first failing test, or why the run counts as killed. */
  by: string;
  seconds: number;
}

/** Longest a mutant's tests may run (a mutant that hangs them counts as killed). */
const TEST_TIMEOUT_MS = 15 * 60_000;

/** The list: scripts/mutants.json, or the file KVT_MUTANTS_LIST names (a list being drafted). */
export function loadMutants(root: string, list = process.env.KVT_MUTANTS_LIST): Mutant[] {
  return JSON.parse(fs.readFileSync(list || path.join(root, 'scripts', 'mutants.json'), 'utf8')) as Mutant[];
}

/** Why `m` cannot be applied to the tree at `root` (its text is not there exactly once), or undefined. */
export function mutantProblem(root: string, m: Mutant): string | undefined {
  const file = path.join(root, m.file);
  if (!fs.existsSync(file)) return `${m.id}: ${m.file} does not exist`;
  const count = fs.readFileSync(file, 'utf8').split(m.from).length - 1;
  if (count !== 1) return `${m.id}: its text occurs ${count} times in ${m.file}, not once`;
  if (m.tests.length === 0) return `${m.id}: names no tests`;
  for (const t of m.tests) if (!fs.existsSync(path.join(root, t))) return `${m.id}: test path ${t} does not exist`;
  return undefined;
}

/** A mutant of code the servers run, whose integration tests start servers from dist. */
function needsBuild(m: Mutant): boolean {
  return !m.file.startsWith('client/') && m.tests.some((t) => t.startsWith('test/integration'));
}

/** Copies the tracked files of `root` into a fresh folder beside a link to its ../shared; returns the copy's root. */
function copyTree(root: string): { tree: string; dispose: () => void } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'kvt-mutants-'));
  const tree = path.join(base, 'kvt');
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    const from = path.join(root, f);
    if (!fs.existsSync(from)) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(tree, f)), { recursive: true });
    fs.copyFileSync(from, path.join(tree, f));
  }
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(tree, 'node_modules'), 'dir');
  const shared = path.join(path.dirname(root), 'shared');
  if (fs.existsSync(shared)) fs.symlinkSync(shared, path.join(base, 'shared'), 'dir');
  return { tree, dispose: () => fs.rmSync(base, { recursive: true, force: true }) };
}

/**
 * Compiles the copy into its dist. A mutant need not type-check (`if (false)` narrows what follows):
 * tsc still writes the JavaScript, which is what the servers run, so its type errors are not fatal.
 */
function build(tree: string): void {
  const tsc = spawnSync(process.execPath, [path.join(tree, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: tree, encoding: 'utf8' });
  if (tsc.error) throw tsc.error;
  if (!fs.existsSync(path.join(tree, 'dist', 'bin', 'kvt.js'))) throw new Error(`tsc wrote no dist:\n${tsc.stdout}${tsc.stderr}`);
}

/** The name of the first failing test in vitest's JSON report, if any. */
function firstFailure(report: string): string | undefined {
  if (!fs.existsSync(report)) return undefined;
  const json = JSON.parse(fs.readFileSync(report, 'utf8')) as { testResults?: { assertionResults?: { status: string; fullName: string }[] }[] };
  for (const file of json.testResults ?? []) for (const a of file.assertionResults ?? []) if (a.status === 'failed') return a.fullName;
  return undefined;
}

/**
 * Kills the processes still running from the copy at `tree` (a mutant can stop `kvt cluster` from
 * stopping its children, or a test from stopping its servers; they would hold ports and CPU through the
 * rest of the run); resolves how many. Reads /proc, so it finds nothing where there is none.
 */
export function killLeftovers(tree: string): number {
  let killed = 0;
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (!cmdline.split('\0').some((arg) => arg.startsWith(tree + path.sep))) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // gone meanwhile
    }
  }
  return killed;
}

function runMutant(tree: string, m: Mutant): Outcome {
  const started = Date.now();
  const file = path.join(tree, m.file);
  const original = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, original.replace(m.from, m.to));
  try {
    if (needsBuild(m)) build(tree);
    const report = path.join(tree, '..', `${m.id}.json`);
    // --bail: the first failure decides (a mutant is killed once one test fails), so the rest is not run.
    const run = spawnSync(process.execPath, [path.join(tree, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...m.tests, '--bail=1', '--reporter=json', `--outputFile=${report}`], {
      cwd: tree,
      encoding: 'utf8',
      timeout: TEST_TIMEOUT_MS,
    });
    const seconds = Math.round((Date.now() - started) / 1000);
    if (run.error) return { mutant: m, killed: true, by: `the tests did not finish: ${run.error.message}`, seconds };
    const failed = firstFailure(report);
    if (run.status === 0) return { mutant: m, killed: false, by: '', seconds };
    return { mutant: m, killed: true, by: failed ?? `vitest exited ${run.status} (no failing test named: an error outside tests)`, seconds };
  } finally {
    const left = killLeftovers(tree);
    if (left > 0) console.log(`         ${m.id}: killed ${left} process(es) its tests left running`);
    fs.writeFileSync(file, original);
    // The servers of later mutants' integration tests start from dist: it must hold no mutant.
    if (needsBuild(m)) build(tree);
  }
}

function main(): void {
  const root = path.resolve(__dirname, '..', '..');
  const wanted = process.argv.slice(2);
  const all = loadMutants(root);
  const unknown = wanted.filter((id) => !all.some((m) => m.id === id));
  if (unknown.length > 0) throw new Error(`no such mutant: ${unknown.join(', ')} (see scripts/mutants.json)`);
  const mutants = wanted.length > 0 ? all.filter((m) => wanted.includes(m.id)) : all;
  const problems = mutants.map((m) => mutantProblem(root, m)).filter((p) => p !== undefined);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const { tree, dispose } = copyTree(root);
  const outcomes: Outcome[] = [];
  try {
    if (mutants.some((m) => m.tests.some((t) => t.startsWith('test/integration')))) build(tree);
    for (const m of mutants) {
      const o = runMutant(tree, m);
      outcomes.push(o);
      console.log(`${o.killed ? 'killed  ' : 'SURVIVED'} ${m.id} (${o.seconds} s)${o.killed ? `: ${o.by}` : `: nothing failed in ${m.tests.join(', ')}`}`);
    }
  } finally {
    dispose();
  }
  const survivors = outcomes.filter((o) => !o.killed);
  console.log(`\n${outcomes.length - survivors.length} of ${outcomes.length} mutants killed${survivors.length > 0 ? `; survived: ${survivors.map((o) => o.mutant.id).join(', ')}` : ''}`);
  if (survivors.length > 0) process.exitCode = 1;
}

if (require.main === module) main();
