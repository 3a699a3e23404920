/**
 * Generates the README's configuration, error-code and limits tables from the code, so they cannot drift:
 * `npm run readme` rewrites the marked sections of README.md; test/unit/readme.test.ts checks them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLUSTER_ENV_PREFIX, CLUSTER_OPTIONS } from '../bin/cluster';
import { CONTROLLER_ENV_PREFIX, CONTROLLER_OPTIONS } from '../controller/config';
import { COUCH_ENV_PREFIX, COUCH_OPTIONS } from '../couch/config';
import * as limits from '../proto/limits';
import { OptionSpec } from '../server-kit/flags';
import { ENV_PREFIX as SEGMENT_STORE_ENV_PREFIX, SEGMENT_STORE_OPTIONS } from '../segmentstore/config';
import { MAX_STREAM_ANSWER_BYTES, MAX_STREAM_IN_FLIGHT, MAX_STREAM_REQUEST_BYTES } from '../segmentstore/service/execute-stream';
import { DEFAULT_MAX_IN_FLIGHT_MB } from '../segmentstore/service/in-flight-budget';

function optionTable(title: string, envPrefix: string, specs: readonly OptionSpec[]): string {
  const rows = specs.map((o) => {
    const dflt = o.default === undefined ? '' : `\`${o.default}\``;
    const variable = o.env === undefined ? '' : `\`${envPrefix}_${o.env}\``;
    return `| \`--${o.flag}\` | ${variable} | ${dflt} | ${o.description.replace(/\|/g, '\\|')} |`;
  });
  return [`**${title}**`, '', '| flag | environment | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The configuration tables of the server commands. */
export function configurationTables(): string {
  return [
    optionTable('kvt controller', CONTROLLER_ENV_PREFIX, CONTROLLER_OPTIONS),
    optionTable('kvt segmentstore', SEGMENT_STORE_ENV_PREFIX, SEGMENT_STORE_OPTIONS),
    optionTable('kvt cluster', CLUSTER_ENV_PREFIX, CLUSTER_OPTIONS),
    optionTable('kvt couch', COUCH_ENV_PREFIX, COUCH_OPTIONS),
  ].join('\n\n');
}

/** Stable codes, the client class raising each, and what it means. */
export const ERROR_CODE_ROWS: readonly [code: string, errorClass: string, meaning: string][] = [
  ['BAD_KEY_VERSION', 'BadKeyVersionError', 'a condition failed: the key exists (insert, NOT_EXISTS) or its version differs (stale, or of another segment)'],
  ['NO_SUCH_KEY', 'NoSuchKeyError', 'a conditional update or remove named a key that does not exist'],
  ['INVALID_ARGUMENT', 'InvalidArgumentError', 'bad name, configuration, key, value, batch, version, resume token or position; the message names the field and the limit; nothing was written'],
  ['SCOPE_NOT_FOUND', 'ScopeNotFoundError', 'the scope does not exist'],
  ['TABLE_NOT_FOUND', 'TableNotFoundError', 'the key-value table does not exist'],
  ['TABLE_NOT_ACTIVE', 'TableNotActiveError', 'the table is being created or deleted'],
  ['SEGMENT_STORE_NOT_FOUND', 'SegmentStoreNotFoundError', 'no segment store is known under the id (neither registered nor removed)'],
  ['SEGMENT_STORE_LIVE', 'SegmentStoreLiveError', 'a removal named a store the controller still hears from: stop it first, or wait out `--store-timeout-ms`'],
  ['SEGMENT_STORE_HOLDS_DATA', 'SegmentStoreHoldsDataError', 'a removal without force named a store holding partitions of ACTIVE tables (the message lists them); nothing was changed'],
  ['SEGMENT_STORE_REMOVED', 'SegmentStoreRemovedError', 'a removed store tried to register again (wire code, answered to the store, which exits: wipe its data directory)'],
  ['OBJECT_CLOSED', 'ObjectClosedError', 'the manager, factory or table was closed'],
  ['UNAVAILABLE', 'UnavailableError', 'no store or controller answered within the deadline after retries (`maybeApplied` tells whether a write may have happened)'],
  [
    'OVERLOADED',
    'OverloadedError',
    'a segment store already held as many requests as `--max-in-flight-mb` allows, through every retry: nothing was run (the client retries without asking the controller for new routing); an `UnavailableError` too, so handlers of unavailability catch it',
  ],
  ['UNAUTHENTICATED', 'UnauthenticatedError', 'the server needs a token and none was sent'],
  ['PERMISSION_DENIED', 'PermissionDeniedError', 'the token is wrong, or a data token was used for an admin call'],
  ['DOCUMENT_CONFLICT', 'DocumentConflictError', 'a document edit named a stale or deleted revision'],
  ['SEGMENT_NOT_FOUND', 'ServiceError', 'a store does not host the segment even after a routing refresh (wire code; the client retries once first)'],
  ['INTERNAL', 'ServiceError', 'a server bug or storage failure'],
  ['SERVICE_ERROR', 'ServiceError', 'an answer the client does not understand'],
];

/** The error-code table. */
export function errorCodeTable(): string {
  const rows = ERROR_CODE_ROWS.map(([code, cls, meaning]) => `| \`${code}\` | \`${cls}\` | ${meaning} |`);
  return ['| code | client error | meaning |', '|---|---|---|', ...rows].join('\n');
}

const count = (n: number): string => n.toLocaleString('en-US');
const MiB = 1024 * 1024;
const mib = (bytes: number): string => `${bytes / MiB} MiB`;
const name = /^\^(\[.+\])\{(\d+),(\d+)\}\$$/.exec(limits.NAME_PATTERN.source)!;

/** The limits of the data model and the wire, each value from proto/limits.ts. */
export const LIMIT_ROWS: readonly [limit: string, value: string][] = [
  ['scope and table names', `\`${name[1]}\`, ${name[2]}–${name[3]} characters`],
  ['partitions per table', `${limits.MIN_PARTITION_COUNT}–${limits.MAX_PARTITION_COUNT}, fixed at creation`],
  ['key family', `≤ ${count(limits.MAX_KEY_FAMILY_LENGTH)} bytes (UTF-8)`],
  ['key family + key', `≤ ${count(limits.MAX_KEY_LENGTH)} bytes`],
  ['value', `≤ ${count(limits.MAX_VALUE_LENGTH)} bytes (1 MiB − ${(MiB - limits.MAX_VALUE_LENGTH) / 1024} KiB)`],
  ['atomic batch', `≤ ${count(limits.MAX_BATCH_ITEMS)} items and ≤ ${mib(limits.MAX_BATCH_BYTES)}, all of one key family (without a family: one key, no range removal)`],
  ['iterator page', `≤ ${mib(limits.MAX_ITERATOR_PAGE_BYTES)} and ≤ ${count(limits.MAX_ITERATOR_PAGE_ITEMS)} items (\`maxKeysAtOnce\`, default ${limits.DEFAULT_ITERATOR_PAGE_ITEMS})`],
  ['keys of one Get request', `≤ ${count(limits.MAX_GET_KEYS)} (the client splits a larger \`getAll\`)`],
  ["one answer of the segment store's Gets", `≤ ${mib(limits.MAX_GET_ANSWER_BYTES)} of keys and values (the client asks again for the keys left out, so \`getAll\` of any size returns every entry)`],
  ['gRPC message', `≤ ${mib(limits.MAX_MESSAGE_BYTES)} either way (a larger one is refused with \`RESOURCE_EXHAUSTED\`)`],
  [
    'requests one `ExecuteStream` runs at once',
    `${MAX_STREAM_IN_FLIGHT} messages and ${mib(MAX_STREAM_REQUEST_BYTES)} of them (the store reads no further until answers are taken; a request of any size still runs alone)`,
  ],
  [
    'answers one `ExecuteStream` holds',
    `${mib(MAX_STREAM_ANSWER_BYTES)}, not yet taken by HTTP/2 or still being read (the store reads no further; past it a Get answer holds only its first entry and the client asks again for the rest)`,
  ],
  [
    'data requests one segment store holds at once',
    `${DEFAULT_MAX_IN_FLIGHT_MB} MiB by default (\`--max-in-flight-mb\`), counted from arrival until the answer is written out (an answer the client does not read counts with its own size), unary calls and stream messages alike; past it a request is refused \`OVERLOADED\` (gRPC \`UNAVAILABLE\`) without running (clients retry it, even a conditional update); one alone always runs`,
  ],
];

/** The limits table. */
export function limitsTable(): string {
  return ['| limit | value |', '|---|---|', ...LIMIT_ROWS.map(([limit, value]) => `| ${limit} | ${value} |`)].join('\n');
}

/** Replaces the text between `<!-- name:begin -->` and `<!-- name:end -->`. */
export function replaceSection(readme: string, name: string, body: string): string {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const a = readme.indexOf(begin);
  const b = readme.indexOf(end);
  if (a < 0 || b < a) throw new Error(`README.md has no ${begin} … ${end} section`);
  return readme.slice(0, a + begin.length) + '\n' + body + '\n' + readme.slice(b);
}

/** README.md with its generated sections brought up to date. */
export function updatedReadme(readme: string): string {
  const sections: [string, string][] = [
    ['config', configurationTables()],
    ['errors', errorCodeTable()],
    ['limits', limitsTable()],
  ];
  return sections.reduce((text, [section, body]) => replaceSection(text, section, body), readme);
}

if (require.main === module) {
  const file = path.resolve(__dirname, '..', '..', 'README.md');
  fs.writeFileSync(file, updatedReadme(fs.readFileSync(file, 'utf8')));
  process.stdout.write(`updated ${file}\n`);
}
