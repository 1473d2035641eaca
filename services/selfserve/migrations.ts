import type { Migration } from '../shared/db';
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
];
