import type { Migration } from '../shared/db';
import { addIdempotencyColumns } from '../shared/idempotency';
import { RESOURCE_MIGRATIONS } from '../shared/resource-store';

/**
 * Money lives in typed tables with numeric columns, changed only by single atomic statements inside
 * transactions: wallets (one balance per customer, per account and mode), the wallet's transactions and
 * the low/zero-funds notices. Catalog resources stay in `resources`; two unique indexes on it make the
 * database refuse a second customer with the same email and a second order of the same cart.
 */
export const migrations: Migration[] = [
  ...RESOURCE_MIGRATIONS,
  {
    name: '0002_selfserve_wallets',
    async up(db) {
      await db.schema.createTable('wallets', (t) => {
        t.bigIncrements('id').primary();
        t.bigInteger('account_id').notNullable();
        t.string('mode', 4).notNullable();
        t.bigInteger('customer_id').notNullable();
        t.decimal('balance', 14, 2).notNullable().defaultTo(0);
        t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.unique(['account_id', 'mode', 'customer_id']);
      });
      await db.raw('alter table wallets add constraint wallets_balance_check check (balance >= 0)');
      await db.schema.createTable('wallet_transactions', (t) => {
        t.bigIncrements('id').primary();
        t.bigInteger('account_id').notNullable();
        t.string('mode', 4).notNullable();
        t.bigInteger('customer_id').notNullable();
        t.string('type', 16).notNullable();
        t.decimal('amount', 14, 2).notNullable();
        t.decimal('balance', 14, 2).notNullable();
        t.bigInteger('order_id').nullable();
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(['account_id', 'mode', 'customer_id', 'id']);
      });
      await db.schema.createTable('wallet_notices', (t) => {
        t.bigIncrements('id').primary();
        t.bigInteger('account_id').notNullable();
        t.string('mode', 4).notNullable();
        t.bigInteger('customer_id').notNullable();
        t.string('type', 16).notNullable();
        t.decimal('balance', 14, 2).notNullable();
        t.decimal('threshold', 14, 2).notNullable();
        t.bigInteger('order_id').nullable();
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(['account_id', 'mode', 'customer_id', 'id']);
      });
      await db.raw(
        "create unique index resources_customer_email on resources (account_id, mode, lower(attributes->>'email')) where kind = 'customer'",
      );
      await db.raw("create unique index resources_order_cart on resources (account_id, mode, (attributes->>'cart')) where kind = 'order'");
    },
  },
  {
    // Exact order money in numeric columns (not numbers inside JSON attributes): the order's total,
    // rounded once, next to the exact sum it was rounded from, and each order item's unrounded price.
    // Deposits record their Idempotency-Key. A failed order stays (status 'failed') until inventory is
    // cleaned up, and must not keep its cart from being ordered again.
    name: '0003_selfserve_exact_orders',
    async up(db) {
      await db.schema.createTable('order_totals', (t) => {
        t.bigInteger('account_id').notNullable();
        t.string('mode', 4).notNullable();
        t.bigInteger('order_id').notNullable();
        t.decimal('total', 14, 2).notNullable();
        t.specificType('exact_total', 'numeric').notNullable();
        t.primary(['account_id', 'mode', 'order_id']);
      });
      await db.schema.createTable('order_item_prices', (t) => {
        t.bigInteger('account_id').notNullable();
        t.string('mode', 4).notNullable();
        t.bigInteger('order_item_id').notNullable();
        t.specificType('price', 'numeric').notNullable();
        t.primary(['account_id', 'mode', 'order_item_id']);
      });
      await addIdempotencyColumns(db, 'wallet_transactions');
      await db.raw('drop index resources_order_cart');
      await db.raw(
        "create unique index resources_order_cart on resources (account_id, mode, (attributes->>'cart')) where kind = 'order' and attributes->>'status' <> 'failed'",
      );
    },
  },
];
