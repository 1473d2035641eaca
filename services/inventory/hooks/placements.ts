import type { ParameterError } from '../../shared/catalog';
import { fail } from '../../shared/errors';
import type { KindHooks } from '../../shared/resource-store';
import { throwIf } from './common';

/** Placements and their schedules. */

const DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

export function isDateTime(v: string): boolean {
  const m = DATETIME.exec(v);
  if (!m) return false;
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 19).replace('T', ' ') === v;
}

function midnightToday(): string {
  return `${new Date().toISOString().slice(0, 10)} 00:00:00`;
}

const schedule: KindHooks = {
  prepare(values, ctx) {
    const errors: ParameterError[] = [];
    for (const f of ['start_date', 'end_date']) {
      const v = values[f];
      if (typeof v === 'string' && !isDateTime(v)) errors.push({ field: f, type: 'invalid_value', message: `'${f}' must be a date and time in the form YYYY-MM-DD HH:MM:SS.` });
    }
    throwIf(errors);
    if (ctx.op === 'create' && (values.start_date === undefined || values.start_date === null)) values.start_date = midnightToday();
    if (ctx.op === 'update' && values.start_date === null) values.start_date = midnightToday();
    const start = (values.start_date ?? ctx.existing?.start_date) as string | null;
    const end = (values.end_date !== undefined ? values.end_date : ctx.existing?.end_date) as string | null;
    if (start && end && end < start) errors.push({ field: 'end_date', type: 'invalid_value', message: `'end_date' (${end}) must not be before 'start_date' (${start}).` });
    if (ctx.op === 'create' && values.under_delivery_behaviour === undefined) {
      values.under_delivery_behaviour = values.delivery_method === 'smooth' ? 'endOnDate' : null;
    }
    throwIf(errors);
  },
};

const placement: KindHooks = {
  prepare(values, ctx) {
    const zone = values.zone !== undefined ? values.zone : (ctx.existing?.zone ?? null);
    const channel = values.channel !== undefined ? values.channel : (ctx.existing?.channel ?? null);
    if ((zone === null) === (channel === null)) {
      throw fail.invalid([
        { field: zone === null ? 'zone' : 'channel', type: zone === null ? 'missing_field' : 'invalid_value', message: "A placement goes into a zone or onto a channel: give exactly one of 'zone' and 'channel'." },
      ]);
    }
  },
};

export const placementHooks: Record<string, KindHooks> = {
  schedule,
  placement,
};
