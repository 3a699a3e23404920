import { describe, expect, it } from 'vitest';
import {
  BadKeyVersionError,
  ConditionalTableUpdateError,
  DocumentConflictError,
  InvalidArgumentError,
  KvtError,
  NoSuchKeyError,
  ObjectClosedError,
  OverloadedError,
  PermissionDeniedError,
  ScopeNotFoundError,
  SegmentStoreHoldsDataError,
  SegmentStoreLiveError,
  SegmentStoreNotFoundError,
  SegmentStoreRemovedError,
  ServiceError,
  TableNotActiveError,
  TableNotFoundError,
  UnauthenticatedError,
  UnavailableError,
} from '../../../client';

const cases: [new (m: string) => KvtError, string, string][] = [
  [BadKeyVersionError, 'BAD_KEY_VERSION', 'BadKeyVersionError'],
  [NoSuchKeyError, 'NO_SUCH_KEY', 'NoSuchKeyError'],
  [InvalidArgumentError, 'INVALID_ARGUMENT', 'InvalidArgumentError'],
  [ScopeNotFoundError, 'SCOPE_NOT_FOUND', 'ScopeNotFoundError'],
  [TableNotFoundError, 'TABLE_NOT_FOUND', 'TableNotFoundError'],
  [TableNotActiveError, 'TABLE_NOT_ACTIVE', 'TableNotActiveError'],
  [SegmentStoreNotFoundError, 'SEGMENT_STORE_NOT_FOUND', 'SegmentStoreNotFoundError'],
  [SegmentStoreLiveError, 'SEGMENT_STORE_LIVE', 'SegmentStoreLiveError'],
  [SegmentStoreHoldsDataError, 'SEGMENT_STORE_HOLDS_DATA', 'SegmentStoreHoldsDataError'],
  [SegmentStoreRemovedError, 'SEGMENT_STORE_REMOVED', 'SegmentStoreRemovedError'],
  [ObjectClosedError, 'OBJECT_CLOSED', 'ObjectClosedError'],
  [UnavailableError, 'UNAVAILABLE', 'UnavailableError'],
  [OverloadedError, 'OVERLOADED', 'OverloadedError'],
  [DocumentConflictError, 'DOCUMENT_CONFLICT', 'DocumentConflictError'],
  [UnauthenticatedError, 'UNAUTHENTICATED', 'UnauthenticatedError'],
  [PermissionDeniedError, 'PERMISSION_DENIED', 'PermissionDeniedError'],
  [ServiceError, 'INTERNAL', 'ServiceError'],
];

describe('kvt errors', () => {
  it.each(cases)('%o has code %s, its name and the message', (Ctor, code, name) => {
    const err = new Ctor('something went wrong');
    expect(err).toBeInstanceOf(KvtError);
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe(code);
    expect(err.name).toBe(name);
    expect(err.message).toBe('something went wrong');
  });

  it('builds the answers of optimistic writes without stack frames, and every other error with them', () => {
    const limit = Error.stackTraceLimit;
    const stackless = [new BadKeyVersionError('x'), new NoSuchKeyError('x'), new ConditionalTableUpdateError('BAD_KEY_VERSION', 'x'), new DocumentConflictError('x')];
    for (const err of stackless) expect(err.stack, err.name).toBe(`${err.name}: x`);
    expect(Error.stackTraceLimit).toBe(limit);
    for (const err of [new InvalidArgumentError('x'), new UnavailableError('x'), new ServiceError('x')]) expect(err.stack, err.name).toMatch(/^\w+: x\n\s+at /);
  });

  it('makes both conditional failures ConditionalTableUpdateErrors', () => {
    expect(new BadKeyVersionError('x')).toBeInstanceOf(ConditionalTableUpdateError);
    expect(new NoSuchKeyError('x')).toBeInstanceOf(ConditionalTableUpdateError);
    expect(new InvalidArgumentError('x')).not.toBeInstanceOf(ConditionalTableUpdateError);
  });

  it('keeps the context fields and the cause', () => {
    const cause = new Error('status 9');
    const err = new BadKeyVersionError('stale', { cause, table: 's/t', segment: '7', key: 'k', index: 3 });
    expect(err.cause).toBe(cause);
    expect([err.table, err.segment, err.key, err.index]).toEqual(['s/t', '7', 'k', 3]);
  });

  it('marks whether an unavailable update may have been applied', () => {
    expect(new UnavailableError('x').maybeApplied).toBe(false);
    expect(new UnavailableError('x', { maybeApplied: true }).maybeApplied).toBe(true);
  });

  it('makes an overload refusal an UnavailableError of its own class and code, so callers can back off on it', () => {
    const err = new OverloadedError('busy', { maybeApplied: true });
    expect(err).toBeInstanceOf(UnavailableError);
    expect([err.code, err.maybeApplied]).toEqual(['OVERLOADED', true]);
    expect(new UnavailableError('x')).not.toBeInstanceOf(OverloadedError);
  });

  it('lets ServiceError carry SERVICE_ERROR for answers the client does not understand', () => {
    expect(new ServiceError('odd', { code: 'SERVICE_ERROR' }).code).toBe('SERVICE_ERROR');
  });
});
