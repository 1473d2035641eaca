/**
 * The shape the auction reports share (auction placements, demand source): rollup rows tallied per
 * reported entity (the account, a publisher, a zone...), over the whole range and per period, and
 * broken down into pairs (a placement in a zone, an endpoint in a zone...), each with its own tallies.
 */

/** Totals of the rows added to it; `extra` is what a row alone does not say (a placement's CPM). */
export interface Tally<Row, Extra, Totals> {
  add(row: Row, extra: Extra): void;
  totals(): Totals;
}

interface Pair<Row, T> {
  /** The pair's first row: it names the pair's members. */
  row: Row;
  summary: T;
  periods: Map<number, T>;
}

interface Entity<Row, T> {
  summary: T;
  periods: T[];
  pairs: Map<string, Pair<Row, T>>;
}

export interface ReportedEntity<Totals, BreakdownRow> {
  id: number;
  summary: Totals;
  breakdown: BreakdownRow[];
  details: { startDate: string; totals: Totals; breakdown: BreakdownRow[] }[];
}

export class EntityBreakdown<Row, Extra, Totals, T extends Tally<Row, Extra, Totals>> {
  private readonly entities = new Map<number, Entity<Row, T>>();

  constructor(
    private readonly periods: number,
    private readonly newTally: () => T,
  ) {}

  /** The entity's tallies, made empty the first time (the overview's one row shows with no rows). */
  entity(id: number): Entity<Row, T> {
    let e = this.entities.get(id);
    if (!e) this.entities.set(id, (e = { summary: this.newTally(), periods: Array.from({ length: this.periods }, () => this.newTally()), pairs: new Map() }));
    return e;
  }

  /** Adds a row of `period` (0-based; out of range counts in the summary only) to its entity and pair. */
  add(entityId: number, period: number, pairKey: string, row: Row, extra: Extra): void {
    const e = this.entity(entityId);
    e.summary.add(row, extra);
    e.periods[period]?.add(row, extra);
    let pair = e.pairs.get(pairKey);
    if (!pair) e.pairs.set(pairKey, (pair = { row, summary: this.newTally(), periods: new Map() }));
    let inPeriod = pair.periods.get(period);
    if (!inPeriod) pair.periods.set(period, (inPeriod = this.newTally()));
    pair.summary.add(row, extra);
    inPeriod.add(row, extra);
  }

  /**
   * The entities in id order with their summary and, as asked, their breakdown (pairs in `order`,
   * each as `rowOf` makes it) and details per period (only the pairs that had rows in it).
   */
  report<BreakdownRow>(opts: {
    startDates: string[];
    breakdown: boolean;
    details: boolean;
    order: (a: Row, b: Row) => number;
    rowOf: (row: Row, totals: Totals) => BreakdownRow;
  }): ReportedEntity<Totals, BreakdownRow>[] {
    return [...this.entities.entries()]
      .sort(([a], [b]) => a - b)
      .map(([id, e]) => {
        const pairs = [...e.pairs.values()].sort((a, b) => opts.order(a.row, b.row));
        return {
          id,
          summary: e.summary.totals(),
          breakdown: opts.breakdown ? pairs.map((pair) => opts.rowOf(pair.row, pair.summary.totals())) : [],
          details: opts.details
            ? opts.startDates.map((startDate, i) => ({
              startDate,
              totals: e.periods[i].totals(),
              breakdown: opts.breakdown ? pairs.filter((pair) => pair.periods.has(i)).map((pair) => opts.rowOf(pair.row, pair.periods.get(i)!.totals())) : [],
            }))
            : [],
        };
      });
  }
}
