/**
 * docker-compose.yml stays runnable without a Docker engine to try it: every service's command parses
 * with the process's own flags, and ports, advertised addresses and data volumes fit together.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig as loadControllerConfig } from '../../controller/config';
import { loadConfig as loadSegmentStoreConfig } from '../../segmentstore/config';
import { REPO_ROOT } from '../harness/process';

interface Service {
  command: string[];
  ports: string[];
  volumes: string[];
}

/**
 * The services of docker-compose.yml, reading only what this file writes as JSON-style flow lists
 * (`command: [...]`, `ports: [...]`, `volumes: [...]`, possibly over several lines).
 */
function composeServices(): Map<string, Service> {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
  const body = text.slice(text.indexOf('\nservices:\n'), text.indexOf('\nvolumes:\n'));
  const services = new Map<string, Service>();
  for (const block of body.split(/\n(?= {2}[\w-]+:\n)/).slice(1)) {
    const name = /^ {2}([\w-]+):/.exec(block)![1];
    const list = (key: string): string[] => {
      const m = new RegExp(`\\n\\s+${key}: (\\[[^\\]]*\\])`).exec(block);
      return m ? (JSON.parse(m[1]) as string[]) : [];
    };
    services.set(name, { command: list('command'), ports: list('ports'), volumes: list('volumes') });
  }
  return services;
}

describe('docker-compose.yml', () => {
  const services = composeServices();
  const controller = services.get('controller')!;
  const stores = [...services].filter(([name]) => name.startsWith('segmentstore-'));

  it('runs a controller and two segment stores, as npm start does', () => {
    expect(controller.command[0]).toBe('controller');
    expect(stores.map(([name]) => name)).toEqual(['segmentstore-0', 'segmentstore-1']);
  });

  it('gives the controller flags it takes, published on its own port, with its data on a volume', () => {
    const config = loadControllerConfig(controller.command.slice(1), {});
    expect(config.host).toBe('0.0.0.0');
    expect(controller.ports).toEqual([`${config.port}:${config.port}`]);
    expect(controller.volumes.map((v) => v.split(':')[1])).toEqual([config.dataDir]);
  });

  it('gives each store flags it takes: the controller service, an address others reach, a data volume of its own', () => {
    const controllerPort = loadControllerConfig(controller.command.slice(1), {}).port;
    const volumes = new Set<string>();
    for (const [name, store] of stores) {
      expect(store.command[0]).toBe('segmentstore');
      const { config } = loadSegmentStoreConfig(store.command.slice(1), {});
      expect(config.host).toBe('0.0.0.0');
      expect(config.controller).toBe(`controller:${controllerPort}`);
      expect(config.advertiseAddress).toBe(`${name}:${config.port}`);
      expect(store.ports).toEqual([`${config.port}:${config.port}`]);
      const [volume, target] = store.volumes[0].split(':');
      expect(target).toBe(config.dataDir);
      volumes.add(volume);
    }
    // A store is its data directory (STORE_ID): two stores on one volume would be one store twice.
    expect(volumes.size).toBe(stores.length);
  });
});
