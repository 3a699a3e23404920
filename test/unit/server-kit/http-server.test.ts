/** startHttpServer (the metrics and status-page servers) on 127.0.0.1, asked by fetch. */
import { describe, expect, it } from 'vitest';
import { startHttpServer } from '../../../server-kit/http-server';

describe('startHttpServer', () => {
  it('answers 500 with the reason when the handler throws or rejects', async () => {
    const endpoint = await startHttpServer('127.0.0.1', 0, (req) => {
      if (req.url === '/throws') throw new Error('no page here');
      return Promise.reject(new Error('the page failed'));
    });
    try {
      const thrown = await fetch(`http://127.0.0.1:${endpoint.port}/throws`);
      expect(thrown.status).toBe(500);
      expect(thrown.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await thrown.text()).toBe('internal error: no page here\n');
      const rejected = await fetch(`http://127.0.0.1:${endpoint.port}/rejects`);
      expect([rejected.status, await rejected.text()]).toEqual([500, 'internal error: the page failed\n']);
    } finally {
      await endpoint.close();
    }
  });

  it('closes without waiting for a request in flight, once however often it is asked', async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    // A handler that never answers (a scrape stuck on a slow count).
    const endpoint = await startHttpServer('127.0.0.1', 0, () => entered());
    const pending = fetch(`http://127.0.0.1:${endpoint.port}/metrics`).then(
      () => 'answered',
      () => 'connection closed',
    );
    await inHandler;
    const closing = endpoint.close();
    expect(endpoint.close()).toBe(closing);
    await closing;
    expect(await pending).toBe('connection closed');
    expect(endpoint.server.listening).toBe(false);
  }, 10_000);

  it('says which address it cannot listen on, and why', async () => {
    await expect(startHttpServer('192.0.2.1', 0, () => undefined)).rejects.toThrow(/^cannot listen on 192\.0\.2\.1:0: .*EADDRNOTAVAIL/);
  });
});
