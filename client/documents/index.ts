/**
 * The document layer (DESIGN §5): DocumentStore — CouchDB's revision trees on key families — and its
 * shapes and limits, built on the client's public table interface only.
 */
export { DocumentStore, DEFAULT_MARKER_LEASE_MS, MAX_CHANGES_LIMIT, MAX_BULK_DOCUMENTS, MAX_CHANGES_WAIT_MS, MAX_OPEN_REVS } from './document-store';
export { LOCAL_ID_PREFIX } from './local-documents';
export { DEFAULT_REVS_LIMIT, MAX_REVS_LIMIT, MAX_DOCUMENT_ID_LENGTH, MAX_DOCUMENT_BYTES } from './document-input';
export { MAX_REV_HASH_LENGTH, MAX_REV_POS } from './rev-id';
export { MAX_BODY_DEPTH } from './canonical-json';
export type {
  AllDocsOptions,
  AllDocsResponse,
  AllDocsRow,
  BulkDocsOptions,
  BulkDocsResult,
  Change,
  ChangesOptions,
  ChangesResponse,
  DocumentBody,
  DocumentStoreInfo,
  DocumentStoreOptions,
  DocumentWriteResult,
  GetDocumentOptions,
  LocalDocument,
  OpenRev,
  OpenRevsOptions,
  PutDocumentOptions,
  ReplicatedDocument,
  Revisions,
  RevsDiffEntry,
  StoredDocument,
} from './types';
