/**
 * The page revision layer (DESIGN §4): PageRevisionStore and its shapes, limits and errors, built
 * on the client's public table interface only.
 */
export { PageRevisionStore, DEFAULT_RECENCY_WINDOW_MS, DEFAULT_HISTORICAL_TTL_MS } from './page-revision-store';
export { RenderExistsError } from './errors';
export { MAX_RENDER_BYTES, MAX_RENDER_HEADERS_BYTES, MAX_RENDER_PARTS, MAX_PART_NAME_LENGTH, MAX_LIST_LIMIT } from './render-input';
export { isTimeUuid, timeOf, timeUuidOf } from './time-uuid';
export type { ListRevisionsOptions, PageRevisionStoreOptions, PutRenderOptions, ReadRenderOptions, Render, RenderBody, RenderedRevision, RenderInput, RenderKey, RevisionPage } from './types';
