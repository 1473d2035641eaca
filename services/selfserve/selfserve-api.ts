import { status } from '@grpc/grpc-js';
import { envInt } from '../shared/config';
import type { Knex } from 'knex';
import type { Resource } from '../../proto/gen/adserver/resources/v1/resources';
import {
  SelfServeService,
  type AddFundsRequest,
  type AddFundsResponse,
  type ListWalletRequest,
  type PlaceOrderRequest,
  type WalletNotice,
  type WalletTransaction,
} from '../../proto/gen/adserver/selfserve/v1/selfserve';
import type { Database } from '../shared/db';
import { formatTimestamp } from '../shared/db';
import { fail, ServiceError } from '../shared/errors';
import { resourcesApi } from '../shared/grpc/resources-api';
import { implement, type ServiceBinding } from '../shared/grpc/server';
import { checkSameRequest, differentRequest, idempotencyFromMetadata, isKeyTaken, type IdempotencyKey } from '../shared/idempotency';
import { log } from '../shared/log';
import type { Attributes, ResourceStore } from '../shared/resource-store';
import { tenantFromMetadata, tenantMetadata, type Tenant } from '../shared/tenant';
import { ownAttributes } from './hooks';

/** An amount of money up to MAX_AMOUNT as decimal text with at most two decimals (checked as text, no float). */
const AMOUNT = /^((0|[1-9]\d{0,8})(\.\d{1,2})?|1000000000(\.0{1,2})?)$/;
const MAX_AMOUNT = 1_000_000_000;
const MAX_PAGE = 100;

/** Rows come back through knex.raw as `{rows}` from pg and PGlite alike. */
function rowsOf<T>(res: unknown): T[] {
  return ((res as { rows?: T[] }).rows ?? []) as T[];
}

interface TxRow {
  id: number;
  customer_id: number;
  type: string;
  amount: string;
  balance: string;
  order_id: number | null;
  created_at: Date;
}

const toTransaction = (r: TxRow): WalletTransaction => ({
  id: Number(r.id),
  customerId: Number(r.customer_id),
  type: r.type,
  amount: r.amount,
  balance: r.balance,
  orderId: Number(r.order_id ?? 0),
  createdAt: formatTimestamp(r.created_at),
});

const TX_COLUMNS = ['id', 'customer_id', 'type', 'amount', 'balance', 'order_id', 'created_at'] as const;

function scopedTo(db: Knex | Knex.Transaction, table: string, t: Tenant) {
  return db(table).where({ account_id: t.accountId, mode: t.mode });
}

async function requireCustomer(db: Knex | Knex.Transaction, t: Tenant, id: number): Promise<Attributes> {
  const attrs = await ownAttributes(db as Knex, t, 'customer', id);
  if (!attrs) throw fail.notFound('customer', id);
  return attrs;
}

/** What one cart item becomes in inventory. */
const AD_ITEM_KIND: Record<string, string> = { image: 'image_ad_item', html5: 'custom_html_ad_item', raw: 'custom_html_ad_item', template: 'native_ad_item' };

interface PricedItem {
  id: number;
  item: Attributes;
  zone: Attributes;
  /** Exact, unrounded (null when the portal zone lacks a price its pricing model needs). */
  price: string | null;
  exact_total: string | null;
  /** The exact total rounded once to the cent. */
  total: string | null;
  rounds_to_zero: boolean | null;
}

/** Another request with the same Idempotency-Key stored its order first. */
class KeyTaken extends Error {}

const stillBeingPlaced = () =>
  new ServiceError(status.ALREADY_EXISTS, 'The order with this Idempotency-Key is still being placed; retry it shortly.', 'idempotency_error');

/**
 * Wallets and orders. Every money change is one atomic SQL statement inside a transaction (row locks on
 * the wallet serialise concurrent changes); amounts are numeric in the database and decimal text on the
 * wire, never binary floats.
 */
/** Inventory kinds an order creates, each tagged with the order's origin so it can be undone. */
const ORDER_INVENTORY_KINDS = ['placement', 'campaign_assignment', 'image_ad_item', 'custom_html_ad_item', 'native_ad_item', 'standard_campaign', 'schedule'];

const orderOrigin = (orderId: number) => `order:${orderId}`;

const inventory = (t: Tenant) => resourcesApi('inventory', tenantMetadata(t));
/** Each inventory call of an order; a failed order answers within about one of these (ORDER_INVENTORY_DEADLINE_MS). */
const INVENTORY_CALL = { timeoutMs: envInt('ORDER_INVENTORY_DEADLINE_MS', 15_000, 1000) };

/**
 * Gives back what an order still holds on the wallet and marks the order failed, in one transaction,
 * provided the order is still in `from` (so only one process releases it). History is append-only: the
 * release is a new `release` entry of the held amount, the hold stays. The order's key is cleared, so a
 * retry with the same Idempotency-Key places the cart anew. Answers false when the order was not in `from`.
 */
async function releaseHold(knex: Knex, t: Tenant, orderId: number, from: string): Promise<boolean> {
  return knex.transaction(async (trx) => {
    const [order] = await scopedTo(trx, 'resources', t)
      .where({ kind: 'order', id: orderId })
      .whereRaw("attributes->>'status' = ?", [from])
      .update({ attributes: trx.raw(`attributes || '{"status":"failed"}'::jsonb`), idempotency_key: null, updated_at: trx.fn.now() })
      .returning(['attributes']);
    if (!order) return false;
    const customerId = Number((order.attributes as Attributes).customer);
    // What the order's entries still hold (the hold is negative; an earlier release cancels it).
    const [{ held, positive }] = rowsOf<{ held: string | null; positive: boolean | null }>(
      await trx.raw(
        'select (-sum(amount))::text as held, -sum(amount) > 0 as positive from wallet_transactions where account_id = ? and mode = ? and customer_id = ? and order_id = ?',
        [t.accountId, t.mode, customerId, orderId],
      ),
    );
    if (positive) {
      const [wallet] = rowsOf<{ balance: string }>(
        await trx.raw(
          'update wallets set balance = balance + ?::numeric, updated_at = now() where account_id = ? and mode = ? and customer_id = ? returning balance::text as balance',
          [held, t.accountId, t.mode, customerId],
        ),
      );
      await trx('wallet_transactions').insert({
        account_id: t.accountId, mode: t.mode, customer_id: customerId, type: 'release', amount: held, balance: wallet.balance, order_id: orderId,
      });
    }
    return true;
  });
}

/**
 * Removes what a failed order made in inventory (found there by the order's origin, newest first, so
 * this works from any process after any crash), then the order itself. Safe to repeat; throws while
 * inventory is unreachable, leaving the failed order for the recovery sweep.
 */
async function cleanUpFailedOrder(knex: Knex, t: Tenant, orderId: number): Promise<void> {
  const made: { kind: string; id: number }[] = [];
  for (const kind of ORDER_INVENTORY_KINDS) {
    const res = await inventory(t).list({ kinds: [kind], origin: orderOrigin(orderId), limit: 1000, newestFirst: true }, INVENTORY_CALL);
    made.push(...res.items.map((r) => ({ kind: r.kind, id: r.id })));
  }
  for (const r of made.sort((a, b) => b.id - a.id)) {
    await inventory(t).delete(r, INVENTORY_CALL).catch((e) => {
      if ((e as { code?: number }).code !== 5) throw e;
    });
  }
  await knex.transaction(async (trx) => {
    const gone = await scopedTo(trx, 'resources', t).where({ kind: 'order', id: orderId }).whereRaw("attributes->>'status' = 'failed'").delete();
    if (gone) await scopedTo(trx, 'order_totals', t).where({ order_id: orderId }).delete();
  });
}

/** Orders pending without progress this long were abandoned by a process that stopped mid-way. */
const ORDER_STALL_SECONDS = envInt('ORDER_STALL_SECONDS', 120, 1);

/**
 * The sweep for processes that died: orders left pending without progress for ORDER_STALL_SECONDS get
 * their hold released (claimed by the status change, so one replica handles each), and failed orders
 * whose inventory could not be cleaned up yet (inventory was down) are cleaned up, each claimed by
 * moving its `updated_at` so another replica's sweep skips it meanwhile.
 */
export async function recoverStalledOrders(knex: Knex): Promise<number> {
  const stalled = await knex('resources')
    .where({ kind: 'order' })
    // 'recovering': claimed by a sweep of an earlier version that released holds by deleting them.
    .whereRaw("attributes->>'status' in ('pending', 'recovering', 'failed')")
    .whereRaw('updated_at < now() - make_interval(secs => ?)', [ORDER_STALL_SECONDS])
    .select('id', 'account_id', 'mode', knex.raw("attributes->>'status' as status"));
  let undone = 0;
  for (const row of stalled) {
    const t: Tenant = { accountId: Number(row.account_id), mode: row.mode };
    const orderId = Number(row.id);
    try {
      if (row.status !== 'failed') {
        if (!(await releaseHold(knex, t, orderId, row.status))) continue;
        log.warn('released the hold of an order abandoned mid-way', { order: orderId, account: t.accountId, mode: t.mode });
      } else {
        const claimed = await knex('resources')
          .where({ id: orderId, kind: 'order' })
          .whereRaw("attributes->>'status' = 'failed'")
          .whereRaw('updated_at < now() - make_interval(secs => ?)', [ORDER_STALL_SECONDS])
          .update({ updated_at: knex.fn.now() });
        if (!claimed) continue;
      }
      await cleanUpFailedOrder(knex, t, orderId);
      undone++;
    } catch (err) {
      // The order stays failed (its money already given back); a later sweep cleans up inventory.
      log.error('could not clean up a failed order yet', { order: orderId, error: String(err) });
    }
  }
  return undone;
}

export function selfserveBinding(db: Database, store: ResourceStore): ServiceBinding {
  const knex = db.knex;

  /**
   * Credits the wallet and records the deposit in one transaction. With an Idempotency-Key the key is
   * part of the deposit's row: a retry (after a crash, a lost answer, or concurrently) finds that
   * deposit and adds nothing.
   */
  async function addFunds(t: Tenant, req: AddFundsRequest, idem?: IdempotencyKey): Promise<AddFundsResponse> {
    const amount = req.amount.trim();
    if (!AMOUNT.test(amount) || /^0(\.0+)?$/.test(amount)) {
      throw fail.invalid([{ field: 'amount', type: 'invalid_value', message: `'amount' must be a positive number of at most ${MAX_AMOUNT} with at most two decimals.` }]);
    }
    const replay = async (): Promise<AddFundsResponse | undefined> => {
      if (!idem) return undefined;
      const row = await scopedTo(knex, 'wallet_transactions', t)
        .where({ idempotency_key: idem.key })
        .first(...TX_COLUMNS.filter((c) => c !== 'amount' && c !== 'balance'), 'idempotency_fingerprint', knex.raw('amount::text as amount'), knex.raw('balance::text as balance'));
      if (!row) return undefined;
      checkSameRequest(row, idem);
      if (Number(row.customer_id) !== req.customerId) throw differentRequest();
      return { customer: await store.get(t, 'customer', req.customerId), transaction: toTransaction(row as TxRow), replayed: true };
    };
    const prior = await replay();
    if (prior) return prior;
    let tx: TxRow;
    try {
      tx = await knex.transaction(async (trx) => {
        await requireCustomer(trx, t, req.customerId);
        const [wallet] = rowsOf<{ balance: string }>(
          await trx.raw(
            `insert into wallets (account_id, mode, customer_id, balance) values (?, ?, ?, ?::numeric)
             on conflict (account_id, mode, customer_id) do update set balance = wallets.balance + excluded.balance, updated_at = now()
             returning balance::text as balance`,
            [t.accountId, t.mode, req.customerId, amount],
          ),
        );
        const [row] = await trx('wallet_transactions')
          .insert({
            account_id: t.accountId, mode: t.mode, customer_id: req.customerId, type: 'deposit', amount, balance: wallet.balance,
            idempotency_key: idem?.key ?? null, idempotency_fingerprint: idem?.fingerprint ?? null,
          })
          .returning([...TX_COLUMNS.filter((c) => c !== 'amount' && c !== 'balance'), trx.raw('amount::text as amount'), trx.raw('balance::text as balance')]);
        return row as TxRow;
      });
    } catch (err) {
      // A concurrent request with the same key committed first; this one's credit was rolled back.
      if (isKeyTaken(err, 'wallet_transactions')) {
        const raced = await replay();
        if (raced) return raced;
      }
      if ((err as { code?: string }).code === '22003') throw fail.requestFailed('The wallet cannot hold that much; the funds were not added.');
      throw err;
    }
    return { customer: await store.get(t, 'customer', req.customerId), transaction: toTransaction(tx), replayed: undefined };
  }

  async function listTransactions(t: Tenant, req: ListWalletRequest) {
    await requireCustomer(knex, t, req.customerId);
    const limit = Math.min(Math.max(req.limit || 10, 1), MAX_PAGE);
    const rows = (await scopedTo(knex, 'wallet_transactions', t)
      .where({ customer_id: req.customerId })
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .offset(Math.max(req.offset || 0, 0))
      .select(...TX_COLUMNS.filter((c) => c !== 'amount' && c !== 'balance'), knex.raw('amount::text as amount'), knex.raw('balance::text as balance'))) as TxRow[];
    return { items: rows.slice(0, limit).map(toTransaction), hasMore: rows.length > limit };
  }

  async function listNotices(t: Tenant, req: ListWalletRequest) {
    await requireCustomer(knex, t, req.customerId);
    const limit = Math.min(Math.max(req.limit || 10, 1), MAX_PAGE);
    const rows = await scopedTo(knex, 'wallet_notices', t)
      .where({ customer_id: req.customerId })
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .offset(Math.max(req.offset || 0, 0))
      .select('id', 'customer_id', 'type', 'created_at', knex.raw('balance::text as balance'), knex.raw('threshold::text as threshold'));
    const items: WalletNotice[] = rows.slice(0, limit).map((r) => ({
      id: Number(r.id),
      customerId: Number(r.customer_id),
      type: r.type,
      balance: r.balance,
      threshold: r.threshold,
      createdAt: formatTimestamp(r.created_at),
    }));
    return { items, hasMore: rows.length > limit };
  }

  /**
   * The cart's items with their exact price from the portal zone's pricing model (numeric, unrounded:
   * a CPM of 0.004 for one impression is 0.000004), and the cart's total: the exact sum, rounded once
   * to the cent, half up (half away from zero).
   */
  async function pricedItems(t: Tenant, cartId: number): Promise<PricedItem[]> {
    return rowsOf<PricedItem>(
      await knex.raw(
        `with priced as (
           select ci.id, ci.attributes as item, pz.attributes as zone,
                  case pz.attributes->>'pricing_model'
                    when 'fixed-CPM' then (ci.attributes->>'cpm')::numeric * (ci.attributes->>'quantity')::numeric * 0.001
                    when 'fixed-CPC' then (ci.attributes->>'cpc')::numeric * (ci.attributes->>'quantity')::numeric
                    else (ci.attributes->>'total_limit')::numeric
                  end * coalesce((ci.attributes->>'multipler')::numeric, 1) as price
             from resources ci
             join resources pz on pz.account_id = ci.account_id and pz.mode = ci.mode and pz.kind = 'portal_zone'
                              and pz.id = (ci.attributes->>'portal_zone')::bigint and pz.archived_at is null
            where ci.account_id = ? and ci.mode = ? and ci.kind = 'cart_item' and ci.archived_at is null
              and ci.attributes @> ?::jsonb)
         select id, item, zone, price::text as price, (sum(price) over ())::text as exact_total,
                round(sum(price) over (), 2)::text as total, (sum(price) over ()) > 0 and round(sum(price) over (), 2) = 0 as rounds_to_zero
           from priced order by id`,
        [t.accountId, t.mode, JSON.stringify({ cart: cartId })],
      ),
    );
  }

  /**
   * Holds the order's total on the wallet and records the pending order (with the request's
   * Idempotency-Key) and its total, in one transaction: the wallet row is locked by the debit, so two
   * orders on one wallet run one after the other and the second sees the first's balance. Crossing the
   * low-funds amount or reaching zero records a notice.
   */
  async function chargeOrder(t: Tenant, customerId: number, attrs: Attributes, total: string, exactTotal: string, idem?: IdempotencyKey): Promise<number> {
    return knex.transaction(async (trx) => {
      let orderRow: { id: number };
      try {
        [orderRow] = await trx('resources')
          .insert({
            account_id: t.accountId, mode: t.mode, kind: 'order', attributes: JSON.stringify({ ...attrs, status: 'pending' }),
            idempotency_key: idem?.key ?? null, idempotency_fingerprint: idem?.fingerprint ?? null,
          })
          .returning(['id']);
      } catch (err) {
        if (isKeyTaken(err, 'resources')) throw new KeyTaken();
        if ((err as { code?: string }).code === '23505') throw fail.conflict(`Cart ${attrs.cart} has already been ordered.`);
        throw err;
      }
      const orderId = Number(orderRow.id);
      await trx('order_totals').insert({ account_id: t.accountId, mode: t.mode, order_id: orderId, total, exact_total: exactTotal });
      await trx.raw('insert into wallets (account_id, mode, customer_id) values (?, ?, ?) on conflict do nothing', [t.accountId, t.mode, customerId]);
      const [moved] = rowsOf<{ before: string; after: string }>(
        await trx.raw(
          `update wallets set balance = balance - ?::numeric, updated_at = now()
            where account_id = ? and mode = ? and customer_id = ? and balance >= ?::numeric
        returning (balance + ?::numeric)::text as before, balance::text as after`,
          [total, t.accountId, t.mode, customerId, total, total],
        ),
      );
      if (!moved) {
        const w = await scopedTo(trx, 'wallets', t).where({ customer_id: customerId }).first(trx.raw('balance::text as balance'));
        throw fail.requestFailed(`Insufficient funds: the order costs ${total} and the wallet holds ${w?.balance ?? '0.00'}. Add funds and try again.`, 'insufficient_funds_error');
      }
      await trx('wallet_transactions').insert({
        account_id: t.accountId, mode: t.mode, customer_id: customerId, type: 'order', amount: trx.raw('-(?::numeric)', [total]), balance: moved.after, order_id: orderId,
      });
      for (const [type, test] of [
        ['low_funds', `(c.attributes->>'low_funds_notify')::boolean and ?::numeric > (c.attributes->>'low_funds_amount')::numeric and ?::numeric <= (c.attributes->>'low_funds_amount')::numeric`],
        ['zero_funds', `(c.attributes->>'zero_funds_notify')::boolean and ?::numeric > 0 and ?::numeric = 0`],
      ] as const) {
        await trx.raw(
          `insert into wallet_notices (account_id, mode, customer_id, type, balance, threshold, order_id)
           select c.account_id, c.mode, c.id, ?, ?::numeric, coalesce((c.attributes->>'low_funds_amount')::numeric, 0), ?
             from resources c where c.account_id = ? and c.mode = ? and c.kind = 'customer' and c.id = ? and ${test}`,
          [type, moved.after, orderId, t.accountId, t.mode, customerId, moved.before, moved.after],
        );
      }
      return orderId;
    });
  }

  /**
   * The order a request with this Idempotency-Key placed: answered again when placed; a 409 while it is
   * still being placed (the retry should wait for it). A failed order gave its key up.
   */
  async function orderMadeWith(t: Tenant, idem: IdempotencyKey): Promise<Resource | undefined> {
    const prior = await store.madeWith(t, idem);
    if (!prior) return undefined;
    if (prior.attributes?.status !== 'placed') throw stillBeingPlaced();
    return prior;
  }

  async function placeOrder(t: Tenant, req: PlaceOrderRequest, idem?: IdempotencyKey): Promise<Resource> {
    if (idem) {
      const prior = await orderMadeWith(t, idem);
      if (prior) return prior;
    }
    const cart = await ownAttributes(knex, t, 'cart', req.cartId);
    if (!cart) throw fail.invalid([{ field: 'cart', type: 'invalid_reference', message: `'cart' refers to cart ${req.cartId}, which does not exist.` }]);
    const customer = await ownAttributes(knex, t, 'customer', req.customerId);
    if (!customer) throw fail.invalid([{ field: 'customer', type: 'invalid_reference', message: `'customer' refers to customer ${req.customerId}, which does not exist.` }]);
    if (customer.portal !== cart.portal) {
      throw fail.invalid([{ field: 'customer', type: 'invalid_value', message: `Customer ${req.customerId} may not use portal ${cart.portal}, the portal of cart ${req.cartId}.` }]);
    }
    const items = await pricedItems(t, req.cartId);
    if (!items.length) throw fail.invalid([{ field: 'cart', type: 'invalid_value', message: `Cart ${req.cartId} is empty; add cart items before ordering.` }]);
    const unpriced = items.find((i) => i.price === null);
    if (unpriced) throw fail.requestFailed(`Cart item ${unpriced.id} has no price: its portal zone ${unpriced.item.portal_zone} lacks the prices its pricing model needs.`);
    const { total, exact_total: exactTotal } = items[0];
    if (items[0].rounds_to_zero) {
      throw fail.invalid([{
        field: 'cart', type: 'invalid_value',
        message: `Cart ${req.cartId} costs ${exactTotal} in all, which rounds to 0.00: an order must cost at least 0.01. Buy a larger quantity.`,
      }]);
    }
    const base = {
      customer: req.customerId, portal: cart.portal, cart: req.cartId, advertiser: customer.advertiser ?? null, campaign: null,
      start_date: cart.start_date ?? null, end_date: cart.end_date ?? null,
    };
    let orderId: number;
    try {
      orderId = await chargeOrder(t, req.customerId, base, total!, exactTotal!, idem);
    } catch (err) {
      // A concurrent request with this key stored its order first (its insert may have met the cart's
      // unique index before the key's): answer that order.
      const raced = err instanceof KeyTaken || (err instanceof ServiceError && err.code === status.ALREADY_EXISTS);
      if (!idem || !raced) throw err;
      const prior = await orderMadeWith(t, idem);
      if (prior) return prior;
      throw err instanceof KeyTaken ? stillBeingPlaced() : err;
    }

    // Inventory is created after the charge, so concurrent orders can never both spend the same money.
    // Everything is tagged with the order's origin: on failure (or, after a crash, in the recovery sweep)
    // it is found in inventory, removed newest first, and the hold released.
    const make = async (kind: string, attributes: Attributes) => {
      const id = (await inventory(t).create({ kind, attributes, origin: orderOrigin(orderId) }, INVENTORY_CALL)).id;
      // Progress keeps the order out of the recovery sweep; an order the sweep claimed anyway (this
      // process stalled too long) stops here and is undone.
      const touched = await scopedTo(knex, 'resources', t)
        .where({ kind: 'order', id: orderId })
        .whereRaw("attributes->>'status' = 'pending'")
        .update({ updated_at: knex.fn.now() });
      if (!touched) throw fail.requestFailed(`Order ${orderId} stalled and was abandoned; nothing was charged.`, 'order_failed_error');
      return id;
    };
    const orderItems: Attributes[] = [];
    const prices = new Map<string, string>(); // cart item id -> exact price
    let campaign: number;
    try {
      const schedule = await make('schedule', cart.set_dates ? { start_date: cart.start_date, end_date: cart.end_date } : {});
      campaign = await make('standard_campaign', { name: `Self-serve order ${orderId}`, advertiser: customer.advertiser ?? null });
      for (const { id, item, zone, price } of items) {
        const type = item.type as string;
        const adKind = AD_ITEM_KIND[type];
        const common = { name: `Order ${orderId} item ${id}`, width: zone.width, height: zone.height, location: item.destination ?? null };
        const adAttrs: Attributes =
          adKind === 'image_ad_item'
            ? { ...common, creative: item.file ?? null, html_alt_text: item.alt_text ?? null }
            : adKind === 'custom_html_ad_item'
              ? { ...common, custom_html: item.custom_html }
              : { ...common, template: item.template, variables: Object.fromEntries(((item.template_variables ?? []) as Attributes[]).map((v) => [String(v.id), v.value])) };
        const adItem = await make(adKind, adAttrs);
        await make('campaign_assignment', { campaign: { id: campaign, type: 'standard_campaign' }, advertisement: { id: adItem, type: adKind } });
        const auction = zone.pricing_model === 'auction';
        const placement = await make('placement', {
          advertisement: { id: adItem, type: adKind },
          zone: { id: zone.zone, type: 'standard_zone' },
          schedule,
          keywords: item.keywords ?? null,
          serve_method: auction ? 'auction' : 'weight',
          cost: auction ? { cpm: item.bid_amount ?? null } : zone.pricing_model === 'fixed-CPC' ? { cpc: item.cpc ?? null } : { cpm: item.cpm ?? null },
        });
        orderItems.push({
          order: orderId, cart_item: String(id), portal_zone: item.portal_zone, zone: zone.zone, type, ad_item: { id: adItem, type: adKind }, placement,
          pricing_model: zone.pricing_model, cpm: item.cpm ?? null, cpc: item.cpc ?? null, quantity: item.quantity ?? null, multipler: item.multipler ?? 1,
          bid_amount: item.bid_amount ?? null, daily_limit: item.daily_limit ?? null, total_limit: item.total_limit ?? null,
        });
        prices.set(String(id), price!);
      }
    } catch (err) {
      // The money comes back before the answer, from this service's own database, whatever state
      // inventory is in; what inventory holds is cleaned up now or, while it is down, by the sweep.
      await releaseHold(knex, t, orderId, 'pending');
      // The answer does not wait for the clean-up: with inventory frozen each of its calls would run to
      // its deadline (a 402 took 36 s). What it cannot remove now, the recovery sweep removes later.
      void cleanUpFailedOrder(knex, t, orderId).catch((e) => log.warn('failed order left for the recovery sweep to clean up', { order: orderId, error: String(e) }));
      const detail = err instanceof ServiceError ? err.message : (err as { details?: string }).details ?? 'inventory is unavailable';
      throw fail.requestFailed(`The order could not be placed and nothing was charged: ${detail}`, 'order_failed_error');
    }
    await knex.transaction(async (trx) => {
      if (orderItems.length) {
        const rows = await trx('resources')
          .insert(orderItems.map((a) => ({ account_id: t.accountId, mode: t.mode, kind: 'order_item', attributes: JSON.stringify(a) })))
          .returning(['id', trx.raw("attributes->>'cart_item' as cart_item")]);
        await trx('order_item_prices').insert(rows.map((r) => ({ account_id: t.accountId, mode: t.mode, order_item_id: r.id, price: prices.get(r.cart_item)! })));
      }
      const placed = await scopedTo(trx, 'resources', t)
        .where({ kind: 'order', id: orderId })
        .whereRaw("attributes->>'status' = 'pending'")
        .update({ attributes: trx.raw('attributes || ?::jsonb', [JSON.stringify({ status: 'placed', campaign })]), updated_at: trx.fn.now() });
      // The recovery sweep took the order over (and undoes it): the order items go with the rollback.
      if (!placed) throw fail.requestFailed(`Order ${orderId} stalled and was abandoned; nothing was charged.`, 'order_failed_error');
    });
    return store.get(t, 'order', orderId);
  }

  return implement('selfserve.SelfServe', SelfServeService, {
    addFunds: async (req: AddFundsRequest, c) => addFunds(tenantFromMetadata(c.metadata), req, idempotencyFromMetadata(c.metadata)),
    placeOrder: async (req: PlaceOrderRequest, c) => placeOrder(tenantFromMetadata(c.metadata), req, idempotencyFromMetadata(c.metadata)),
    listWalletTransactions: async (req: ListWalletRequest, c) => listTransactions(tenantFromMetadata(c.metadata), req),
    listWalletNotices: async (req: ListWalletRequest, c) => listNotices(tenantFromMetadata(c.metadata), req),
  });
}
