// Telemetry first, so the instrumentations patch http, express and grpc before they load.
import { startTelemetry } from '../services/shared/telemetry';
startTelemetry('gateway');

void (async () => {
  const { runProcess } = await import('../services/shared/lifecycle');
  const { startGateway } = await import('./server');
  runProcess('gateway', async () => {
    const gw = await startGateway();
    return { stop: () => gw.close(10_000) };
  });
})();
