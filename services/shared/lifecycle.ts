import { errorFields, log, setLogComponent } from './log';
import { stopTelemetry } from './telemetry';

/** A started process: how it stops (in-flight work first, then its connections). */
export interface Running {
  /** Stops taking work, lets what is in flight finish, closes what it holds; what it returns is logged. */
  stop(): Promise<Record<string, unknown> | void>;
}

/**
 * The one lifecycle of every platform process (services, serving, gateway): start, then on SIGTERM
 * or SIGINT stop once (readiness goes first inside `stop`, in-flight work finishes, connections
 * close), flush telemetry, exit 0. A failed start is logged and exits 1; an unhandled rejection is
 * logged, never fatal.
 */
export function runProcess(component: string, start: () => Promise<Running>): void {
  setLogComponent(component);
  process.on('unhandledRejection', (err) => log.error('unhandled rejection', errorFields(err)));
  start().then(
    (running) => {
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info('stopping', { signal });
        const said = await running.stop().catch((err: unknown) => log.error('stop failed', errorFields(err)));
        await stopTelemetry();
        log.info('stopped', said ?? {});
        process.exit(0);
      };
      process.on('SIGTERM', () => void stop('SIGTERM'));
      process.on('SIGINT', () => void stop('SIGINT'));
    },
    (err: unknown) => {
      log.error('failed to start', errorFields(err));
      process.exit(1);
    },
  );
}
