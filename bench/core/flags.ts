/** Integer flags of the benchmark (`--keep-profiles`, `--segment-stores`): one rule, one message. */

/**
 * Throws unless `n` is an integer from `min` to `max`, naming `flag` and the limit; `shown` is how the
 * value given appears in the message (the number itself by default).
 */
export function checkIntegerFlag(flag: string, n: number, min: number, max = Infinity, shown = String(n)): void {
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new RangeError(`${flag} must be an integer ${max === Infinity ? `≥ ${min}` : `from ${min} to ${max}`}, got ${shown}`);
  }
}

/** The integer given to `flag` (`undefined` when the flag ended the command line), within `min`..`max`. */
export function parseIntegerFlag(flag: string, given: string | undefined, min: number, max = Infinity): number {
  // Number('') is 0: a missing or blank value must not quietly mean zero.
  const n = given === undefined || given.trim() === '' ? NaN : Number(given);
  checkIntegerFlag(flag, n, min, max, JSON.stringify(given ?? ''));
  return n;
}
