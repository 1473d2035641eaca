// Telemetry first, so the instrumentations patch http and grpc before they load.
import { startTelemetry } from '../shared/telemetry';
startTelemetry('serving');

void Promise.all([import('../shared/lifecycle'), import('./server')]).then(([{ runProcess }, { runServing }]) => runProcess('serving', runServing));
