/**
 * The `node` flags a segment store runs with. `kvt cluster`, the benchmark, the test harness, the
 * Dockerfile and the `kvt` launcher's shebang start stores with them; a store started without them
 * logs a warning (they cannot be set once the process runs: V8 sizes its heap at start).
 *
 * `--initial-old-space-size=128`: V8 sizes the old generation from the live heap, which is small for a
 * store (~11 MiB), and counts the external memory (Buffers) allocated since the last full GC against
 * it. Under a write load a store allocates tens of MiB of Buffers a second (requests, chunk records),
 * so V8 ran a full mark-compact every 100–150 ms, each one promoting the requests in flight, which
 * kept the cycle going. Starting with a 128 MiB old generation made them a few per minute: W4 in
 * alternating runs went ~14% faster for ~18% less store CPU per entry. It reserves nothing; it only
 * moves the point at which V8 first collects.
 */
export const SEGMENT_STORE_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=128'];

/** The node flags to start `kvt <args>` with: the store's for `segmentstore`, none for the rest. */
export function nodeFlagsFor(args: readonly string[]): readonly string[] {
  return args[0] === 'segmentstore' ? SEGMENT_STORE_NODE_FLAGS : [];
}

/** The flags of {@link SEGMENT_STORE_NODE_FLAGS} that `execArgv` (this process's node flags) lacks. */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv, wanted: readonly string[] = SEGMENT_STORE_NODE_FLAGS): string[] {
  const given = execArgv.map((a) => a.split('=')[0].replace(/_/g, '-'));
  return wanted.filter((flag) => !given.includes(flag.split('=')[0]));
}
