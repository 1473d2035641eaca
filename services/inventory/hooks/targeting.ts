import type { ParameterError } from '../../shared/catalog';
import { WEEKDAYS } from '../../targeting';
import { fail } from '../../shared/errors';
import type { KindHooks } from '../../shared/resource-store';
import { parseDataKeyLogic, parseTimeRange } from '../../shared/targeting-rules';

/**
 * Rules of the targeting kinds that the catalog's field language cannot express: day-parting time
 * ranges that run forwards, a time zone that exists, data-key target logic that parses and names data
 * keys of the account, and a data key whose name is unique in the account.
 */

function throwIf(errors: ParameterError[]): void {
  if (errors.length) throw fail.invalid(errors);
}

const dayParting: KindHooks = {
  prepare(values) {
    const errors: ParameterError[] = [];
    if (typeof values.timezone === 'string') {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: values.timezone });
      } catch {
        errors.push({ field: 'timezone', type: 'invalid_value', message: `'timezone' must be an IANA time zone name such as America/New_York; '${values.timezone.slice(0, 64)}' is not one.` });
      }
    }
    const ranges = values.ranges as Record<string, string[]> | undefined;
    if (ranges) {
      let advanced = false;
      for (const day of WEEKDAYS) {
        for (const text of ranges[day] ?? []) {
          const range = parseTimeRange(text);
          if (!range) {
            errors.push({ field: 'ranges', type: 'invalid_value', message: `'ranges.${day}' holds '${text}', which is not a forward time range within a day (HH:MM:SS-HH:MM:SS, end after start, at most 24:00:00).` });
          } else if (range.start % 3600 !== 0 || range.end % 3600 !== 0) {
            advanced = true;
          }
        }
      }
      // The reference's flag for ranges that are not whole hours.
      values.uses_advanced_format = advanced;
    }
    throwIf(errors);
  },
};

const dataKey: KindHooks = {
  async prepare(values, ctx) {
    if (values.name === undefined) return;
    const clash = await ctx
      .db('resources')
      .where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, kind: 'data_key' })
      .whereRaw("attributes->>'name' = ?", [values.name as string])
      .modify((q) => (ctx.id ? q.whereNot({ id: ctx.id }) : q))
      .first('id');
    if (clash) throw fail.conflict(`A data key named '${values.name}' already exists (id ${clash.id}); data key names are unique in an account.`);
  },
};

const dataKeyTarget: KindHooks = {
  async prepare(values, ctx) {
    if (values.target === undefined) return;
    const parsed = parseDataKeyLogic(values.target as string);
    if ('error' in parsed) throwIf([{ field: 'target', type: 'invalid_value', message: `'target' ${parsed.error}` }]);
    const names = [...(parsed as { keys: Set<string> }).keys];
    const known = new Set(
      (
        await ctx
          .db('resources')
          .where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, kind: 'data_key' })
          .whereRaw("attributes->>'name' = any(?)", [names])
          .select(ctx.db.raw("attributes->>'name' as name"))
      ).map((r: { name: string }) => r.name),
    );
    const unknown = names.filter((n) => !known.has(n));
    if (unknown.length) {
      throwIf([{ field: 'target', type: 'invalid_reference', message: `'target' uses data key${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')}, which this account does not have; create them under /v2/data-keys first.` }]);
    }
  },
};

const channelZoneAssignment: KindHooks = {
  async prepare(values, ctx) {
    const zone = values.zone as { id: number; type: string } | undefined;
    if (!zone || values.channel === undefined) return;
    const clash = await ctx
      .db('resources')
      .where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, kind: 'channel_zone_assignment' })
      .whereRaw("(attributes->>'channel')::bigint = ? and (attributes->'zone'->>'id')::bigint = ? and attributes->'zone'->>'type' = ?", [values.channel as number, zone.id, zone.type])
      .first('id');
    if (clash) throw fail.conflict(`Zone ${zone.id} is already assigned to channel ${values.channel} (assignment ${clash.id}).`);
  },
};

export const targetingHooks: Record<string, KindHooks> = {
  day_parting: dayParting,
  data_key: dataKey,
  data_key_target: dataKeyTarget,
  channel_zone_assignment: channelZoneAssignment,
};

