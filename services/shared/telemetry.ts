/**
 * OpenTelemetry bootstrap. Imported first by every entry point so the instrumentations patch
 * http, express, grpc and pg before they load; spans then follow a request from the gateway through
 * gRPC into the database. Spans are exported over OTLP only when OTEL_EXPORTER_OTLP_ENDPOINT is set
 * (through the full NodeSDK, which reads the standard OTEL_* variables). Without an endpoint only a
 * tracer provider is registered: spans still exist, so logs carry trace ids and the trace context
 * crosses process boundaries, but the SDK's exporters (about 15 MB per process) are never loaded.
 *
 * Sampling: unless OTEL_TRACES_SAMPLER says otherwise, a new trace is recorded with probability
 * OTEL_TRACES_SAMPLER_ARG (default 0.1) and every process follows the caller's decision, so a sampled
 * request is still one whole trace from the gateway into Postgres while the other nine in ten cost
 * only non-recording spans (trace ids still reach the logs). Express middleware and router layers get
 * no spans of their own: the HTTP server span and the route handler's span say where time went.
 */
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { envBool } from './config';

let shutdown: (() => Promise<void>) | undefined;

function instrumentations(): Instrumentation[] {
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation, ExpressLayerType } = require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  return [
    new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => req.url === '/metrics' || req.url === '/healthz' || req.url === '/readyz' || req.url === '/livez' }),
    new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
    new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
    new PgInstrumentation(),
  ];
}

/** Default ratio of new traces recorded when OTEL_TRACES_SAMPLER is not set. */
export const DEFAULT_TRACE_SAMPLE_RATIO = 0.1;

/** Parent-based ratio sampling, unless the standard OTEL_TRACES_SAMPLER variable chooses a sampler. */
function defaultSampler() {
  if (process.env.OTEL_TRACES_SAMPLER) return undefined;
  const { ParentBasedSampler, TraceIdRatioBasedSampler } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const arg = Number(process.env.OTEL_TRACES_SAMPLER_ARG);
  const ratio = process.env.OTEL_TRACES_SAMPLER_ARG && arg >= 0 && arg <= 1 ? arg : DEFAULT_TRACE_SAMPLE_RATIO;
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
}

export function startTelemetry(serviceName: string): void {
  if (shutdown || envBool('OTEL_SDK_DISABLED', false)) return;
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const resource = resourceFromAttributes({ 'service.name': `adserver-${serviceName}` });
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    const sdk = new NodeSDK({ resource, traceExporter: new OTLPTraceExporter(), instrumentations: instrumentations(), sampler: defaultSampler() });
    sdk.start();
    shutdown = () => sdk.shutdown();
    return;
  }
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const provider = new NodeTracerProvider({ resource, sampler: defaultSampler() });
  provider.register();
  registerInstrumentations({ tracerProvider: provider, instrumentations: instrumentations() });
  shutdown = () => provider.shutdown();
}

export async function stopTelemetry(): Promise<void> {
  await shutdown?.().catch(() => undefined);
}
