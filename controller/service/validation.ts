/**
 * Checks of the controller's inputs. Each failure is an INVALID_ARGUMENT {@link KvtFault} whose message
 * names the field and the limit ("partitionCount is 1025; the maximum is 1024"), raised before anything
 * is written.
 */
import { MAX_PARTITION_COUNT, MAX_STORE_ID_LENGTH, MIN_PARTITION_COUNT, NAME_PATTERN } from '../../proto/limits';
import { parseHostPort } from '../../server-kit/address';
import { invalidArgument } from '../../server-kit/fault';

/** Longest scope or table name, in characters. */
export const MAX_NAME_LENGTH = 250;
/** Page size of ListTables when the request says 0. */
export const DEFAULT_LIST_LIMIT = 100;
/** Largest page of ListTables; bigger requested limits are clamped to it. */
export const MAX_LIST_LIMIT = 1000;

/**
 * A scope or table name: 1–250 characters of `[A-Za-z0-9.-]`.
 * @throws KvtFault INVALID_ARGUMENT naming `field`
 */
export function validateName(field: 'scope' | 'table', value: string): void {
  if (NAME_PATTERN.test(value)) return;
  if (value.length === 0) throw invalidArgument(`${field} name is empty; it must be 1 to ${MAX_NAME_LENGTH} characters`);
  if (value.length > MAX_NAME_LENGTH) throw invalidArgument(`${field} name is ${value.length} characters; the maximum is ${MAX_NAME_LENGTH}`);
  throw invalidArgument(`${field} name ${JSON.stringify(value)} is invalid: it may contain only letters, digits, '.' and '-' ([A-Za-z0-9.-]{1,${MAX_NAME_LENGTH}})`);
}

/**
 * A table's partition count: an integer in 1–1024.
 * @throws KvtFault INVALID_ARGUMENT naming partitionCount and the bound
 */
export function validatePartitionCount(value: number): void {
  if (!Number.isInteger(value)) throw invalidArgument(`partitionCount is ${value}; it must be an integer`);
  if (value < MIN_PARTITION_COUNT) throw invalidArgument(`partitionCount is ${value}; the minimum is ${MIN_PARTITION_COUNT}`);
  if (value > MAX_PARTITION_COUNT) throw invalidArgument(`partitionCount is ${value}; the maximum is ${MAX_PARTITION_COUNT}`);
}

/**
 * A segment store id: 1–250 characters.
 * @throws KvtFault INVALID_ARGUMENT naming storeId and the limit
 */
export function validateStoreId(storeId: string): void {
  if (storeId.length === 0) throw invalidArgument(`storeId is empty; it must be 1 to ${MAX_STORE_ID_LENGTH} characters`);
  if (storeId.length > MAX_STORE_ID_LENGTH) throw invalidArgument(`storeId is ${storeId.length} characters; the maximum is ${MAX_STORE_ID_LENGTH}`);
}

/**
 * A segment store's registration: a non-empty id (≤ 250 characters) and a `host:port` address.
 * @throws KvtFault INVALID_ARGUMENT naming storeId or address
 */
export function validateStoreIdentity(storeId: string, address: string): void {
  validateStoreId(storeId);
  if (!parseHostPort(address)) {
    throw invalidArgument(`address ${JSON.stringify(address)} is invalid: it must be host:port with a port in 1-65535`);
  }
}

/** The page size to use for a requested ListTables limit (0 = default, clamped to the maximum). */
export function effectiveListLimit(requested: number): number {
  if (!requested || requested < 0) return DEFAULT_LIST_LIMIT;
  return Math.min(requested, MAX_LIST_LIMIT);
}

const TOKEN_PREFIX = 'kvt1:';

/** An opaque ListTables continuation token: the next page starts after the table `lastName`. */
export function encodeContinuationToken(lastName: string): string {
  return Buffer.from(TOKEN_PREFIX + lastName, 'utf8').toString('base64url');
}

/**
 * The table name a continuation token continues after; "" for an empty token (from the start).
 * @throws KvtFault INVALID_ARGUMENT for a token this controller did not issue
 */
export function decodeContinuationToken(token: string): string {
  if (token === '') return '';
  const text = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url').toString('utf8') : '';
  const name = text.startsWith(TOKEN_PREFIX) ? text.slice(TOKEN_PREFIX.length) : '';
  if (!NAME_PATTERN.test(name)) throw invalidArgument('continuationToken is malformed: pass back the token of the previous page, or "" to start');
  return name;
}
