/**
 * Limits of the data model (DESIGN §2). The client checks them before sending and the segment store
 * checks them again; both name the field and the limit when one is exceeded.
 */

/** Maximum UTF-8 length of a key family, in bytes. */
export const MAX_KEY_FAMILY_LENGTH = 2048;
/** Maximum length of key family (UTF-8) plus key, in bytes. */
export const MAX_KEY_LENGTH = 8190;
/** Maximum length of a value, in bytes (1 MiB − 8 KiB). */
export const MAX_VALUE_LENGTH = 1_040_384;
/** Maximum number of modifications in one atomic batch. */
export const MAX_BATCH_ITEMS = 256;
/** Maximum total key + value bytes of one atomic batch (16 MiB). */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;
/** Maximum total key + value bytes of one iterator page (2 MiB). */
export const MAX_ITERATOR_PAGE_BYTES = 2 * 1024 * 1024;
/** Maximum number of items one iterator page may be asked for. */
export const MAX_ITERATOR_PAGE_ITEMS = 10_000;
/** Default number of items in an iterator page. */
export const DEFAULT_ITERATOR_PAGE_ITEMS = 10;
/** Maximum keys in one Get request. */
export const MAX_GET_KEYS = 10_000;
/** Maximum gRPC message size both sides accept (a full batch plus framing). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/**
 * Key + value bytes the Gets of one answer (an Execute's, or a Get call's) may hold: half the message
 * limit, so that the answer always fits. Keys past it are left out of a Get's answer (see GetResponse).
 */
export const MAX_GET_ANSWER_BYTES = 32 * 1024 * 1024;
/** Names of scopes and tables. */
export const NAME_PATTERN = /^[A-Za-z0-9.-]{1,250}$/;
/** Longest segment store id, in characters (stores use a UUID). */
export const MAX_STORE_ID_LENGTH = 250;
/** Partition count bounds of a key-value table. */
export const MIN_PARTITION_COUNT = 1;
export const MAX_PARTITION_COUNT = 1024;
