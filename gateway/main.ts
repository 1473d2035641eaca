// Telemetry first, so the instrumentations patch http, express and grpc before they load.
import { startTelemetry } from '../services/shared/telemetry';
startTelemetry('gateway');

void (async () => {
  const { setLogComponent, log, errorFields } = await import('../services/shared/log');
  const { startGateway } = await import('./server');
  const { stopTelemetry } = await import('../services/shared/telemetry');
  setLogComponent('gateway');
  try {
    const gw = await startGateway();
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info('stopping', { signal });
      await gw.close(10_000);
      await stopTelemetry();
      log.info('stopped');
      process.exit(0);
    };
    process.on('SIGTERM', () => void stop('SIGTERM'));
    process.on('SIGINT', () => void stop('SIGINT'));
  } catch (err) {
    log.error('failed to start', errorFields(err));
    process.exit(1);
  }
})();
