/**
 * The credentials of a process's own outgoing calls (server-kit/tls.ts): a TLS cluster is TLS
 * throughout, so a process given only --tls-ca (it serves plaintext itself) still calls the others
 * over TLS, trusting that CA — checked against a real TLS gRPC listener on 127.0.0.1.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outgoingCredentials, serverCredentials } from '../../../server-kit/tls';
import { tempDir } from '../../harness/process';
import { makeCertificates } from '../../integration/security-helpers';

const bytes = { serialize: (b: Buffer) => b, deserialize: (b: Buffer) => b };
const definition: grpc.ServiceDefinition = {
  Echo: {
    path: '/kvt.test.Echo/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: bytes.serialize,
    requestDeserialize: bytes.deserialize,
    responseSerialize: bytes.serialize,
    responseDeserialize: bytes.deserialize,
  },
};

describe('outgoingCredentials', () => {
  const dir = tempDir('kvt-tls-unit-');
  const server = new grpc.Server();
  let ca: Buffer;
  let address: string;

  beforeAll(async () => {
    const certs = makeCertificates(path.join(dir.path, 'certs'));
    ca = fs.readFileSync(certs.caCert);
    server.addService(definition, { Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => done(null, call.request) });
    const material = { cert: fs.readFileSync(certs.serverCert), key: fs.readFileSync(certs.serverKey) };
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', serverCredentials(material), (err, p) => (err ? reject(err) : resolve(p))));
    address = `127.0.0.1:${port}`;
  });
  afterAll(() => {
    server.forceShutdown();
    dir.dispose();
  });

  function echo(credentials: grpc.ChannelCredentials): Promise<string> {
    const client = new (grpc.makeGenericClientConstructor(definition, 'Echo'))(address, credentials) as grpc.Client & Record<string, grpc.requestCallback<Buffer>>;
    return new Promise<string>((resolve, reject) => {
      (client.Echo as unknown as (req: Buffer, opts: grpc.CallOptions, cb: grpc.requestCallback<Buffer>) => void)(Buffer.from('ping'), { deadline: Date.now() + 5_000 }, (err, res) => {
        client.close();
        if (err) reject(err);
        else resolve(res!.toString());
      });
    });
  }

  it('calls over TLS, trusting the CA, when the process has only --tls-ca', async () => {
    expect(await echo(outgoingCredentials({ ca }))).toBe('ping');
  });

  it('calls in plaintext without TLS material, which a TLS listener refuses', async () => {
    await expect(echo(outgoingCredentials({}))).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });
});
