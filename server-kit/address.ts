/**
 * `host:port` addresses as the processes take them in flags and send them to each other: an IPv6
 * literal host goes in brackets (`[::1]:9090`), as gRPC and URLs write it, and a port is 1–65535.
 */

/** `host:port`, with the host bracketed when it is an IPv6 literal (it holds a ':'). */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):(\d{1,5})$/;

/** The host (brackets kept) and port of `host:port` or `[v6]:port`; undefined when malformed or the port is outside 1–65535. */
export function parseHostPort(address: string): { host: string; port: number } | undefined {
  const match = HOST_PORT.exec(address);
  if (!match) return undefined;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { host: match[1], port } : undefined;
}
