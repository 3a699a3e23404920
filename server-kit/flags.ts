/**
 * Command-line flags and `KVT_<COMPONENT>_<NAME>` environment variables for the server processes and
 * the `kvt` commands: one table of options per command; flags override the environment, which
 * overrides defaults. Node's own `util.parseArgs` splits the arguments into flags, values and
 * positionals; this module adds what it does not do: the environment, typed and bounded values, and
 * errors and `--help` in kvt's words.
 */
import { parseArgs } from 'node:util';

/** One option of a process: `--kebab-name` flag, `KVT_<PREFIX>_<ENV>` variable. */
export interface OptionSpec {
  /** Flag name without dashes, e.g. `data-dir`. */
  flag: string;
  /**
   * Environment suffix, e.g. `DATA_DIR` (with units where there are some: `_MS`, `_BYTES`); none for
   * an option that says what one command does (a key family, a limit), which a variable left in the
   * shell must not change.
   */
  env?: string;
  kind: 'string' | 'int' | 'bool';
  description: string;
  /** Shown in `--help`. */
  default?: string | number | boolean;
  /** Inclusive bounds for ints. */
  min?: number;
  max?: number;
  /**
   * An empty environment variable is refused instead of counting as unset. For tokens: an admin token
   * of `$ADMIN` with ADMIN unset would otherwise start a server that accepts every call.
   */
  emptyEnvRefused?: boolean;
}

/** Bad usage: the caller prints `message` as one line and exits non-zero. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type ParsedOptions = Record<string, string | number | boolean | undefined>;

function convert(spec: OptionSpec, raw: string, source: string): string | number | boolean {
  if (spec.kind === 'string') {
    if (raw === '') throw new UsageError(`${source} must not be empty`);
    return raw;
  }
  if (spec.kind === 'bool') {
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
    throw new UsageError(`${source} must be true or false; got "${raw}"`);
  }
  if (!/^-?\d+$/.test(raw)) throw new UsageError(`${source} must be an integer; got "${raw}"`);
  const n = Number(raw);
  if (spec.min !== undefined && n < spec.min) throw new UsageError(`${source} is ${n}; the minimum is ${spec.min}`);
  if (spec.max !== undefined && n > spec.max) throw new UsageError(`${source} is ${n}; the maximum is ${spec.max}`);
  return n;
}

/**
 * Parses `argv` over `env`: `--name value` or `--name=value`; a bool is bare `--name` (true) or
 * `--name=false`, and never takes the next argument as its value; other arguments are positionals, and
 * so is everything after `--` (a key such as `--x` or `-h`). Unknown flags and missing values throw
 * {@link UsageError}. `help` is true for `--help` / `-h` before any `--`; then nothing else is checked
 * (a bad flag or environment variable must not hide the help) and the options are the defaults.
 */
export function parseOptions(specs: readonly OptionSpec[], argv: readonly string[], env: NodeJS.ProcessEnv, envPrefix: string): { options: ParsedOptions; help: boolean; positionals: string[] } {
  const options: ParsedOptions = {};
  const end = argv.indexOf('--');
  const flags = end < 0 ? argv : argv.slice(0, end);
  if (flags.includes('--help') || flags.includes('-h')) {
    for (const spec of specs) if (spec.default !== undefined) options[spec.flag] = spec.default;
    return { options, help: true, positionals: [] };
  }
  for (const spec of specs) {
    const name = `${envPrefix}_${spec.env}`;
    const raw = spec.env === undefined ? undefined : env[name];
    if (raw === '' && spec.emptyEnvRefused) throw new UsageError(`${name} is set but empty; unset it to run without it`);
    if (raw !== undefined && raw !== '') options[spec.flag] = convert(spec, raw, name);
    else if (spec.default !== undefined) options[spec.flag] = spec.default;
  }
  const positionals = flagsInto(options, specs, flags);
  if (end >= 0) positionals.push(...argv.slice(end + 1));
  return { options, help: false, positionals };
}

/**
 * Sets the flags of `args` (arguments before any `--`) into `options`; returns the positionals.
 * `parseArgs` splits them (non-strict, so that kvt words the errors): a string option takes the
 * next argument whatever it looks like, a bool none. A short option is not kvt's (only `-h`, seen
 * before): its argument stays a positional, as a key such as `-x` may be.
 */
function flagsInto(options: ParsedOptions, specs: readonly OptionSpec[], args: readonly string[]): string[] {
  const byFlag = new Map(specs.map((s) => [s.flag, s]));
  const types = Object.fromEntries(specs.map((s) => [s.flag, { type: s.kind === 'bool' ? ('boolean' as const) : ('string' as const) }]));
  const { tokens } = parseArgs({ args: [...args], options: types, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  let lastShort = -1;
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    if (!token.rawName.startsWith('--')) {
      // `-ab` comes as one token per letter, all of the same argument.
      if (token.index !== lastShort) positionals.push(args[token.index]);
      lastShort = token.index;
      continue;
    }
    const spec = byFlag.get(token.name);
    if (!spec) throw new UsageError(`unknown option --${token.name} (see --help)`);
    const raw = token.value ?? (spec.kind === 'bool' ? 'true' : undefined);
    if (raw === undefined) throw new UsageError(`option --${token.name} needs a value`);
    options[spec.flag] = convert(spec, raw, `--${token.name}`);
  }
  return positionals;
}

/** `--help` text: usage line plus one line per option with its default and env variable (if any). */
export function helpText(usage: string, summary: string, specs: readonly OptionSpec[], envPrefix: string): string {
  const lines = [`Usage: ${usage}`, '', summary, '', 'Options (flags override environment variables):'];
  for (const s of specs) {
    const flag = `--${s.flag}${s.kind === 'bool' ? '' : ` <${s.kind === 'int' ? 'n' : 'value'}>`}`;
    const dflt = s.default === undefined ? '' : ` (default: ${s.default})`;
    lines.push(`  ${flag.padEnd(28)} ${s.description}${dflt}${s.env === undefined ? '' : `  [env ${envPrefix}_${s.env}]`}`);
  }
  lines.push(`  ${'--help'.padEnd(28)} show this help`);
  return lines.join('\n');
}

/** A subcommand of a CLI, as {@link parseCommand} reads its arguments. */
export interface CommandSpec {
  usage: string;
  summary: string;
  options: readonly OptionSpec[];
  /** Number of positional arguments: [min, max]. */
  args: readonly [number, number];
}

/**
 * A subcommand's options and positionals (see {@link parseOptions}), or its `--help` text when asked for.
 * @throws UsageError for a bad option, or fewer or more positionals than the command takes
 */
export function parseCommand(
  command: CommandSpec,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  envPrefix: string,
): { options: ParsedOptions; positionals: string[]; help?: undefined } | { help: string } {
  const { options, help, positionals } = parseOptions(command.options, argv, env, envPrefix);
  if (help) return { help: helpText(command.usage, command.summary, command.options, envPrefix) };
  const [min, max] = command.args;
  if (positionals.length < min || positionals.length > max) {
    throw new UsageError(`expected ${min === max ? min : `${min} to ${max}`} argument(s), got ${positionals.length}; usage: ${command.usage}`);
  }
  return { options, positionals };
}

/**
 * Refuses two listeners of one process on the same fixed port (`{ port: 9090, 'metrics-port': 9090 }`),
 * which would otherwise fail later as "port already in use" with the process half started.
 * @throws UsageError naming both flags
 */
export function checkDistinctPorts(ports: Record<string, number | undefined>): void {
  const seen = new Map<number, string>();
  for (const [flag, port] of Object.entries(ports)) {
    if (port === undefined || port === 0) continue;
    const other = seen.get(port);
    if (other !== undefined) throw new UsageError(`--${flag} is ${port}, the port of --${other}; give each listener its own port`);
    seen.set(port, flag);
  }
}
