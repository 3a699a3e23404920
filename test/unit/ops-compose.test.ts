/**
 * docker-compose.yml and the Dockerfile stay runnable without a Docker engine to try them (CI has
 * none): the compose file is parsed with a YAML library; every kvt command, flag and environment
 * variable in it is one that `kvt … --help` lists (and the process's own config accepts); every
 * healthcheck runs a command the image has; volumes, ports and dependencies fit together; the
 * Dockerfile builds in stages and runs as a user other than root, without dev dependencies.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig as loadControllerConfig } from '../../controller/config';
import { loadConfig as loadSegmentStoreConfig } from '../../segmentstore/config';
import { KVT_BIN, REPO_ROOT } from '../harness/process';

interface Service {
  build?: unknown;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const compose = parse(fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = Object.entries(compose.services);
/** The services run from this repository's image. */
const kvtServices = services.filter(([, s]) => s.build === '.');
const storeServices = kvtServices.filter(([, s]) => s.command?.[0] === 'segmentstore');
const controller = compose.services.controller;

/** What `kvt <command> --help` lists: its flags and its environment variables. */
const helpOf = (() => {
  const cache = new Map<string, { flags: Set<string>; env: Set<string> }>();
  return (command: string) => {
    let help = cache.get(command);
    if (!help) {
      const text = execFileSync(process.execPath, [KVT_BIN, command, '--help'], { cwd: REPO_ROOT, encoding: 'utf8' });
      help = { flags: new Set([...text.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1])), env: new Set([...text.matchAll(/\[env (KVT_[A-Z_]+)\]/g)].map((m) => m[1])) };
      cache.set(command, help);
    }
    return help;
  };
})();

/** The value after `--flag` in a command line. */
function flag(command: string[], name: string): string | undefined {
  const i = command.indexOf(`--${name}`);
  return i < 0 ? undefined : command[i + 1];
}

/** The stages of the Dockerfile: each FROM with the instructions after it. */
function dockerStages(): Array<{ from: string; name?: string; lines: string[] }> {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages: Array<{ from: string; name?: string; lines: string[] }> = [];
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const from = /^FROM (\S+)(?: AS (\S+))?$/i.exec(line);
    if (from) stages.push({ from: from[1], name: from[2], lines: [] });
    else stages[stages.length - 1].lines.push(line);
  }
  return stages;
}

describe('docker-compose.yml', () => {
  it('runs a controller, three segment stores and Cassandra', () => {
    expect(services.map(([name]) => name).sort()).toEqual(['cassandra', 'controller', 'segmentstore-0', 'segmentstore-1', 'segmentstore-2']);
    expect(controller.command?.[0]).toBe('controller');
    expect(storeServices.map(([name]) => name)).toEqual(['segmentstore-0', 'segmentstore-1', 'segmentstore-2']);
    expect(compose.services.cassandra.image).toMatch(/^cassandra:\d/);
  });

  it('uses only commands, flags and environment variables that `kvt … --help` lists, with values the processes accept', () => {
    for (const [name, service] of kvtServices) {
      const [command, ...args] = service.command!;
      const help = helpOf(command);
      for (const arg of args.filter((a) => a.startsWith('--'))) expect(help.flags, `${name}: ${arg}`).toContain(arg);
      for (const variable of Object.keys(service.environment ?? {})) expect(help.env, `${name}: ${variable}`).toContain(variable);
      const env = { ...service.environment };
      if (command === 'controller') expect(() => loadControllerConfig(args, env)).not.toThrow();
      else expect(() => loadSegmentStoreConfig(args, env)).not.toThrow();
    }
  });

  it('checks every kvt process through the gRPC health service, with a command the image has, on the port it serves', () => {
    const stages = dockerStages();
    const runtime = stages[stages.length - 1];
    const workdir = runtime.lines
      .filter((l) => l.startsWith('WORKDIR '))
      .pop()!
      .split(' ')[1];
    const copied = runtime.lines.filter((l) => l.startsWith('COPY ')).map((l) => l.split(/\s+/).pop()!);
    for (const [name, service] of kvtServices) {
      const test = service.healthcheck?.test;
      expect(test, name).toEqual(['CMD', 'node', 'bin/kvt.js', 'health', `127.0.0.1:${flag(service.command!, 'port')}`]);
      // `node` is the base image's; bin/kvt.js (and the dist/ it loads) are copied into the working directory.
      expect(runtime.from, name).toMatch(/^node:\d+/);
      expect(workdir).toBe('/kvt');
      expect(copied).toEqual(expect.arrayContaining(['./bin/kvt.js', './dist', './node_modules']));
    }
    // The command takes the address as its one argument.
    expect(execFileSync(process.execPath, [KVT_BIN, 'health', '--help'], { cwd: REPO_ROOT, encoding: 'utf8' })).toMatch(/^Usage: kvt health HOST:PORT/);
    // Cassandra's own image has cqlsh.
    expect(compose.services.cassandra.healthcheck?.test.slice(0, 2)).toEqual(['CMD', 'cqlsh']);
  });

  it('gives every data directory a named volume of its own, each declared once', () => {
    const used: string[] = [];
    for (const [name, service] of services) {
      for (const mount of service.volumes ?? []) {
        const [volume, target] = mount.split(':');
        expect(Object.keys(compose.volumes), `${name}: ${volume}`).toContain(volume);
        used.push(volume);
        if (service.build === '.') expect(target, name).toBe(flag(service.command!, 'data-dir'));
      }
      if (service.build === '.') expect(service.volumes, name).toHaveLength(1);
    }
    expect(used.sort()).toEqual(Object.keys(compose.volumes).sort());
    expect(compose.services.cassandra.volumes).toEqual(['cassandra-data:/var/lib/cassandra']);
  });

  it('publishes each port a process listens on, at the same number on the host, no host port twice', () => {
    const hostPorts: string[] = [];
    for (const [name, service] of kvtServices) {
      const listening = ['port', 'metrics-port', 'http-port'].map((f) => flag(service.command!, f)).filter((p): p is string => p !== undefined);
      expect(service.ports!.map((p) => p.split(':')[1]).sort(), name).toEqual(listening.sort());
      for (const p of service.ports!) {
        const [host, container] = p.split(':');
        expect(host, name).toBe(container);
        hostPorts.push(host);
      }
      expect(flag(service.command!, 'host'), name).toBe('0.0.0.0');
    }
    hostPorts.push(...compose.services.cassandra.ports!.map((p) => p.split(':')[0]));
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
  });

  it('starts each store once the controller is healthy, pointed at the controller, advertising its own service name', () => {
    const controllerPort = flag(controller.command!, 'port');
    expect(controller.healthcheck).toBeDefined();
    for (const [name, service] of services) for (const dependency of Object.keys(service.depends_on ?? {})) expect(compose.services, `${name} → ${dependency}`).toHaveProperty(dependency);
    for (const [name, store] of storeServices) {
      expect(store.depends_on, name).toEqual({ controller: { condition: 'service_healthy' } });
      const { config } = loadSegmentStoreConfig(store.command!.slice(1), { ...store.environment });
      expect(config.controller, name).toBe(`controller:${controllerPort}`);
      expect(config.advertiseAddress, name).toBe(`${name}:${config.port}`);
    }
  });
});

describe('Dockerfile', () => {
  const stages = dockerStages();
  const runtime = stages[stages.length - 1];

  it('builds in one stage and runs from another, as a user other than root', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const build = stages.find((s) => s.name === 'build')!;
    expect(build.lines.some((l) => /^RUN npm install .*&& npm prune --omit=dev/.test(l))).toBe(true);
    const user = runtime.lines
      .filter((l) => l.startsWith('USER '))
      .pop()
      ?.split(' ')[1];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    // The runtime stage installs nothing: it takes the build stage's pruned node_modules.
    expect(runtime.lines.some((l) => /npm (install|ci)/.test(l))).toBe(false);
    expect(runtime.lines).toContain('COPY --from=build /kvt/node_modules ./node_modules');
  });

  it('copies from the build context only what exists in a clean checkout, and nothing the build makes that it lacks', () => {
    const build = stages.find((s) => s.name === 'build')!;
    for (const line of build.lines.filter((l) => l.startsWith('COPY '))) {
      for (const source of line.split(/\s+/).slice(1, -1)) expect(fs.existsSync(path.join(REPO_ROOT, source)), source).toBe(true);
    }
    const ignored = fs.readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', 'data']));
  });

  it('copies every folder the build compiles (tsconfig.json `include`), so that `tsc` in the image builds what a checkout builds', () => {
    const build = stages.find((s) => s.name === 'build')!;
    const copied = build.lines.filter((l) => l.startsWith('COPY ')).flatMap((l) => l.split(/\s+/).slice(1, -1));
    const tsconfig = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
    const folders = tsconfig.include.map((glob) => glob.split('/')[0]);
    expect(folders.length).toBeGreaterThan(5);
    for (const folder of folders) expect(copied, folder).toContain(folder);
  });

  it('needs no dev dependency at run time: the servers, the client and the command import only dependencies', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const runtimeDirs = ['proto', 'server-kit', 'controller', 'segmentstore', 'client', 'bin'];
    const offenders: string[] = [];
    const visit = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) visit(file);
        else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
          const source = fs.readFileSync(file, 'utf8');
          for (const [, spec] of source.matchAll(/(?:^import (?!type )[^'"]*from |require\()'((?:@[\w.-]+\/)?[\w.-]+)/gm)) {
            if (spec in pkg.devDependencies && !(spec in pkg.dependencies)) offenders.push(`${path.relative(REPO_ROOT, file)}: ${spec}`);
          }
        }
      }
    };
    for (const dir of runtimeDirs) visit(path.join(REPO_ROOT, dir));
    expect(offenders).toEqual([]);
  });
});
