/** `kvt controller`: runs the controller process until SIGINT / SIGTERM. */
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { helpText } from '../proto/runtime/flags';
import { jsonLogger, Logger } from '../proto/runtime/log';
import { runProcess } from '../proto/runtime/main';
import { CONTROLLER_ENV_PREFIX, CONTROLLER_OPTIONS, loadConfig } from './config';
import { ControllerServer } from './server';

const SUMMARY = 'Runs the kvt controller: scopes, key-value tables, placement, routing and the segment-store registry.';

/** Entry point of `kvt controller`. */
export async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText('kvt controller [options]', SUMMARY, CONTROLLER_OPTIONS, CONTROLLER_ENV_PREFIX) + '\n');
    return;
  }
  let started: { server: ControllerServer; logger: Logger } | undefined;
  await runProcess('controller', async () => {
    const config = loadConfig(argv, process.env);
    config.dataDir = path.resolve(config.dataDir);
    const logger = jsonLogger('controller', config.logLevel);
    // grpc-js writes its own diagnostics to stderr; keep stderr for the one-line start failure.
    grpc.setLogger({ error: (...args: unknown[]) => logger.debug('grpc-js', { detail: args.map(String).join(' ') }) });
    logger.info('controller config', { ...config });
    const server = await ControllerServer.start(config, logger);
    started = { server, logger };
    return server;
  });
  // Announced only now that runProcess has installed its SIGINT/SIGTERM handlers (it exits on a failed
  // start): whoever waits for this line may signal at once and still get a clean stop.
  if (started) {
    const { server, logger } = started;
    logger.info('controller started', { port: server.port, host: server.config.host, dataDir: server.config.dataDir });
  }
}
