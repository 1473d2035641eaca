import type { FieldSpec, ResourceKind } from '../shared/catalog/types';
import { dayPartingAllows } from '../shared/targeting-rules';
import { name } from './fields';
import { list, obj, registerRule, str } from './rule';

/** Day-parting: the hours of each weekday a schedule's placements serve, in the account's or the viewer's time zone. */

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

const dayRanges: FieldSpec = {
  type: 'array',
  maxLength: 48,
  items: { type: 'string', pattern: '^\\d{2}:\\d{2}:\\d{2}-\\d{2}:\\d{2}:\\d{2}$', patternHint: 'a time range HH:MM:SS-HH:MM:SS, such as 09:00:00-17:30:00' },
};

export const dayPartingKind: ResourceKind = {
  kind: 'day_parting',
  service: 'inventory',
  title: 'day parting',
  fields: {
    name,
    // true: the hours are in the account's time zone; false: in the viewer's (from the request's geo).
    use_member_timezone: { type: 'boolean', default: false },
    is_template: { type: 'boolean', default: false },
    // The time zone the hours are read in when use_member_timezone is true (an IANA name; UTC when unset).
    timezone: { type: 'string', nullable: true, maxLength: 64, default: null },
    ranges: {
      type: 'object',
      required: true,
      closed: true,
      properties: Object.fromEntries(WEEKDAYS.map((d) => [d, dayRanges])),
    },
    uses_advanced_format: { type: 'boolean', readOnly: true },
  },
  views: { v2: { object: 'day_parting', path: '/v2/day-parting' } },
};

export interface DayParting {
  ranges: Record<string, string[] | undefined>;
  use_member_timezone: boolean;
  timezone: string | null;
}

registerRule<DayParting>({
  name: 'day_parting',
  kinds: [dayPartingKind],
  project: {
    day_parting: (a) => ({
      dayParting: {
        ranges: Object.fromEntries(Object.entries(obj(a.ranges)).map(([day, r]) => [day, { ranges: list(r).map(str) }])),
        useMemberTimezone: a.use_member_timezone === true,
        timezone: str(a.timezone),
      },
    }),
  },
  // Hours in the viewer's time zone need the viewer's place.
  needsGeo: (e) => !!e.dayParting && !e.dayParting.useMemberTimezone,
  resolve: (p) => {
    const dp = p.schedule?.dayParting ? p.get('day_parting', p.schedule.dayParting)?.dayParting : undefined;
    if (!dp) return undefined;
    return { ranges: Object.fromEntries(Object.entries(dp.ranges).map(([d, r]) => [d, r.ranges])), use_member_timezone: dp.useMemberTimezone, timezone: dp.timezone || null };
  },
  evaluate: (t, r) => {
    const zone = t.use_member_timezone ? t.timezone || r.accountTimezone : r.geo?.timezone || t.timezone || r.accountTimezone;
    return dayPartingAllows(t.ranges, r.now, zone) ? { ok: true, preferred: false } : { ok: false, rule: 'day_parting', detail: `outside the allowed hours in ${zone}` };
  },
});
