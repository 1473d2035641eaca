import type { Request, Response, Router } from 'express';
import type { Resource } from '../../../proto/gen/adserver/resources/v1/resources';
import {
  type WalletNotice,
  type WalletTransaction,
} from '../../../proto/gen/adserver/selfserve/v1/selfserve';
import { getKind, type FieldSpec } from '../../../services/shared/catalog';
import { moneyNumber, moneyText } from '../../../services/shared/money';
import { ctxOf } from '../../context';
import { apiErrors } from '../../errors';
import { markReplayed } from '../../idempotency';
import { asCaller } from '../backend';
import { selfServe } from '../../../services/shared/grpc/clients';
import { actionBody, parseId, parseListParams, parseShapeParams } from '../params';
import { shape } from '../shape';
import { documentedRoute, type JsonSchema } from '../route-docs';
import { viewOf } from '../views';

const CUSTOMERS = '/v2/self-serve/customers';
const ORDERS = '/v2/self-serve/orders';

const LIST_QUERY = {
  limit: { type: 'integer', min: 1, max: 100, default: 10, description: 'Page size.' },
  offset: { type: 'integer', min: 0, default: 0, description: 'Items to skip.' },
} as const;

const TRANSACTION_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    object: { const: 'wallet_transaction' },
    self: { type: 'string' },
    id: { type: 'integer' },
    customer: { type: 'integer' },
    type: { type: 'string', description: 'What moved the money (a deposit, an order, a release of a hold).' },
    amount: { type: 'number', description: 'Signed amount, two decimals.' },
    balance: { type: 'number', description: 'The wallet balance after this transaction.' },
    order: { type: ['integer', 'null'] },
    created_date: { type: 'string', description: 'YYYY-MM-DD HH:MM:SS, UTC.' },
  },
};

const NOTICE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    object: { const: 'wallet_notice' },
    id: { type: 'integer' },
    customer: { type: 'integer' },
    type: { enum: ['low_funds', 'zero_funds'] },
    balance: { type: 'number' },
    threshold: { type: 'number' },
    created_date: { type: 'string', description: 'YYYY-MM-DD HH:MM:SS, UTC.' },
  },
};

/** Money crosses gRPC as decimal text; the API shows it as a number (two decimals at most). */
const money = moneyNumber;

function transactionOut(t: WalletTransaction) {
  return {
    object: 'wallet_transaction',
    self: `${CUSTOMERS}/${t.customerId}/transactions`,
    id: t.id,
    customer: t.customerId,
    type: t.type,
    amount: money(t.amount),
    balance: money(t.balance),
    order: t.orderId || null,
    created_date: t.createdAt,
  };
}

function noticeOut(n: WalletNotice) {
  return {
    object: 'wallet_notice',
    id: n.id,
    customer: n.customerId,
    type: n.type,
    balance: money(n.balance),
    threshold: money(n.threshold),
    created_date: n.createdAt,
  };
}

async function render(res: Response, req: Request, kind: string, resource: Resource) {
  const view = viewOf(getKind(kind), 'v2')!;
  const sp = parseShapeParams(req, new Set(view.output.map((f) => f.name)), view.expandable);
  return (await shape(ctxOf(res), [resource], sp))[0];
}

/**
 * Self-serve operations beyond CRUD: add-funds, converting a cart into an order, and a customer's wallet
 * history (transactions, low/zero-funds notices). Each calls the selfserve service's SelfServe API.
 */
export function selfserveActions(router: Router): void {
  const addFunds = { amount: { type: 'number', required: true, min: 0.01, max: 1e9, decimals: 2 } } as const satisfies Record<string, FieldSpec>;
  documentedRoute(router, {
    method: 'put',
    path: `${CUSTOMERS}/:id/add-funds`,
    summary: "Add funds to a customer's wallet",
    tag: 'self-serve customers',
    pathParams: { id: 'The customer id.' },
    body: addFunds,
    response: { schema: { allOf: [{ $ref: '#/components/schemas/customer' }, { type: 'object', properties: { transaction: TRANSACTION_SCHEMA } }] } },
  }, async (req, res) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, 'customer');
    const body = actionBody(req, 'an add-funds request', addFunds);
    const out = await asCaller(ctx, (metadata) => selfServe.addFunds({ customerId: id, amount: moneyText(body.amount as number) }, { metadata }), { keyed: true });
    markReplayed(res, out.replayed);
    res.json({ ...(await render(res, req, 'customer', out.customer!)), transaction: transactionOut(out.transaction!) });
  });

  const history = (segment: string, method: 'listWalletTransactions' | 'listWalletNotices', out: (x: never) => unknown, item: JsonSchema) =>
    documentedRoute(router, {
      method: 'get',
      path: `${CUSTOMERS}/:id/${segment}`,
      summary: segment === 'transactions' ? "A customer's wallet transactions, newest first" : "A customer's low-funds and zero-funds notices",
      tag: 'self-serve customers',
      pathParams: { id: 'The customer id.' },
      query: LIST_QUERY,
      response: { listOf: item },
    }, async (req, res) => {
      const ctx = ctxOf(res);
      const id = parseId(req.params.id as string, 'customer');
      const lp = parseListParams(req);
      if (lp.ids.length) throw apiErrors.invalid([{ field: 'id', type: 'invalid_value', message: `'id' cannot filter ${segment}; page with limit and offset.` }]);
      const list: { items: unknown[]; hasMore: boolean } = await asCaller(ctx, (metadata): Promise<{ items: unknown[]; hasMore: boolean }> => selfServe[method]({
        customerId: id, limit: lp.limit, offset: lp.offset,
      }, { idempotent: true, metadata }));
      res.json({ object: 'list', has_more: list.hasMore, limit: lp.limit, offset: lp.offset, url: req.path, data: list.items.map((i) => out(i as never)) });
    });
  history('transactions', 'listWalletTransactions', transactionOut as (x: never) => unknown, TRANSACTION_SCHEMA);
  history('notices', 'listWalletNotices', noticeOut as (x: never) => unknown, NOTICE_SCHEMA);

  const orderBody = { cart: { type: 'ref', ref: 'cart', required: true }, customer: { type: 'ref', ref: 'customer', required: true } } as const satisfies Record<string, FieldSpec>;
  documentedRoute(router, {
    method: 'post',
    path: ORDERS,
    summary: "Place an order: turn a cart into campaigns paid from the customer's wallet",
    tag: 'self-serve orders',
    body: orderBody,
    response: { resource: 'order' },
    errors: [402, 409],
  }, async (req, res) => {
    const ctx = ctxOf(res);
    const body = actionBody(req, 'an order request', orderBody);
    const order = await asCaller(ctx, (metadata) => selfServe.placeOrder({ cartId: body.cart, customerId: body.customer }, { timeoutMs: 60_000, metadata }), { keyed: true });
    markReplayed(res, order.replayed);
    res.json(await render(res, req, 'order', order));
  });
}
