/**
 * `kvt couch`: serves a scope's key-value tables as CouchDB databases over CouchDB's HTTP replication
 * API (couch/), so that PouchDB and CouchDB replicate with kvt unmodified. Runs until SIGINT/SIGTERM.
 */
import { CouchServer } from '../couch/server';
import { COUCH_ENV_PREFIX, COUCH_OPTIONS, loadCouchConfig } from '../couch/config';
import { helpText } from '../server-kit/flags';
import { jsonLogger } from '../server-kit/log';
import { runProcess } from '../server-kit/main';

const SUMMARY = "Serves a scope's key-value tables as CouchDB databases (CouchDB's replication API over HTTP): PouchDB and CouchDB replicate with it unmodified. Databases are created by PUT /{db}.";

/** Entry point of `kvt couch`. */
export async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText('kvt couch [options]', SUMMARY, COUCH_OPTIONS, COUCH_ENV_PREFIX) + '\n');
    return;
  }
  await runProcess('couch', async () => {
    const config = loadCouchConfig(argv, process.env);
    const logger = jsonLogger('couch', config.logLevel);
    logger.info('couch config', { ...config });
    const server = await CouchServer.start(config, logger);
    logger.info('couch started', {
      port: server.port,
      host: config.host,
      scope: config.scope,
      controller: config.controller,
      tls: config.tlsCert !== undefined,
      auth: config.dataToken !== undefined || config.adminToken !== undefined,
    });
    return server;
  });
}
