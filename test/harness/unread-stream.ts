/**
 * An `ExecuteStream` call over plain HTTP/2 whose client reads nothing until asked to. A grpc-js
 * client cannot be that client: even paused, it reads up to 16 answers ahead into its own buffers
 * (and opens a 4 MiB window for them), so a test could not tell what the store holds from what the
 * client took. Here the answers stay behind HTTP/2 flow control: the client takes at most its 64 KiB
 * window.
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

/** Opens the call on the store at `address` (host:port), sends `messages` and half-closes. */
export function unreadExecuteStream(address: string, messages: StreamMessage[]): UnreadStream {
  const method = kvtPackage().SegmentStore.service.ExecuteStream;
  const session = http2.connect(`http://${address}`);
  session.on('error', () => undefined); // the stream's own events say how the call ended
  const stream = session.request({ ':method': 'POST', ':path': method.path, 'content-type': 'application/grpc', te: 'trailers' });
  stream.pause();
  for (const message of messages) {
    const body = method.requestSerialize(message);
    const head = Buffer.alloc(5);
    head.writeUInt32BE(body.length, 1);
    stream.write(Buffer.concat([head, body]));
  }
  stream.end();
  return {
    readAll: () =>
      new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let status = -1;
        stream.on('trailers', (trailers) => (status = Number(trailers['grpc-status'])));
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          const all = Buffer.concat(chunks);
          const answers: ExecuteStreamResponse[] = [];
          for (let at = 0; at + 5 <= all.length; ) {
            const length = all.readUInt32BE(at + 1);
            answers.push(method.responseDeserialize(all.subarray(at + 5, at + 5 + length)) as ExecuteStreamResponse);
            at += 5 + length;
          }
          resolve({ answers, status });
        });
        stream.resume();
      }),
    close: () => session.destroy(),
  };
}
