/**
 * What a report's money means is reporting's to say: cost, payout, revenue and the effective rates
 * per currency, on every total, also of reports stored before totals carried them.
 */
import { Report } from '../../../proto/gen/adserver/reporting/v1/reports';
import { financialsOf, withFinancials } from '../report-query';

const totals = { responses: 10, impressions: 4, clicks: 2, conversions: 0, cost: [{ currency: 'USD', amount: '0.010000000' }, { currency: 'EUR', amount: '3' }] };

test('financials per currency: whole cost as revenue, no payout yet, rates per thousand impressions, click and conversion', () => {
  expect(financialsOf(totals)).toEqual({
    cost: [{ currency: 'USD', amount: '0.01' }, { currency: 'EUR', amount: '3' }],
    payout: [{ currency: 'USD', amount: '0' }, { currency: 'EUR', amount: '0' }],
    revenue: [{ currency: 'USD', amount: '0.01' }, { currency: 'EUR', amount: '3' }],
    eCpm: [{ currency: 'USD', amount: '2.5' }, { currency: 'EUR', amount: '750' }],
    eCpc: [{ currency: 'USD', amount: '0.005' }, { currency: 'EUR', amount: '1.5' }],
    // No conversions: the rate is zero, not a division by zero.
    eCpa: [{ currency: 'USD', amount: '0' }, { currency: 'EUR', amount: '0' }],
  });
});

test('a report stored without financials gets them on every total when read back', () => {
  const stored = Report.fromPartial({
    type: 'zone',
    data: [{ id: 1, summary: totals, breakdown: [{ placement: 2, totals }], details: [{ startDate: '2026-01-01T00:00:00+00:00', totals, breakdown: [{ placement: 2, totals }] }] }],
  });
  const read = withFinancials(Report.decode(Report.encode(stored).finish()));
  const e = read.data[0];
  for (const t of [e.summary, e.breakdown[0].totals, e.details[0].totals, e.details[0].breakdown[0].totals]) {
    expect(t?.financials?.eCpc).toEqual([{ currency: 'USD', amount: '0.005' }, { currency: 'EUR', amount: '1.5' }]);
  }
});
