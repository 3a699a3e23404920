/**
 * Calls over plain HTTP/2 whose client reads nothing until asked to: an `ExecuteStream` call, or
 * unary calls on one connection. A grpc-js client cannot be that client: even paused, it reads up to
 * 16 answers ahead into its own buffers (and opens a 4 MiB window for them), so a test could not tell
 * what the store holds from what the client took. Here the answers stay behind HTTP/2 flow control:
 * the client takes at most its 64 KiB window.
 */
import * as http2 from 'node:http2';
import { kvtPackage } from '../../proto/load';
import type { ExecuteStreamResponse } from '../../proto/messages';

/** An `ExecuteStreamRequest` as the loader's serializer takes it (fields left out are defaults). */
export interface StreamMessage {
  id: number;
  request?: object | null;
  iterate?: object | null;
}

/** The call: `readAll` starts reading, decodes every answer and resolves with them and the grpc-status. */
export interface UnreadStream {
  readAll(): Promise<{ answers: ExecuteStreamResponse[]; status: number }>;
  close(): void;
}

/** Unary calls on one connection: `readAll` starts reading and resolves with each call's answer (null when it failed) and grpc-status. */
export interface UnreadCalls<Res> {
  readAll(): Promise<{ answer: Res | null; status: number }[]>;
  /** Drops the connection: every call not answered yet is cancelled. */
  close(): void;
}

type Method = { path: string; requestSerialize(value: unknown): Buffer; responseDeserialize(bytes: Buffer): unknown };

/** Starts a call of `method` on `session` that sends `messages`, half-closes and then reads nothing. */
function unreadCall(session: http2.ClientHttp2Session, method: Method, messages: unknown[]): http2.ClientHttp2Stream {
  const stream = session.request({ ':method': 'POST', ':path': method.path, 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => undefined); // a call that is never read ends with its connection; readCall reports errors
  stream.pause();
  for (const message of messages) {
    const body = method.requestSerialize(message);
    const head = Buffer.alloc(5);
    head.writeUInt32BE(body.length, 1);
    stream.write(Buffer.concat([head, body]));
  }
  stream.end();
  return stream;
}

/** Resumes `stream` and resolves with the messages it carried, decoded, and its grpc-status. */
function readCall<Res>(stream: http2.ClientHttp2Stream, method: Method): Promise<{ answers: Res[]; status: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status = -1;
    const statusOf = (headers: http2.IncomingHttpHeaders) => {
      if (headers['grpc-status'] !== undefined) status = Number(headers['grpc-status']);
    };
    stream.on('response', statusOf); // a call failed at once answers with headers only
    stream.on('trailers', statusOf);
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('end', () => {
      const all = Buffer.concat(chunks);
      const answers: Res[] = [];
      for (let at = 0; at + 5 <= all.length;) {
        const length = all.readUInt32BE(at + 1);
        answers.push(method.responseDeserialize(all.subarray(at + 5, at + 5 + length)) as Res);
        at += 5 + length;
      }
      resolve({ answers, status });
    });
    stream.resume();
  });
}

function connect(address: string): http2.ClientHttp2Session {
  const session = http2.connect(`http://${address}`);
  session.on('error', () => undefined); // the streams' own events say how each call ended
  return session;
}

/** Opens an `ExecuteStream` call on the store at `address` (host:port), sends `messages` and half-closes. */
export function unreadExecuteStream(address: string, messages: StreamMessage[]): UnreadStream {
  const method = kvtPackage().SegmentStore.service.ExecuteStream as unknown as Method;
  const session = connect(address);
  const stream = unreadCall(session, method, messages);
  return {
    readAll: () => readCall<ExecuteStreamResponse>(stream, method),
    close: () => session.destroy(),
  };
}

/** Sends one unary call of SegmentStore method `name` per request, all on one connection, to the store at `address`. */
export function unreadUnaryCalls<Res>(address: string, name: string, requests: object[]): UnreadCalls<Res> {
  const method = kvtPackage().SegmentStore.service[name] as unknown as Method;
  const session = connect(address);
  const streams = requests.map((request) => unreadCall(session, method, [request]));
  return {
    readAll: async () => {
      const read = await Promise.all(streams.map((stream) => readCall<Res>(stream, method)));
      session.close();
      return read.map(({ answers, status }) => ({ answer: answers[0] ?? null, status }));
    },
    close: () => session.destroy(),
  };
}
