/** A demand endpoint on loopback for the programmatic tests: what it does with each bid request, and every request and notice it got. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BidRequest } from 'iab-openrtb/dist/v26';

export type Behaviour = (req: BidRequest, res: http.ServerResponse, bidder: Bidder) => void;

/** Answers each bid request with `answer(request, the bidder's URL)` as JSON, or 204 (no bid) when it gives nothing. */
export function answering(answer: (r: BidRequest, base: string) => unknown): Behaviour {
  return (r, res, bidder) => {
    const body = answer(r, bidder.url);
    if (!body) return void res.writeHead(204).end();
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

export class Bidder {
  readonly requests: BidRequest[] = [];
  /** The paths and queries of the notices (GET requests) it got. */
  readonly notices: string[] = [];
  url = '';
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method === 'GET') {
        this.notices.push(req.url ?? '');
        return this.notice ? this.notice(req.url ?? '', res) : void res.end();
      }
      const parsed = JSON.parse(body) as BidRequest;
      this.requests.push(parsed);
      this.behaviour(parsed, res, this);
    });
  });

  /** How it answers a notice (an empty 200 by default): a win notice may answer with the markup of a bid without adm. */
  constructor(public behaviour: Behaviour, public notice?: (path: string, res: http.ServerResponse) => void) {}

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  /** Waits for `n` notices (they are sent after the decision, without waiting). */
  async noticesArrived(n: number): Promise<string[]> {
    for (let i = 0; i < 100 && this.notices.length < n; i++) await new Promise((r) => setTimeout(r, 20));
    return this.notices;
  }
}
