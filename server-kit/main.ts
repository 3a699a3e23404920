/** Shared `main` plumbing for the server processes: signals, one-line start failures, exit codes. */
import * as grpc from '@grpc/grpc-js';
import { UsageError } from './flags';
import { errorMessage } from './fault';
import { quietIpServernameWarning } from './tls';

/** A fatal failure for {@link Stoppable.fatal}: `raise` settles `promise` (the first time). */
export class FatalSignal {
  readonly promise: Promise<Error>;
  private resolve!: (err: Error) => void;

  constructor() {
    this.promise = new Promise((resolve) => (this.resolve = resolve));
  }

  raise(err: unknown): void {
    this.resolve(err instanceof Error ? err : new Error(errorMessage(err)));
  }
}

/**
 * A fatal failure that a restart does not cure (a segment store removed from the cluster): its message
 * says what to do instead, and the process does not suggest restarting.
 */
export class PermanentFailure extends Error {
  override readonly name = 'PermanentFailure';
}

/** Something started that can be stopped (idempotently). */
export interface Stoppable {
  stop(): Promise<void>;
  /** Resolves when the process can no longer serve (a failed storage write): it stops and exits 1. */
  fatal?: Promise<Error>;
}

/**
 * Runs `start()`; on SIGINT/SIGTERM calls `stop()` once and exits 0. When start fails, prints one line
 * `kvt <command>: <reason>` on stderr and exits 1 (2 for bad usage); so does a fatal failure later
 * (`Stoppable.fatal`), after stopping, adding "(restart to recover)" unless it is a {@link PermanentFailure}. The signal handlers are installed
 * before `start()` runs, so a signal that arrives as soon as the process announces itself (or even
 * during start) still ends in a clean stop.
 */
export async function runProcess(command: string, start: () => Promise<Stoppable>): Promise<void> {
  // grpc-js writes its own diagnostics to stderr; keep stderr for the one-line start failure.
  grpc.setLogVerbosity(grpc.logVerbosity.NONE);
  quietIpServernameWarning();
  let running: Stoppable | undefined;
  let signalled = false;
  let stopping = false;
  const stopNow = (code = 0) => {
    if (stopping || !running) return;
    stopping = true;
    running.stop().then(
      () => process.exit(code),
      (err) => {
        process.stderr.write(`kvt ${command}: stop failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  const onSignal = () => {
    signalled = true;
    stopNow();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    running = await start();
  } catch (err) {
    process.stderr.write(`kvt ${command}: ${(err as Error).message}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  }
  if (signalled) stopNow();
  void running?.fatal?.then((err) => {
    if (stopping) return;
    process.stderr.write(`kvt ${command}: ${err.message}; stopping${err instanceof PermanentFailure ? '' : ' (restart to recover)'}\n`);
    stopNow(1);
  });
}
