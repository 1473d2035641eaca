import { envOneOf } from './config';
import { trace } from '@opentelemetry/api';

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const threshold = ORDER[envOneOf('LOG_LEVEL', Object.keys(ORDER) as Level[], 'info')];
let component = 'platform';

export function setLogComponent(name: string): void {
  component = name;
}

/** One JSON object per line, with the active trace id so logs join traces. Never pass secrets. */
function write(level: Level, msg: string, fields?: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  const span = trace.getActiveSpan();
  const ctx = span?.spanContext();
  const line: Record<string, unknown> = { time: new Date().toISOString(), level, component, msg, ...fields };
  if (ctx && ctx.traceId !== '00000000000000000000000000000000') {
    line.trace_id = ctx.traceId;
    line.span_id = ctx.spanId;
  }
  const out = level === 'error' || level === 'warn' ? process.stderr : process.stdout;
  out.write(`${JSON.stringify(line)}\n`);
}

export const log = {
  debug: (msg: string, f?: Record<string, unknown>) => write('debug', msg, f),
  info: (msg: string, f?: Record<string, unknown>) => write('info', msg, f),
  warn: (msg: string, f?: Record<string, unknown>) => write('warn', msg, f),
  error: (msg: string, f?: Record<string, unknown>) => write('error', msg, f),
};

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}
