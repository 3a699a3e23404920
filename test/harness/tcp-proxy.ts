/**
 * A TCP proxy on loopback in front of a real server, for tests that need a connection to break at an
 * exact moment: it passes bytes both ways, and on request holds back the server's answers on the
 * connection of the next large request, until the test cuts that connection. So a client's request
 * reaches the server and is applied there, and the client never hears back (as when the network or
 * a process fails between the two).
 */
import * as net from 'node:net';

/** The connection whose answers are held: `cut` destroys it (both sides). */
export interface HeldConnection {
  cut(): void;
}

/** A proxy listening on 127.0.0.1 that forwards to `target`. */
export class TcpProxy implements AsyncDisposable {
  private readonly sockets = new Set<net.Socket>();
  private arm: { minBytes: number; held: (c: HeldConnection) => void } | undefined;

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  /** Starts a proxy on `port` (0: ephemeral) forwarding to `targetPort` on 127.0.0.1. */
  static async start(targetPort: number, port = 0): Promise<TcpProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (client) => proxy.forward(client, targetPort));
    return proxy;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /**
   * Resolves once a client sends a chunk of at least `minBytes` (a request, not HTTP/2's small
   * control frames): that chunk goes on to the server, but nothing the server sends on that
   * connection reaches the client any more.
   */
  holdAnswersAfterRequest(minBytes: number): Promise<HeldConnection> {
    return new Promise((held) => {
      this.arm = { minBytes, held };
    });
  }

  private forward(client: net.Socket, targetPort: number): void {
    const server = net.connect(targetPort, '127.0.0.1');
    let holding = false;
    for (const s of [client, server]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    const cut = () => {
      client.destroy();
      server.destroy();
    };
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    client.on('data', (chunk: Buffer) => {
      server.write(chunk);
      if (this.arm && chunk.length >= this.arm.minBytes) {
        holding = true;
        this.arm.held({ cut });
        this.arm = undefined;
      }
    });
    server.on('data', (chunk: Buffer) => {
      if (!holding) client.write(chunk);
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
