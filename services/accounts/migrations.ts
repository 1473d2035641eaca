import type { Migration } from '../shared/db';
import { RESOURCE_MIGRATIONS } from '../shared/resource-store';

export const migrations: Migration[] = [
  ...RESOURCE_MIGRATIONS,
  {
    name: '0002_accounts_and_keys',
    async up(db) {
      await db.schema.createTable('accounts', (t) => {
        t.bigIncrements('id').primary();
        t.string('name', 255).notNullable();
        t.string('email', 255).nullable();
        t.text('password_hash').nullable();
        t.jsonb('features').notNullable().defaultTo('[]');
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      });
      await db.schema.createTable('api_keys', (t) => {
        t.bigIncrements('id').primary();
        t.bigInteger('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
        t.string('mode', 4).notNullable();
        // SHA-256 of the secret, hex; the secret itself is shown once and never stored.
        t.string('key_hash', 64).notNullable().unique();
        t.string('prefix', 16).notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(['account_id']);
      });
      await db.raw("alter table api_keys add constraint api_keys_mode_check check (mode in ('test', 'live'))");
    },
  },
  {
    name: '0003_account_rate_limits',
    async up(db) {
      // Requests per 60-second window; null means the platform default (spec section 8: 600 and 60).
      await db.schema.alterTable('accounts', (t) => {
        t.integer('general_limit').nullable();
        t.integer('reporting_limit').nullable();
      });
    },
  },
  {
    name: '0004_api_key_names',
    async up(db) {
      // Keys made before names existed are named after their mode, as new accounts' first keys are.
      await db.schema.alterTable('api_keys', (t) => {
        t.string('name', 100).notNullable().defaultTo('');
        // The last 4 characters, so that the owner can recognise a key (empty for keys made before).
        t.string('suffix', 4).notNullable().defaultTo('');
        t.timestamp('last_used_at', { useTz: true }).nullable();
      });
      await db.raw("update api_keys set name = case mode when 'test' then 'Default test key' else 'Default live key' end where name = ''");
    },
  },
  {
    name: '0005_settings_sessions',
    async up(db) {
      // Sessions of the API settings page when gateways have no Redis: the SHA-256 of the cookie's id.
      await db.schema.createTable('settings_sessions', (t) => {
        t.string('session_hash', 64).primary();
        t.bigInteger('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
        t.string('csrf_token', 64).notNullable();
        t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(['account_id']);
      });
      // Sign-in looks accounts up by email.
      await db.raw('create index accounts_email_lower on accounts (lower(email))');
    },
  },
  {
    name: '0006_session_generation',
    async up(db) {
      // Counts sign-outs everywhere: a session made in an earlier generation, in any store, is over.
      await db.schema.alterTable('accounts', (t) => t.bigInteger('session_generation').notNullable().defaultTo(0));
    },
  },
];
