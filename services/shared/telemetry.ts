/**
 * OpenTelemetry bootstrap. Imported first by every entry point so the instrumentations patch
 * http, express, grpc and pg before they load; spans then follow a request from the gateway through
 * gRPC into the database. Spans are exported over OTLP only when OTEL_EXPORTER_OTLP_ENDPOINT is set;
 * otherwise they still exist locally so logs carry trace ids.
 */
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';

let sdk: NodeSDK | undefined;

export function startTelemetry(serviceName: string): void {
  if (sdk || process.env.OTEL_SDK_DISABLED === 'true') return;
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': `adserver-${serviceName}` }),
    traceExporter: endpoint ? new OTLPTraceExporter() : undefined,
    spanProcessors: endpoint ? undefined : [],
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => req.url === '/metrics' || req.url === '/healthz' }),
      new ExpressInstrumentation(),
      new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
      new PgInstrumentation(),
    ],
  });
  sdk.start();
}

export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
}
