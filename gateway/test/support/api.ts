/**
 * What tests use to talk to the platform started by global-setup: HTTPS requests to the gateway
 * (trusting its self-signed certificate, as a careful client would) and new accounts through the
 * accounts service's gRPC API.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { accounts } from '../../../services/shared/grpc/clients';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: http.IncomingHttpHeaders;
  text: string;
}

const ca = () => fs.readFileSync(process.env.TEST_CA_FILE!, 'utf8');
let agent: https.Agent | undefined;
function httpsAgent(): https.Agent {
  agent ??= new https.Agent({ ca: ca(), keepAlive: true, maxSockets: 64 });
  return agent;
}

export const gatewayPort = () => Number(process.env.GATEWAY_HTTPS_PORT);
export const httpPort = () => Number(process.env.GATEWAY_HTTP_PORT);

export interface RequestOptions {
  headers?: Record<string, string>;
  /** Sent as is (string/Buffer) instead of JSON-encoding `body`. */
  raw?: string | Buffer;
  plainHttp?: boolean;
  port?: number;
  /**
   * A connection of its own rather than a pooled keep-alive one: a large body written onto a pooled
   * connection the server is just closing for idleness fails with EPIPE (seen in CI with a 7 MB upload).
   */
  freshConnection?: boolean;
}

export function request<T = any>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
  const payload = opts.raw ?? (body === undefined ? undefined : JSON.stringify(body));
  const headers: Record<string, string> = { Accept: 'application/json', ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}), ...opts.headers };
  if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
  const mod = opts.plainHttp ? http : https;
  return new Promise((resolve, reject) => {
    // A server may answer before it has read the whole body (a refusal): the answer is what counts,
    // not the EPIPE of the rest of the body that it no longer reads.
    let answered = false;
    const req = mod.request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port: opts.port ?? (opts.plainHttp ? httpPort() : gatewayPort()),
        method,
        path,
        headers,
        agent: opts.plainHttp ? undefined : opts.freshConnection ? new https.Agent({ ca: ca(), keepAlive: false }) : httpsAgent(),
        timeout: 30_000,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = undefined;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T, headers: res.headers, text });
        });
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${path}`)));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A client bound to one API key (and to a gateway port other than the shared platform's, if given). */
export function as(key: string, port?: number) {
  const auth = { Authorization: `Basic ${key}` };
  const withAuth = (o?: RequestOptions): RequestOptions => ({ port, ...o, headers: { ...auth, ...o?.headers } });
  return {
    key,
    get: <T = any>(path: string, o?: RequestOptions) => request<T>('GET', path, undefined, withAuth(o)),
    post: <T = any>(path: string, body?: unknown, o?: RequestOptions) => request<T>('POST', path, body ?? {}, withAuth(o)),
    put: <T = any>(path: string, body?: unknown, o?: RequestOptions) => request<T>('PUT', path, body ?? {}, withAuth(o)),
    del: <T = any>(path: string, o?: RequestOptions) => request<T>('DELETE', path, undefined, withAuth(o)),
    request: <T = any>(method: string, path: string, body?: unknown, o?: RequestOptions) => request<T>(method, path, body, withAuth(o)),
  };
}

export type Client = ReturnType<typeof as>;

export interface TestAccount {
  id: number;
  testKey: string;
  liveKey: string;
  test: Client;
  live: Client;
}

let seq = 0;
/** A fresh account (so every test file has its own tenant) with a test and a live key. */
export async function newAccount(features: string[] = []): Promise<TestAccount> {
  const res = await accounts.createAccount({ name: `Test account ${process.pid}-${++seq}`, email: '', password: '', features });
  return { id: res.account!.id, testKey: res.testKey, liveKey: res.liveKey, test: as(res.testKey), live: as(res.liveKey) };
}

/** Asserts the spec's error shape and returns the body for further checks. */
export function expectError(res: ApiResponse, status: number, version: 'v1' | 'v2'): any {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { object: 'error', http_status: status } });
  expect(typeof res.body.type).toBe('string');
  expect(typeof res.body.message).toBe('string');
  expect(res.body.message.length).toBeGreaterThan(5);
  if (version === 'v1') expect(res.body.status).toBe(status);
  else expect(res.body.status).toBeUndefined();
  return res.body;
}

/** The `parameters` entry for a field, asserting there is one. */
export function paramFor(body: any, field: string): { field: string; type: string; message: string } {
  const p = (body.parameters ?? []).find((x: { field: string }) => x.field === field);
  expect(p).toBeDefined();
  return p;
}

afterAll(() => agent?.destroy());
