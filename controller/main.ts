/** `kvt controller`: runs the controller process until SIGINT / SIGTERM. */
import * as path from 'node:path';
import { helpText } from '../server-kit/flags';
import { jsonLogger } from '../server-kit/log';
import { runProcess } from '../server-kit/main';
import { CONTROLLER_ENV_PREFIX, CONTROLLER_OPTIONS, loadConfig } from './config';
import { ControllerServer } from './server';

const SUMMARY = 'Runs the kvt controller: scopes, key-value tables, placement, routing and the segment-store registry.';

/** Entry point of `kvt controller`. */
export async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText('kvt controller [options]', SUMMARY, CONTROLLER_OPTIONS, CONTROLLER_ENV_PREFIX) + '\n');
    return;
  }
  await runProcess('controller', async () => {
    const config = loadConfig(argv, process.env);
    config.dataDir = path.resolve(config.dataDir);
    const logger = jsonLogger('controller', config.logLevel);
    logger.info('controller config', { ...config });
    const server = await ControllerServer.start(config, logger);
    // runProcess installed its SIGINT/SIGTERM handlers before start: a signal right after this line
    // still ends in a clean stop.
    logger.info('controller started', { port: server.port, host: server.config.host, dataDir: server.config.dataDir, metricsPort: server.metricsPort, httpPort: server.httpPort });
    return server;
  });
}
