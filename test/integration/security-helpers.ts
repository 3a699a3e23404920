/**
 * Helpers of the security tests: a throwaway CA and a server certificate for 127.0.0.1 / localhost,
 * made with the `openssl` command in a temp directory (EC P-256 keys: fast to generate), and raw gRPC
 * calls with chosen metadata and credentials, to see exactly what a server answers.
 */
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER } from '../../proto/error-codes';
import { GRPC_CHANNEL_OPTIONS, kvtPackage } from '../../proto/load';
import { KVT_BIN } from '../harness/process';

/** Paths of generated PEM files. */
export interface TestCertificates {
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** A second, unrelated CA: trusting it must not let a client connect. */
  otherCaCert: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** Generates a CA, a server certificate signed by it (SAN IP:127.0.0.1, DNS:localhost) and another CA into `dir`. */
export function makeCertificates(dir: string): TestCertificates {
  fs.mkdirSync(dir, { recursive: true });
  makeCa(dir, 'kvt-test-ca');
  makeCa(dir, 'kvt-other-ca');
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  fs.writeFileSync(
    path.join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  openssl(dir, ['x509', '-req', '-in', 'server.csr', '-CA', 'kvt-test-ca.pem', '-CAkey', 'kvt-test-ca.key', '-CAcreateserial', '-days', '2', '-out', 'server.pem', '-extfile', 'server.ext']);
  return {
    caCert: path.join(dir, 'kvt-test-ca.pem'),
    serverCert: path.join(dir, 'server.pem'),
    serverKey: path.join(dir, 'server.key'),
    otherCaCert: path.join(dir, 'kvt-other-ca.pem'),
  };
}

/** What a raw call ended with. */
export interface RawOutcome {
  ok: boolean;
  status?: grpc.status;
  /** The `kvt-error-code` trailer. */
  code?: string;
  message?: string;
}

/**
 * Calls `method` of `service` at `address` once, with `authorization` metadata when given, and
 * reports how it ended (never throws for a failed call).
 */
export async function rawCall(
  service: 'Controller' | 'SegmentStore',
  address: string,
  method: string,
  request: unknown,
  options: { authorization?: string; credentials?: grpc.ChannelCredentials; timeoutMs?: number } = {},
): Promise<RawOutcome> {
  const Ctor = kvtPackage()[service];
  const client = new Ctor(address, options.credentials ?? grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
  const metadata = new grpc.Metadata();
  if (options.authorization !== undefined) metadata.set('authorization', options.authorization);
  type Method = (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void) => void;
  const fn = (client as unknown as Record<string, Method>)[method];
  try {
    return await new Promise<RawOutcome>((resolve) => {
      fn.call(client, request, metadata, { deadline: Date.now() + (options.timeoutMs ?? 20_000) }, (err) => {
        if (!err) return resolve({ ok: true });
        const code = err.metadata?.get(ERROR_CODE_TRAILER)[0];
        resolve({ ok: false, status: err.code, code: typeof code === 'string' ? code : undefined, message: err.details });
      });
    });
  } finally {
    client.close();
  }
}

/**
 * Opens `ExecuteStream` on the store at `address` (with `authorization` metadata when given), sends
 * one message holding an empty Execute, half-closes, and reports how the stream ended: ok when it
 * answered the message and ended with OK.
 */
export async function rawStream(address: string, options: { authorization?: string } = {}): Promise<RawOutcome> {
  const client = new (kvtPackage().SegmentStore)(address, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
  const metadata = new grpc.Metadata();
  if (options.authorization !== undefined) metadata.set('authorization', options.authorization);
  type Open = (md: grpc.Metadata, opts: grpc.CallOptions) => grpc.ClientDuplexStream<unknown, { id: number }>;
  const call = (client as unknown as Record<string, Open>).ExecuteStream.call(client, metadata, { deadline: Date.now() + 20_000 });
  try {
    return await new Promise<RawOutcome>((resolve) => {
      let answered = false;
      call.on('data', (msg) => (answered ||= msg.id === 1));
      call.on('error', () => undefined); // reported by 'status'
      call.on('status', (status: grpc.StatusObject) => {
        const code = status.metadata?.get(ERROR_CODE_TRAILER)[0];
        if (status.code === grpc.status.OK) resolve({ ok: answered });
        else resolve({ ok: false, status: status.code, code: typeof code === 'string' ? code : undefined, message: status.details });
      });
      call.write({ id: 1, request: { requests: [] } });
      call.end();
    });
  } finally {
    client.close();
  }
}

/** How a `kvt …` command ended. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/kvt.js <args>` to completion (bounded by a 60 s kill timer). */
export function kvtCommand(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [KVT_BIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? Number((err as { code: number }).code) : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
