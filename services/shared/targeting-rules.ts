/**
 * The pure rules of targeting, shared by inventory (which checks them when a target is saved) and
 * serving (which applies them to each request): day-parting time ranges in a time zone, and data-key
 * target logic.
 */

/** Seconds since midnight of a `HH:MM:SS-HH:MM:SS` range; undefined unless it runs forwards within a day. */
export function parseTimeRange(text: string): { start: number; end: number } | undefined {
  const m = /^(\d{2}):(\d{2}):(\d{2})-(\d{2}):(\d{2}):(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [h1, m1, s1, h2, m2, s2] = m.slice(1).map(Number);
  if (h1 > 23 || m1 > 59 || s1 > 59 || m2 > 59 || s2 > 59 || h2 > 24 || (h2 === 24 && (m2 || s2))) return undefined;
  const start = h1 * 3600 + m1 * 60 + s1;
  const end = h2 * 3600 + m2 * 60 + s2;
  return end > start ? { start, end } : undefined;
}

const WEEKDAY_INDEX: Record<string, string> = { Mon: 'monday', Tue: 'tuesday', Wed: 'wednesday', Thu: 'thursday', Fri: 'friday', Sat: 'saturday', Sun: 'sunday' };
const clockFormats = new Map<string, Intl.DateTimeFormat>();
/**
 * The local clock of each zone at the start of the last minute asked about: every zone's offset changes
 * on a minute boundary, so within a minute the local clock runs with UTC, and a serving process asks
 * formatToParts (most of a day-parted decision's targeting cost) once a minute per zone, not per request.
 */
const minuteClocks = new Map<string, { minute: number; day: string; seconds: number }>();

/** The weekday name and seconds since local midnight of `at` in time zone `zone` (DST included). */
export function localClock(at: Date, zone: string): { day: string; seconds: number } {
  const ms = at.getTime();
  const minute = Math.floor(ms / 60_000);
  let clock = minuteClocks.get(zone);
  if (clock?.minute !== minute) {
    let fmt = clockFormats.get(zone);
    if (!fmt) {
      fmt = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
      clockFormats.set(zone, fmt);
    }
    const parts = Object.fromEntries(fmt.formatToParts(new Date(minute * 60_000)).map((p) => [p.type, p.value]));
    clock = { minute, day: WEEKDAY_INDEX[parts.weekday], seconds: Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second) };
    minuteClocks.set(zone, clock);
  }
  return { day: clock.day, seconds: clock.seconds + Math.floor((ms - minute * 60_000) / 1000) };
}

/** Parsed ranges by their text: a day-parting's few distinct ranges, parsed once. */
const parsedRanges = new Map<string, { start: number; end: number } | undefined>();
function timeRange(text: string): { start: number; end: number } | undefined {
  if (parsedRanges.has(text)) return parsedRanges.get(text);
  const r = parseTimeRange(text);
  if (parsedRanges.size < 10_000) parsedRanges.set(text, r);
  return r;
}

/** Whether weekly `ranges` (weekday -> time ranges) allow `at` in `zone`. A day left out serves nothing. */
export function dayPartingAllows(ranges: Record<string, string[] | undefined>, at: Date, zone: string): boolean {
  const { day, seconds } = localClock(at, zone);
  for (const text of ranges[day] ?? []) {
    const r = timeRange(text);
    if (r && seconds >= r.start && seconds < r.end) return true;
  }
  return false;
}

/**
 * Data-key target logic, as AdButler writes it: `["AND"|"OR", condition, ...]`, where a condition is
 * `{"key": {"op": value}}` or a nested array. Operators compare the request's value of the key.
 */
export type DataKeyLogic = { all: boolean; terms: (DataKeyLogic | { key: string; op: DataKeyOp; value: string })[] };
export const DATA_KEY_OPS = ['=', '!=', '>', '>=', '<', '<=', 'contains', 'not_contains'] as const;
export type DataKeyOp = (typeof DATA_KEY_OPS)[number];

export function parseDataKeyLogic(text: string): { logic: DataKeyLogic; keys: Set<string> } | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { error: 'must be JSON text, such as ["OR", {"plan": {"=": "gold"}}, {"age": {">=": "18"}}].' };
  }
  const keys = new Set<string>();
  const walk = (node: unknown, depth: number): DataKeyLogic | string => {
    if (depth > 8) return 'nests deeper than 8 levels.';
    if (!Array.isArray(node) || node.length < 2 || (node[0] !== 'AND' && node[0] !== 'OR')) {
      return 'must be an array starting with "AND" or "OR", followed by at least one condition.';
    }
    const terms: DataKeyLogic['terms'] = [];
    for (const item of node.slice(1)) {
      if (Array.isArray(item)) {
        const sub = walk(item, depth + 1);
        if (typeof sub === 'string') return sub;
        terms.push(sub);
        continue;
      }
      if (!item || typeof item !== 'object' || Object.keys(item).length !== 1) return 'has a condition that is not {"key": {"operator": value}}.';
      const [key, test] = Object.entries(item as Record<string, unknown>)[0];
      if (!test || typeof test !== 'object' || Object.keys(test).length !== 1) return `has a condition on '${key}' that is not {"operator": value}.`;
      const [op, value] = Object.entries(test as Record<string, unknown>)[0];
      if (!(DATA_KEY_OPS as readonly string[]).includes(op)) return `uses operator '${op}'; use one of ${DATA_KEY_OPS.join(', ')}.`;
      if (typeof value !== 'string' && typeof value !== 'number') return `compares '${key}' with a value that is not a string or number.`;
      keys.add(key);
      terms.push({ key, op: op as DataKeyOp, value: String(value) });
    }
    return { all: node[0] === 'AND', terms };
  };
  const logic = walk(raw, 1);
  return typeof logic === 'string' ? { error: logic } : { logic, keys };
}

/** Evaluates parsed logic against the request's key-value data (`_abdk`). A missing key fails its condition. */
export function dataKeyLogicMatches(logic: DataKeyLogic, data: Record<string, string>): boolean {
  const test = (t: DataKeyLogic['terms'][number]): boolean => {
    if ('terms' in t) return dataKeyLogicMatches(t, data);
    const given = data[t.key];
    if (given === undefined) return false;
    const a = Number(given);
    const b = Number(t.value);
    const numeric = given.trim() !== '' && t.value.trim() !== '' && Number.isFinite(a) && Number.isFinite(b);
    switch (t.op) {
      case '=':
        return numeric ? a === b : given === t.value;
      case '!=':
        return numeric ? a !== b : given !== t.value;
      case '>':
        return numeric ? a > b : given > t.value;
      case '>=':
        return numeric ? a >= b : given >= t.value;
      case '<':
        return numeric ? a < b : given < t.value;
      case '<=':
        return numeric ? a <= b : given <= t.value;
      case 'contains':
        return given.toLowerCase().includes(t.value.toLowerCase());
      case 'not_contains':
        return !given.toLowerCase().includes(t.value.toLowerCase());
    }
  };
  return logic.all ? logic.terms.every(test) : logic.terms.some(test);
}
