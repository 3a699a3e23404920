/**
 * Everything the segment store says to the controller (kvt.v1.Controller): its stable identity,
 * RegisterSegmentStore and Heartbeat. Registration retries with backoff while the controller is
 * unreachable or refuses (never crashing the store), or at the moment a refusal names (a moved store
 * whose old address still counts as live), warning when a run of failures begins or changes reason and
 * every `rewarnMs` while it lasts; heartbeats run at the interval the controller
 * returns, at registration and again with every heartbeat (a restarted controller may ask for
 * another); a heartbeat answered `known=false`, or failing, sends the store back to registering. A
 * refusal because the store was removed from the cluster (SEGMENT_STORE_REMOVED) ends it for good:
 * `onRemoved` is told, and the store must not serve (see SegmentStoreServer).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER, ErrorCodes, RETRY_AFTER_TRAILER } from '../proto/error-codes';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../proto/load';
import type { HeartbeatRequest, HeartbeatResponse, RegisterSegmentStoreRequest, RegisterSegmentStoreResponse } from '../proto/messages';
import { withBearerToken } from '../proto/auth';
import type { Logger } from '../server-kit/log';

const STORE_ID_FILE = 'STORE_ID';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The store's stable id: a UUID kept in `<dataDir>/STORE_ID`, created on first start. */
export function loadStoreId(dataDir: string): string {
  const file = path.join(dataDir, STORE_ID_FILE);
  if (fs.existsSync(file)) {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (!UUID.test(id)) throw new Error(`${file} does not hold a store id (a UUID); got "${id.slice(0, 60)}"`);
    return id;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const id = randomUUID();
  const tmp = `${file}.tmp`;
  // Durable before the store registers under it: an id lost to a power cut would leave the store's
  // segments under an id nobody answers for.
  fs.writeFileSync(tmp, id + '\n');
  fsyncPath(tmp);
  fs.renameSync(tmp, file);
  fsyncPath(dataDir);
  return id;
}

/** Flushes a file, or a directory's entries, to disk. */
function fsyncPath(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Options of {@link ControllerRegistration}. */
export interface RegistrationOptions {
  /** Controller `host:port`. */
  controller: string;
  storeId: string;
  /** `host:port` this store is reached on. */
  address: string;
  log: Logger;
  /** @default 200 */
  retryMinMs?: number;
  /** @default 5000 */
  retryMaxMs?: number;
  /** Deadline of each controller call. @default 5000 */
  callTimeoutMs?: number;
  /** Credentials of the channel to the controller. @default plaintext */
  credentials?: grpc.ChannelCredentials;
  /** The admin token, sent as `authorization: Bearer <token>` when the controller requires one. */
  token?: string;
  /**
   * While registering keeps failing for one reason, the warning is written again this often (with the
   * attempts and time so far), so that a log shows a store still waiting, not one that gave up. @default 30000
   */
  rewarnMs?: number;
  /** Called each time the controller accepts a registration. */
  onAccepted?: () => void;
  /** Called (and registering ends) when the controller refuses the store as removed, with its reason. */
  onRemoved?: (reason: string) => void;
}

type Unary<Req, Res> = (req: Req, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Res) => void) => void;
interface ControllerClient extends grpc.Client {
  RegisterSegmentStore: Unary<RegisterSegmentStoreRequest, RegisterSegmentStoreResponse>;
  Heartbeat: Unary<HeartbeatRequest, HeartbeatResponse>;
}

/** Keeps the store registered with the controller until stopped. */
export class ControllerRegistration {
  private readonly client: ControllerClient;
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /** How many times the controller accepted a registration. */
  registrations = 0;

  constructor(private readonly options: RegistrationOptions) {
    const Controller = kvtPackage().Controller;
    const credentials = options.credentials ?? grpc.credentials.createInsecure();
    this.client = new Controller(options.controller, credentials, withBearerToken(GRPC_CHANNEL_OPTIONS, options.token)) as unknown as ControllerClient;
  }

  /** Starts registering, then heartbeating, in the background. */
  start(): void {
    this.loop ??= this.run().catch((err) => this.options.log.error('registration loop failed', { err }));
  }

  /** Stops heartbeating and closes the channel. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    this.client.close();
  }

  private call<Req, Res>(method: 'RegisterSegmentStore' | 'Heartbeat', req: Req): Promise<Res> {
    const deadline = Date.now() + (this.options.callTimeoutMs ?? 5000);
    return new Promise((resolve, reject) => {
      const fn = this.client[method] as unknown as Unary<Req, Res>;
      fn.call(this.client, req, { deadline }, (err, res) => (err ? reject(err) : resolve(res)));
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private async run(): Promise<void> {
    const { log, controller, storeId, address } = this.options;
    const min = this.options.retryMinMs ?? 200;
    const max = this.options.retryMaxMs ?? 5000;
    const rewarnMs = this.options.rewarnMs ?? 30_000;
    let delay = min;
    /** The reason of the failure before, if the last attempt failed. */
    let warned: string | undefined;
    /** When this run of failures began and its warning was last written, and its attempts. */
    let failingSince = 0;
    let warnedAt = 0;
    let attempts = 0;
    while (!this.stopped) {
      let intervalMs: number;
      try {
        const res = await this.call<RegisterSegmentStoreRequest, RegisterSegmentStoreResponse>('RegisterSegmentStore', { storeId, address });
        intervalMs = res.heartbeatIntervalMs > 0 ? res.heartbeatIntervalMs : 1000;
      } catch (err) {
        if (kvtCodeOf(err) === ErrorCodes.SEGMENT_STORE_REMOVED) {
          this.options.onRemoved?.((err as grpc.ServiceError).details);
          return;
        }
        // One warning per outage (or per new reason); the retries after it are debug noise. A refusal
        // that says when the call can succeed is tried again then, and leaves the backoff as it was.
        const failure = registrationFailure(err);
        const hinted = retryAfterOf(err);
        const wait = hinted ?? delay;
        const now = Date.now();
        if (attempts++ === 0) failingSince = now;
        if (failure.reason !== warned) {
          log.warn(failure.message, { controller, err, retryInMs: wait });
          warnedAt = now;
        } else if (now - warnedAt >= rewarnMs) {
          log.warn(failure.message, { controller, err, retryInMs: wait, attempts, failingForMs: now - failingSince });
          warnedAt = now;
        } else log.debug('registration retry failed', { controller, err, retryInMs: wait });
        warned = failure.reason;
        await this.sleep(wait);
        if (hinted === undefined) delay = Math.min(delay * 2, max);
        continue;
      }
      this.registrations++;
      this.options.onAccepted?.();
      warned = undefined;
      attempts = 0;
      delay = min;
      log.info('registered with controller', { controller, storeId, address, heartbeatIntervalMs: intervalMs });
      await this.heartbeat(intervalMs);
    }
  }

  /** Heartbeats until stopped or until the store must register again. */
  private async heartbeat(intervalMs: number): Promise<void> {
    const { log, controller, storeId, address } = this.options;
    while (!this.stopped) {
      await this.sleep(intervalMs);
      if (this.stopped) return;
      try {
        const res = await this.call<HeartbeatRequest, HeartbeatResponse>('Heartbeat', { storeId, address });
        if (!res.known) {
          log.warn('controller does not know this store; registering again', { controller });
          return;
        }
        if (res.heartbeatIntervalMs > 0 && res.heartbeatIntervalMs !== intervalMs) {
          log.info('heartbeat interval changed by the controller', { controller, heartbeatIntervalMs: res.heartbeatIntervalMs, previous: intervalMs });
          intervalMs = res.heartbeatIntervalMs;
        }
      } catch (err) {
        log.warn('heartbeat failed; registering again', { controller, err });
        return;
      }
    }
  }
}

/**
 * The warning for a failed registration: a refused token needs a person, a refusal by the controller
 * says why in its message (an address it does not accept, a store id live elsewhere), an outage only
 * needs patience.
 */
function registrationFailure(err: unknown): { reason: string; message: string } {
  const e = err as Partial<grpc.ServiceError>;
  if (e.code === grpc.status.UNAUTHENTICATED || e.code === grpc.status.PERMISSION_DENIED) {
    return { reason: 'auth', message: 'controller refused the registration (check --admin-token); retrying' };
  }
  const kvtCode = kvtCodeOf(err);
  if (kvtCode !== undefined) return { reason: `refused ${kvtCode}`, message: `controller refused the registration: ${e.details ?? kvtCode}; retrying` };
  return { reason: 'unreachable', message: 'controller unreachable; retrying registration' };
}

/** The longest wait a controller's refusal is trusted with (its `--store-timeout-ms` is at most an hour): a day. */
const MAX_RETRY_AFTER_MS = 86_400_000;

/** The controller's `kvt-retry-after-ms`: when the refused registration can succeed; undefined when it did not say. */
function retryAfterOf(err: unknown): number | undefined {
  const text = (err as Partial<grpc.ServiceError>).metadata?.get(RETRY_AFTER_TRAILER)[0];
  const ms = Number(text);
  return text === undefined || !Number.isSafeInteger(ms) || ms < 0 || ms > MAX_RETRY_AFTER_MS ? undefined : ms;
}

/** The kvt error code of the controller's answer; undefined for a transport failure (only the controller's own answers carry one). */
function kvtCodeOf(err: unknown): string | undefined {
  const code = (err as Partial<grpc.ServiceError>).metadata?.get(ERROR_CODE_TRAILER)[0];
  return code === undefined ? undefined : String(code);
}
