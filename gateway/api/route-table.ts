import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';

type Pattern = string | RegExp;
type Method = 'get' | 'post' | 'put' | 'delete' | 'all';

/** "/v2/ad-items" of "/v2/ad-items/custom-html/:id", lower-cased; undefined unless both segments are literal. */
function headOfPattern(p: Pattern): string | undefined {
  const text = typeof p === 'string' ? p : p.source.replace(/^\^/, '').replace(/\\\//g, '/');
  const m = /^(\/[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)(\/|$|\(|\?)/.exec(text);
  if (!m || (typeof p !== 'string' && m[2] === '?')) return undefined;
  return m[1].toLowerCase();
}

/** The same two segments of a request path (express matches case-insensitively, ignoring a final slash). */
function headOfPath(path: string): string {
  const i = path.indexOf('/', 1);
  const j = i < 0 ? -1 : path.indexOf('/', i + 1);
  return (j < 0 ? path : path.slice(0, j)).toLowerCase();
}

/**
 * Express finds a route by trying every mounted route in order; over the catalog's hundreds of routes
 * that scan was a visible share of the gateway's CPU profile. This table keeps one express Router per
 * first two path segments (/v2/ad-items, /v1/zones, ...) and sends each request straight to its
 * segment's router. Order within a router is the order of mounting, and routes under different
 * segments can never match the same path, so the answers are those of one big router. A route whose
 * first two segments are not literal goes to a router every request falls through to last.
 */
export class RouteTable {
  private readonly routers = new Map<string, Router>();
  private readonly rest = Router();
  /** Middleware mounted without a path (e.g. a rewrite of an alias path): runs before the lookup. */
  private readonly pre: RequestHandler[] = [];

  private router(p: Pattern): Router {
    const head = headOfPattern(p);
    if (!head) return this.rest;
    let r = this.routers.get(head);
    if (!r) this.routers.set(head, (r = Router()));
    return r;
  }

  /** Every route in mounting order (the OpenAPI test compares them with the documents). */
  private readonly mounted: { method: Method; path: Pattern }[] = [];

  private add(method: Method, p: Pattern, handlers: RequestHandler[]): this {
    this.mounted.push({ method, path: p });
    this.router(p)[method](p, ...handlers);
    return this;
  }

  get = (p: Pattern, ...h: RequestHandler[]) => this.add('get', p, h);
  post = (p: Pattern, ...h: RequestHandler[]) => this.add('post', p, h);
  put = (p: Pattern, ...h: RequestHandler[]) => this.add('put', p, h);
  delete = (p: Pattern, ...h: RequestHandler[]) => this.add('delete', p, h);
  all = (p: Pattern, ...h: RequestHandler[]) => this.add('all', p, h);

  /**
   * Middleware without a path runs for every request before its router is looked up, so a rewrite of
   * req.url chooses the router; unlike in one big router it also precedes routes mounted before it.
   */
  use = (first: Pattern | RequestHandler, ...h: RequestHandler[]): this => {
    if (typeof first === 'function') this.pre.push(first, ...h);
    else this.router(first).use(first, ...h);
    return this;
  };

  /** Method and path of every route mounted so far. */
  routes(): readonly { method: Method; path: Pattern }[] {
    return this.mounted;
  }

  /** The middleware that dispatches a request to its segment's router. */
  handler(): RequestHandler {
    const dispatch = (req: Request, res: Response, next: NextFunction) => {
      const r = this.routers.get(headOfPath(req.path));
      if (!r) return this.rest(req, res, next);
      r(req, res, (err?: unknown) => (err ? next(err) : this.rest(req, res, next)));
    };
    if (!this.pre.length) return dispatch;
    return (req: Request, res: Response, next: NextFunction) => {
      let i = 0;
      const step = (err?: unknown): void => {
        if (err) return next(err);
        const mw = this.pre[i++];
        if (!mw) {
          dispatch(req, res, next);
          return;
        }
        try {
          const out = mw(req, res, step) as unknown;
          if (out instanceof Promise) out.catch(next);
        } catch (e) {
          next(e);
        }
      };
      step();
    };
  }
}
