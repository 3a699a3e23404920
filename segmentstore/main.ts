/** `kvt segmentstore`: parses the config, logs it, runs the server until SIGINT/SIGTERM. */
import { runProcess } from '../server-kit/main';
import { jsonLogger } from '../server-kit/log';
import { missingNodeFlags } from '../server-kit/node-flags';
import { loadConfig, segmentStoreHelp } from './config';
import { SegmentStoreServer } from './server';

/** Entry point of `kvt segmentstore`. */
export async function main(argv: string[]): Promise<void> {
  await runProcess('segmentstore', async () => {
    const { config, help } = loadConfig(argv, process.env);
    if (help) {
      process.stdout.write(segmentStoreHelp() + '\n');
      return { stop: async () => undefined };
    }
    const log = jsonLogger('segmentstore', config.logLevel);
    log.info('effective config', { ...config, nodeFlags: process.execArgv });
    const missing = missingNodeFlags();
    if (missing.length > 0) {
      log.warn('started without the recommended node flags: expect frequent full garbage collections under load', {
        missing,
        hint: `node ${missing.join(' ')} bin/kvt.js segmentstore … (kvt cluster and npx kvt pass them)`,
      });
    }
    return SegmentStoreServer.start(config, { log });
  });
}
