// Telemetry first, so the instrumentations patch http and grpc before they load.
import { startTelemetry } from '../shared/telemetry';
startTelemetry('serving');

void import('./server').then(({ runServing }) =>
  runServing().catch((err) => {
    process.stderr.write(`serving failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  }),
);
