import type { Migration } from '../shared/db';
import { addIdempotencyColumns } from '../shared/idempotency';

/** Ids of sub-objects kept inside a resource (tracking pixels, native template variables). */
export const SUB_ID_SEQUENCE = 'v2_sub_object_ids';

/** Tables of the v2-only inventory resources; the resources themselves live in the generic table. */
export const inventoryMigrations: Migration[] = [
  {
    name: '0100_v2_sub_ids_and_native_to_image_tasks',
    async up(db) {
      await db.raw(`create sequence if not exists ${SUB_ID_SEQUENCE}`);
      // A scheduled native-to-image conversion. Queued and running tasks are picked up again when the
      // service starts, so a restart delays a conversion but never loses it.
      await db.schema.createTable('native_to_image_tasks', (t) => {
        t.bigIncrements('id').primary();
        t.bigInteger('account_id').notNullable();
        t.string('mode', 4).notNullable();
        t.bigInteger('native_ad_item').notNullable();
        t.bigInteger('media_group').notNullable();
        t.integer('width').notNullable();
        t.integer('height').notNullable();
        t.string('name', 255).nullable();
        t.string('status', 16).notNullable().defaultTo('queued');
        t.integer('attempts').notNullable().defaultTo(0);
        t.bigInteger('image_creative').nullable();
        t.text('error').nullable();
        t.timestamp('not_before', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp('started_at', { useTz: true }).nullable();
        t.timestamp('completed_at', { useTz: true }).nullable();
        t.index(['account_id', 'mode', 'id']);
        t.index(['status', 'not_before']);
      });
      await db.raw("alter table native_to_image_tasks add constraint native_to_image_tasks_mode_check check (mode in ('test', 'live'))");
      await db.raw("alter table native_to_image_tasks add constraint native_to_image_tasks_status_check check (status in ('queued', 'running', 'success', 'error'))");
    },
    async down(db) {
      await db.schema.dropTable('native_to_image_tasks');
      await db.raw(`drop sequence if exists ${SUB_ID_SEQUENCE}`);
    },
  },
  {
    name: '0110_native_to_image_leases_and_creative_files',
    async up(db) {
      // A running task is held by one replica until its lease ends; a crashed replica's task is taken
      // over once the lease it can no longer renew runs out.
      await db.schema.alterTable('native_to_image_tasks', (t) => {
        t.string('lease_owner', 64).nullable();
        t.timestamp('lease_until', { useTz: true }).nullable();
        t.string('file_name', 96).nullable();
      });
      // Files the platform made, readable by every replica (not one pod's disk).
      await db.schema.createTable('creative_files', (t) => {
        t.string('name', 96).primary();
        t.bigInteger('account_id').notNullable();
        t.string('mode', 4).notNullable();
        t.string('content_type', 127).notNullable();
        t.binary('body').notNullable();
        t.string('etag', 64).notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      });
    },
  },
  {
    // The Idempotency-Key of the request that scheduled a task, so a retry finds it after any crash.
    name: '0111_native_to_image_task_keys',
    up: (db) => addIdempotencyColumns(db, 'native_to_image_tasks'),
  },
  {
    // Uploaded media is already compressed: storing it uncompressed lets a Range request's substring()
    // read only the TOAST chunks it needs instead of inflating a whole video per slice.
    name: '0112_creative_files_external_storage',
    up: (db) => db.raw('alter table creative_files alter column body set storage external'),
  },
];
