/** Shared `main` plumbing for the server processes: signals, one-line start failures, exit codes. */
import { UsageError } from './flags';

/** Something started that can be stopped (idempotently). */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Runs `start()`; on SIGINT/SIGTERM calls `stop()` once and exits 0. When start fails, prints one line
 * `kvt <command>: <reason>` on stderr and exits 1 (2 for bad usage).
 */
export async function runProcess(command: string, start: () => Promise<Stoppable>): Promise<void> {
  let running: Stoppable;
  try {
    running = await start();
  } catch (err) {
    process.stderr.write(`kvt ${command}: ${(err as Error).message}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  }
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    running.stop().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`kvt ${command}: stop failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
