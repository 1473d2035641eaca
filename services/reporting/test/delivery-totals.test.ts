/**
 * Reporting's delivery totals (the truth behind quotas, day caps and a schedule's status): what the
 * rollups hold for groups of placements, lifetime or since a day's start, through the real gRPC API.
 */
import crypto from 'node:crypto';
import { Metadata, status } from '@grpc/grpc-js';
import { reports } from '../../shared/grpc/clients';
import { tenantMetadata } from '../../shared/tenant';
import { EventKind, recordEvents, servingEvent } from './events-fixtures';

// An account id of its own per run, far above those the platform allocates in tests.
const ACCOUNT = 900_000_000 + Math.floor(Math.random() * 90_000_000);

const run = crypto.randomUUID();

test('counts impressions and clicks per scope, lifetime or since an instant, and refuses what it cannot answer', async () => {
  const dayStart = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  const at = (ms: number) => new Date(ms).toISOString();
  await recordEvents([
    servingEvent({ account: ACCOUNT, placement: 11, kind: EventKind.IMPRESSION, id: `${run}:1`, occurredAt: at(dayStart - 3_600_000) }),
    servingEvent({ account: ACCOUNT, placement: 11, kind: EventKind.IMPRESSION, id: `${run}:2`, occurredAt: at(dayStart + 60_000) }),
    servingEvent({ account: ACCOUNT, placement: 12, kind: EventKind.IMPRESSION, id: `${run}:3`, occurredAt: at(dayStart + 120_000) }),
    servingEvent({ account: ACCOUNT, placement: 12, kind: EventKind.CLICK, id: `${run}:4`, occurredAt: at(dayStart + 180_000) }),
    // Another account's placement of the same id never counts here.
    servingEvent({ account: ACCOUNT + 1, placement: 11, kind: EventKind.IMPRESSION, id: `${run}:5`, occurredAt: at(dayStart + 60_000) }),
  ]);
  const totals = await reports.getDelivery({
    account: ACCOUNT,
    scopes: [
      { key: 'schedule', placements: [11, 12], since: '' },
      { key: 'today', placements: [11, 12], since: at(dayStart) },
      { key: 'one', placements: [11], since: '' },
      { key: 'none', placements: [], since: '' },
    ],
  });
  expect(totals.counts).toEqual([
    { key: 'schedule', impressions: 3, clicks: 1 },
    { key: 'today', impressions: 2, clicks: 1 },
    { key: 'one', impressions: 2, clicks: 0 },
    { key: 'none', impressions: 0, clicks: 0 },
  ]);
  await expect(reports.getDelivery({ account: ACCOUNT, scopes: [{ key: 'x', placements: [11], since: at(dayStart + 60_000) }] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  // An API caller asks only for its own account.
  const other = tenantMetadata({ accountId: ACCOUNT + 1, mode: 'live' }, new Metadata());
  await expect(reports.getDelivery({ account: ACCOUNT, scopes: [] }, { metadata: other })).rejects.toMatchObject({ code: status.NOT_FOUND });
});
