/**
 * The store's registration while the controller stays away: one warning when the outage begins, the
 * attempts in between at debug level, and the warning again every `rewarnMs` with the attempts and
 * time so far, so that a log shows a store still waiting rather than one that went quiet.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../controller/config';
import { ControllerServer } from '../../../controller/server';
import { ControllerRegistration } from '../../../segmentstore/registration';
import type { Logger } from '../../../server-kit/log';
import { controllerClient } from '../../integration/controller-helpers';
import { freePort, tempDir } from '../../harness/process';

interface Line {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

function capturingLogger(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}): void => {
      lines.push({ level, msg, fields });
    };
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return log;
}

describe('ControllerRegistration while the controller is unreachable', () => {
  it('warns when the outage begins and again every rewarnMs with the attempts so far, debug in between', async () => {
    const lines: Line[] = [];
    const registration = new ControllerRegistration({
      controller: `127.0.0.1:${await freePort()}`,
      storeId: '00000000-0000-4000-8000-000000000001',
      address: '127.0.0.1:1',
      log: capturingLogger(lines),
      retryMinMs: 10,
      retryMaxMs: 20,
      rewarnMs: 300,
    });
    registration.start();
    const started = Date.now();
    try {
      while (lines.filter((l) => l.level === 'warn').length < 3) {
        if (Date.now() - started > 10_000) throw new Error(`3 warnings expected within 10 s; got ${lines.filter((l) => l.level === 'warn').length} among ${lines.length} lines`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await registration.stop();
    }
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings.map((w) => w.msg)).toEqual(Array(warnings.length).fill('controller unreachable; retrying registration'));
    // The first names no count; each reminder counts every attempt since the outage began.
    expect(warnings[0].fields.attempts).toBeUndefined();
    const reminders = warnings.slice(1, 3).map((w) => w.fields);
    for (const r of reminders) expect(r.failingForMs as number).toBeGreaterThanOrEqual(300);
    expect(reminders[1].failingForMs as number).toBeGreaterThanOrEqual((reminders[0].failingForMs as number) + 300);
    expect(reminders[1].attempts as number).toBeGreaterThan(reminders[0].attempts as number);
    // The attempts between warnings were logged at debug level.
    const debugBefore = lines.slice(0, lines.indexOf(warnings[1])).filter((l) => l.msg === 'registration retry failed').length;
    expect(debugBefore).toBe((reminders[0].attempts as number) - 2);
    expect(lines.some((l) => l.msg === 'registered with controller')).toBe(false);
  });
});

describe('ControllerRegistration when the controller no longer knows the store', () => {
  it('registers again when a heartbeat is answered known=false (a controller with other metadata took the address)', async () => {
    using dir = tempDir('kvt-registration-');
    const port = await freePort();
    // Heartbeats 3 s apart: the controller is replaced well within one interval.
    const controllerOn = (name: string) =>
      ControllerServer.start(loadConfig(['--port', String(port), '--data-dir', path.join(dir.path, name), '--heartbeat-interval-ms', '3000', '--store-timeout-ms', '10000'], {}));
    const lines: Line[] = [];
    const first = await controllerOn('first');
    const registration = new ControllerRegistration({ controller: `127.0.0.1:${port}`, storeId: 'store-1', address: '127.0.0.1:1', log: capturingLogger(lines) });
    registration.start();
    try {
      await until(() => registration.registrations === 1, 'the first registration');
      await first.stop();
      // Its metadata is empty: the next heartbeat is answered, with known=false.
      await using second = await controllerOn('second');
      await until(() => registration.registrations === 2, 'a registration with the second controller');
      const client = controllerClient(`127.0.0.1:${port}`);
      try {
        const { stores } = await client.call<{ stores: { storeId: string; address: string }[] }>('ListSegmentStores', {});
        expect(stores.map((s) => [s.storeId, s.address])).toEqual([['store-1', '127.0.0.1:1']]);
      } finally {
        client.close();
      }
      expect(second.state).toBe('running');
    } finally {
      await registration.stop();
    }
  }, 30_000);
});

/** Polls `check` until it holds (at most 15 s). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); !check(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() - started > 15_000) throw new Error(`not within 15 s: ${what}`);
  }
}
