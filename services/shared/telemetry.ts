/**
 * OpenTelemetry bootstrap. Imported first by every entry point so the instrumentations patch
 * grpc and pg before they load; the HTTP servers open their spans with
 * tracedRequest. Spans then follow a request from the gateway through gRPC into the database. Spans are exported over OTLP only when OTEL_EXPORTER_OTLP_ENDPOINT is set
 * (through the full NodeSDK, which reads the standard OTEL_* variables). Without an endpoint only a
 * tracer provider is registered: spans still exist, so logs carry trace ids and the trace context
 * crosses process boundaries, but the SDK's exporters (about 15 MB per process) are never loaded.
 *
 * Sampling: unless OTEL_TRACES_SAMPLER says otherwise, a new trace is recorded with probability
 * OTEL_TRACES_SAMPLER_ARG (default 0.1) and every process follows the caller's decision, so a sampled
 * request is still one whole trace from the gateway into Postgres while the other nine in ten cost
 * only non-recording spans (trace ids still reach the logs).
 */
import type http from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { envBool, envStr } from './config';

let shutdown: (() => Promise<void>) | undefined;

function instrumentations(): Instrumentation[] {
  const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  // No HTTP instrumentation: incoming requests get their server span from tracedRequest, and the one
  // outgoing HTTP hop, the gateway's proxy to serving, carries the trace on with injectTraceContext.
  // The instrumentation wrapped every request, its emitters and its response whether or not the trace
  // was sampled (75 of serving's 250 µs per decision once; 8 % of the gateway's CPU on a proxied decision).
  return [new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }), new PgInstrumentation()];
}

/** Writes the current span's W3C trace context into headers a request is about to carry (the serving proxy's). */
export function injectTraceContext(headers: Record<string, string | string[] | undefined>): void {
  propagation.inject(context.active(), headers);
}

/** Default ratio of new traces recorded when OTEL_TRACES_SAMPLER is not set. */
export const DEFAULT_TRACE_SAMPLE_RATIO = 0.1;

/** Parent-based ratio sampling, unless the standard OTEL_TRACES_SAMPLER variable chooses a sampler. */
function defaultSampler() {
  if (envStr('OTEL_TRACES_SAMPLER')) return undefined;
  const { ParentBasedSampler, TraceIdRatioBasedSampler } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const given = envStr('OTEL_TRACES_SAMPLER_ARG');
  const arg = Number(given);
  const ratio = given && arg >= 0 && arg <= 1 ? arg : DEFAULT_TRACE_SAMPLE_RATIO;
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
}

export function startTelemetry(serviceName: string): void {
  if (shutdown || envBool('OTEL_SDK_DISABLED', false)) return;
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const resource = resourceFromAttributes({ 'service.name': `adserver-${serviceName}` });
  if (envStr('OTEL_EXPORTER_OTLP_ENDPOINT')) {
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

/**
 * Runs an HTTP request's handler inside a server span of its own, continuing the caller's trace
 * (W3C traceparent) under the same sampler as every other span. An unsampled request costs a header
 * read and a non-recording span; only a recorded one gets attributes and an end hook, which names it
 * after the route `routeOf` gives once the answer is sent.
 */
export function tracedRequest(req: http.IncomingMessage, res: http.ServerResponse, handle: () => void, routeOf?: () => string): void {
  const parent = req.headers.traceparent ? propagation.extract(ROOT_CONTEXT, req.headers) : ROOT_CONTEXT;
  const method = req.method ?? 'GET';
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER }, parent);
  if (span.isRecording()) {
    span.setAttributes({ 'http.request.method': method, 'url.path': (req.url ?? '/').split('?')[0].slice(0, 256), 'network.peer.address': req.socket.remoteAddress ?? '' });
    res.once('close', () => {
      const route = routeOf?.();
      if (route) span.updateName(`${method} ${route}`).setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
  }
  context.with(trace.setSpan(parent, span), handle);
}

let cachedTracer: ReturnType<typeof trace.getTracer> | undefined;
function tracer() {
  return (cachedTracer ??= trace.getTracer('adserver-http'));
}
