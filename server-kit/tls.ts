/**
 * TLS for every kvt listener and channel: the `--tls-cert` / `--tls-key` / `--tls-ca` flags of the
 * server processes, the files they name, and the grpc-js credentials built from them. Files are read
 * and checked once at start so a bad path or a key that does not match the certificate is one clear
 * start failure, not a handshake error on the first call.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { UsageError } from './flags';

/** The TLS file paths of a server process (all optional; TLS is on when `certFile` is set). */
export interface TlsFiles {
  /** PEM certificate (chain) this process serves with. */
  certFile?: string;
  /** PEM private key of `certFile`. */
  keyFile?: string;
  /** PEM CA certificate(s) trusted for outgoing calls (and offered to peers presenting client certificates). */
  caFile?: string;
}

/** PEM contents of {@link TlsFiles}. */
export interface TlsMaterial {
  cert?: Buffer;
  key?: Buffer;
  ca?: Buffer;
}

/**
 * Checks that the TLS flags make sense together (no files are read here).
 * @throws UsageError when only one of --tls-cert / --tls-key is given.
 */
export function checkTlsFlags(files: TlsFiles): void {
  if (files.certFile !== undefined && files.keyFile === undefined) throw new UsageError('--tls-cert needs --tls-key (the private key of the certificate)');
  if (files.keyFile !== undefined && files.certFile === undefined) throw new UsageError('--tls-key needs --tls-cert (the certificate of the key)');
}

function readPem(flag: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new Error(`cannot read ${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * Reads and checks the files: the certificate and the CA must be PEM certificates, the key a PEM
 * private key matching the certificate. Error messages name the flag and the file, never key bytes.
 * @throws Error "cannot read --tls-key /x.pem: ENOENT", "--tls-key k.pem does not match --tls-cert c.pem", …
 */
export function readTlsFiles(files: TlsFiles): TlsMaterial {
  checkTlsFlags(files);
  const material: TlsMaterial = {};
  if (files.caFile !== undefined) {
    material.ca = readPem('--tls-ca', files.caFile);
    parseCertificate('--tls-ca', files.caFile, material.ca);
  }
  if (files.certFile !== undefined && files.keyFile !== undefined) {
    material.cert = readPem('--tls-cert', files.certFile);
    material.key = readPem('--tls-key', files.keyFile);
    const cert = parseCertificate('--tls-cert', files.certFile, material.cert);
    let key;
    try {
      key = createPrivateKey(material.key);
    } catch {
      throw new Error(`--tls-key ${files.keyFile} is not a PEM private key`);
    }
    if (!cert.checkPrivateKey(key)) throw new Error(`--tls-key ${files.keyFile} does not match --tls-cert ${files.certFile}`);
  }
  return material;
}

function parseCertificate(flag: string, file: string, pem: Buffer, now = Date.now()): X509Certificate {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    throw new Error(`${flag} ${file} is not a PEM certificate`);
  }
  // A certificate out of its validity would fail every handshake after a start that looked fine.
  if (Date.parse(cert.validTo) < now) throw new Error(`${flag} ${file} expired on ${new Date(cert.validTo).toISOString()}`);
  if (Date.parse(cert.validFrom) > now) throw new Error(`${flag} ${file} is not valid before ${new Date(cert.validFrom).toISOString()}`);
  return cert;
}

/** True when the process serves TLS (a certificate and key were given). */
export function servesTls(material: TlsMaterial): boolean {
  return material.cert !== undefined && material.key !== undefined;
}

/**
 * Listener credentials: TLS with the certificate when there is one, plaintext otherwise. Client
 * certificates are not required (tokens authenticate callers); the CA, when given, is offered for
 * verifying those a client chooses to present.
 */
export function serverCredentials(material: TlsMaterial): grpc.ServerCredentials {
  if (!servesTls(material)) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(material.ca ?? null, [{ cert_chain: material.cert!, private_key: material.key! }], false);
}

/**
 * Credentials of a server's own outgoing calls (store → controller, controller → stores): TLS when
 * the process serves TLS or was given a CA — a TLS cluster is TLS throughout — trusting the CA (or
 * the system's roots without one); plaintext otherwise.
 */
export function outgoingCredentials(material: TlsMaterial): grpc.ChannelCredentials {
  if (!servesTls(material) && material.ca === undefined) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(material.ca ?? null);
}

let ipServernameQuiet = false;

/**
 * Drops Node's one-off DEP0123 warning ("Setting the TLS ServerName to an IP address…") in kvt's own
 * processes: grpc-js sends the target host as SNI, and kvt addresses are usually IPs (127.0.0.1:…),
 * which Node merely ignores for SNI — the certificate is still checked against the IP. Without this,
 * the warning lands on stderr, which the processes keep for their one-line failures. Every other
 * warning passes through. Not called by the client library: it leaves the host process alone.
 */
export function quietIpServernameWarning(): void {
  if (ipServernameQuiet) return;
  ipServernameQuiet = true;
  const emit = process.emitWarning;
  process.emitWarning = function emitWarning(this: NodeJS.Process, ...args: Parameters<typeof process.emitWarning>) {
    const [, typeOrOptions, code] = args as unknown[];
    const warningCode = typeof typeOrOptions === 'object' && typeOrOptions !== null ? (typeOrOptions as { code?: unknown }).code : code;
    if (warningCode === 'DEP0123') return;
    return emit.apply(this, args);
  } as typeof process.emitWarning;
}
