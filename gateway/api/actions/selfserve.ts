import type { Request, Response, Router } from 'express';
import type { Resource } from '../../../proto/gen/adserver/resources/v1/resources';
import {
  SelfServeClient,
  type AddFundsResponse,
  type ListWalletNoticesResponse,
  type ListWalletTransactionsResponse,
  type WalletNotice,
  type WalletTransaction,
} from '../../../proto/gen/adserver/selfserve/v1/selfserve';
import { getKind } from '../../../services/shared/catalog';
import { moneyNumber, moneyText } from '../../../services/shared/money';
import { ctxOf } from '../../context';
import { apiErrors } from '../../errors';
import { markReplayed } from '../../idempotency';
import { callService } from '../backend';
import { actionBody, parseId, parseListParams, parseShapeParams } from '../params';
import { shape } from '../shape';
import { viewOf } from '../views';

const CUSTOMERS = '/v2/self-serve/customers';
const ORDERS = '/v2/self-serve/orders';

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
  router.put(`${CUSTOMERS}/:id/add-funds`, async (req, res) => {
    const ctx = ctxOf(res);
    const id = parseId(req.params.id as string, 'customer');
    const body = actionBody(req, 'an add-funds request', { amount: { type: 'number', required: true, min: 0.01, max: 1e9, decimals: 2 } });
    const out = await callService<AddFundsResponse>(ctx, 'selfserve', SelfServeClient, 'addFunds', { customerId: id, amount: moneyText(body.amount as number) }, { keyed: true });
    markReplayed(res, out.replayed);
    res.json({ ...(await render(res, req, 'customer', out.customer!)), transaction: transactionOut(out.transaction!) });
  });

  const history = (segment: string, method: string, out: (x: never) => unknown) =>
    router.get(`${CUSTOMERS}/:id/${segment}`, async (req, res) => {
      const ctx = ctxOf(res);
      const id = parseId(req.params.id as string, 'customer');
      const lp = parseListParams(req);
      if (lp.ids.length) throw apiErrors.invalid([{ field: 'id', type: 'invalid_value', message: `'id' cannot filter ${segment}; page with limit and offset.` }]);
      const list = await callService<ListWalletTransactionsResponse | ListWalletNoticesResponse>(ctx, 'selfserve', SelfServeClient, method, {
        customerId: id, limit: lp.limit, offset: lp.offset,
      }, { idempotent: true });
      res.json({ object: 'list', has_more: list.hasMore, limit: lp.limit, offset: lp.offset, url: req.path, data: list.items.map((i) => out(i as never)) });
    });
  history('transactions', 'listWalletTransactions', transactionOut as (x: never) => unknown);
  history('notices', 'listWalletNotices', noticeOut as (x: never) => unknown);

  router.post(ORDERS, async (req, res) => {
    const ctx = ctxOf(res);
    const body = actionBody(req, 'an order request', { cart: { type: 'ref', ref: 'cart', required: true }, customer: { type: 'ref', ref: 'customer', required: true } });
    const order = await callService<Resource>(ctx, 'selfserve', SelfServeClient, 'placeOrder', { cartId: body.cart, customerId: body.customer }, { timeoutMs: 60_000, keyed: true });
    markReplayed(res, order.replayed);
    res.json(await render(res, req, 'order', order));
  });
}
