// Telemetry first, so the instrumentations patch grpc, http and pg before they load.
import { startTelemetry } from '../shared/telemetry';
startTelemetry('accounts');

void import('../shared/service-main').then(async ({ main }) => main((await import('./server')).accountsService));
