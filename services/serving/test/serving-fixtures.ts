import http from 'node:http';
import knexFactory from 'knex';
import type { Client } from '../../../gateway/test/support/api';
import type { PlatformInfo } from '../../../gateway/test/support/platform';
import { platformDatabaseUrl } from '../../../gateway/test/support/service-replica';

/** A plain HTTP GET (keep-alive) to a serving host; the body as text, JSON when it parses. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
export function serveGet(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; body: any; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode!, text, body, headers: res.headers });
      });
    });
    req.on('error', reject);
  });
}

export function closeServeAgent(): void {
  agent.destroy();
}

const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');

/**
 * A 300x250 standard zone with a campaign placed in it; the campaign serves one image ad item per
 * weight given (assignment weights), each linking to `location` + `/ad{i}`.
 */
export async function zoneWithCampaign(api: Client, weights: number[], location = 'https://advertiser.example/landing') {
  const pub = await api.post('/v1/publishers', { name: 'Daily News', email: 'ads@daily.example' });
  expect(pub.status).toBe(200);
  const adv = await api.post('/v1/advertisers', { name: 'Shoes Inc', email: 'ads@shoes.example' });
  expect(adv.status).toBe(200);
  const zone = await api.post('/v2/zones/standard', { name: 'Top banner', width: 300, height: 250, publisher: pub.body.id });
  expect(zone.status).toBe(200);
  const campaign = await api.post('/v2/campaigns/standard', { name: 'Spring', advertiser: adv.body.id });
  expect(campaign.status).toBe(200);
  const schedule = await api.post('/v2/schedules', { start_date: yesterday() });
  expect(schedule.status).toBe(200);
  const items: any[] = [];
  const assignments: any[] = [];
  for (const [i, weight] of weights.entries()) {
    const item = await api.post('/v2/ad-items/image', {
      name: `Ad ${i}`,
      width: 300,
      height: 250,
      creative_url: `https://cdn.example/ad${i}.png`,
      location: `${location}/ad${i}`,
      advertiser: adv.body.id,
    });
    expect(item.status).toBe(200);
    items.push(item.body);
    const a = await api.post('/v2/campaign-assignments', { campaign: { id: campaign.body.id, type: 'standard_campaign' }, advertisement: { id: item.body.id, type: 'image_ad_item' }, weight });
    expect(a.status).toBe(200);
    assignments.push(a.body);
  }
  const placement = await api.post('/v2/placements', {
    zone: { id: zone.body.id, type: 'standard_zone' },
    advertisement: { id: campaign.body.id, type: 'standard_campaign' },
    schedule: schedule.body.id,
    cost: { cpm: 2.5 },
  });
  expect(placement.status).toBe(200);
  return { publisher: pub.body, advertiser: adv.body, zone: zone.body, campaign: campaign.body, schedule: schedule.body, items, assignments, placement: placement.body };
}

/** Polls until `check` holds, returning the ms it took; throws after `timeoutMs`. */
export async function within(timeoutMs: number, check: () => Promise<boolean>, stepMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** What reporting stored for an account: its serving events (kind and decision), read from reporting's own table. */
export async function reportedEvents(info: PlatformInfo, account: number): Promise<{ kind: number; decision: string; id: string; ad_item_id: number }[]> {
  const db = knexFactory({ client: 'pg', connection: platformDatabaseUrl(info), searchPath: [`${info.env.DB_SCHEMA_PREFIX ?? ''}reporting`], pool: { min: 0, max: 1 } });
  try {
    return await db('serving_events').where('account_id', account).select('kind', 'decision', 'id', 'ad_item_id');
  } finally {
    await db.destroy();
  }
}
