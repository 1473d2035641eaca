/**
 * An order whose process dies between the debit and the end of the inventory step: the money must come
 * back and the half-made campaign must go, through the recovery sweep of the restarted selfserve.
 */
import { startOwnPlatform, type OwnPlatform } from '../../../gateway/test/support/own-platform';

const P = '/v2/self-serve/portals';
const CUSTOMERS = '/v2/self-serve/customers';
const ORDERS = '/v2/self-serve/orders';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Each inventory call of an order on this file's platform. */
const DEADLINE_MS = 4000;

async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

type Api = Awaited<ReturnType<OwnPlatform['newAccount']>>['test'];

/** A portal with one fixed-CPM portal zone and a customer holding `funds` in its wallet. */
async function shop(api: Api, email: string, cpm: number, funds: number) {
  const ok = async (r: Promise<{ status: number; body: any }>) => {
    const res = await r;
    if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const portal = (await ok(api.post(P, { name: 'Portal' }))).id;
  const zone = (await ok(api.post('/v2/zones/standard', { name: 'Zone', width: 300, height: 250 }))).id;
  const pz = (await ok(api.post(`${P}/${portal}/zones`, { zone, name: 'Sidebar', pricing_model: 'fixed-CPM', cpm, quantity: 1000 }))).id;
  const customer = (await ok(api.post(CUSTOMERS, { email, password: 'correct horse', portal }))).id;
  await ok(api.put(`${CUSTOMERS}/${customer}/add-funds`, { amount: funds }));
  return { ok, portal, pz, customer };
}

describe('crash recovery of self-serve orders', () => {
  let p: OwnPlatform;
  beforeAll(async () => {
    p = await startOwnPlatform({ ORDER_STALL_SECONDS: '2', ORDER_RECOVERY_INTERVAL_MS: '300', ORDER_INVENTORY_DEADLINE_MS: String(DEADLINE_MS) });
  }, 200_000);
  afterAll(async () => p?.stop(), 60_000);

  test('selfserve killed mid-order: the recovery sweep releases the hold and removes what inventory made', async () => {
    const api = (await p.newAccount()).test;
    const { ok, portal, pz, customer } = await shop(api, 'crash@example.com', 2, 120);
    const balance = async () => (await ok(api.get(`${CUSTOMERS}/${customer}`))).balance as number;
    const count = async (path: string) => (await ok(api.get(`${path}?limit=100`))).data.length as number;
    const inventoryNow = async () => ({
      schedules: await count('/v2/schedules'),
      campaigns: await count('/v2/campaigns/standard'),
      adItems: await count('/v2/ad-items/custom-html'),
      placements: await count('/v2/placements'),
    });
    const before = await inventoryNow();
    const cart = (await ok(api.post(`${P}/${portal}/cart`, {}))).id;
    // Enough items (4 inventory resources each) that the order is still at work when its process dies.
    for (let i = 0; i < 60; i++) await ok(api.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: pz, type: 'html5', custom_html: `<b>${i}</b>` }));

    let settled: { status: number } | undefined;
    const pending = api.post(ORDERS, { cart, customer }).then((r) => (settled = r));
    // Kill selfserve once the order has made part of its inventory: nothing in its memory survives.
    await until('the order has made ad items', async () => {
      if (settled) throw new Error(`the order ended (${settled.status}) before the kill; give it more items`);
      return (await count('/v2/ad-items/custom-html')) >= before.adItems + 2;
    }, 20_000);
    const selfservePid = p.pids().selfserve;
    process.kill(selfservePid, 'SIGKILL');
    const answered = await pending;
    expect(answered.status).toBe(503);
    expect(answered.body).toMatchObject({ object: 'error', http_status: 503 });
    const halfMade = await inventoryNow();
    expect(halfMade.campaigns).toBe(before.campaigns + 1);
    expect(halfMade.adItems).toBeGreaterThanOrEqual(before.adItems + 2);
    await until('the launcher restarts selfserve', async () => p.pids().selfserve !== selfservePid, 20_000);

    await until('the sweep gives the money back', async () => (await api.get(`${CUSTOMERS}/${customer}`)).body?.balance === 120, 60_000);
    // The release comes first (selfserve's own database), then the clean-up in inventory.
    await until('the sweep removes what inventory made', async () => JSON.stringify(await inventoryNow()) === JSON.stringify(before), 30_000);
    expect((await ok(api.get(ORDERS))).data).toEqual([]);
    const tx = await ok(api.get(`${CUSTOMERS}/${customer}/transactions`));
    // History is append-only: the hold stays, and the release gives it back.
    expect(tx.data.map((t: any) => [t.type, t.amount])).toEqual([['release', 120], ['order', -120], ['deposit', 120]]);
    // And the cart can be ordered for real now.
    const placed = await ok(api.post(ORDERS, { cart, customer }));
    expect(placed).toMatchObject({ status: 'placed', total: 120 });
    expect(await balance()).toBe(0);
  }, 180_000);

  test('inventory killed mid-order: the hold is released before the 402, history keeps hold and release, the sweep cleans up', async () => {
    const api = (await p.newAccount()).test;
    const { ok, portal, pz, customer } = await shop(api, 'inventory-down@example.com', 1.5, 100);
    const count = async (path: string) => (await ok(api.get(`${path}?limit=100`))).data.length as number;
    const adItemsBefore = await count('/v2/ad-items/custom-html');
    const cart = (await ok(api.post(`${P}/${portal}/cart`, {}))).id;
    for (let i = 0; i < 60; i++) await ok(api.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: pz, type: 'html5', custom_html: `<b>${i}</b>` }));

    let settled: { status: number } | undefined;
    const pending = api.post(ORDERS, { cart, customer }).then((r) => (settled = r));
    await until('the order has made ad items', async () => {
      if (settled) throw new Error(`the order ended (${settled.status}) before the kill; give it more items`);
      return (await count('/v2/ad-items/custom-html')) >= adItemsBefore + 2;
    }, 20_000);
    const inventoryPid = p.pids().inventory;
    process.kill(inventoryPid, 'SIGKILL');
    const answered = await pending;
    expect(answered.status).toBe(402);
    expect((answered as any).body).toMatchObject({ object: 'error', type: 'order_failed_error', message: expect.stringMatching(/nothing was charged/) });
    // At once, not after a sweep: the money is back and the history shows the hold and its reversal.
    expect((await ok(api.get(`${CUSTOMERS}/${customer}`))).balance).toBe(100);
    const tx = (await ok(api.get(`${CUSTOMERS}/${customer}/transactions`))).data;
    expect(tx.map((t: any) => [t.type, t.amount, t.balance])).toEqual([['release', 90, 100], ['order', -90, 10], ['deposit', 100, 100]]);
    expect(tx[0].order).toBe(tx[1].order);

    // Once inventory is back, the sweep removes what the failed order made there, and the order.
    await until('the launcher restarts inventory', async () => p.pids().inventory !== inventoryPid, 20_000);
    await until('the sweep cleans up inventory', async () => {
      const r = await api.get('/v2/ad-items/custom-html?limit=100');
      return r.status === 200 && r.body.data.length === adItemsBefore && (await count(ORDERS)) === 0;
    }, 60_000);
    const placed = await ok(api.post(ORDERS, { cart, customer }));
    expect(placed).toMatchObject({ status: 'placed', total: 90 });
    expect((await ok(api.get(`${CUSTOMERS}/${customer}`))).balance).toBe(10);
  }, 180_000);

  test('inventory frozen mid-order: the 402 comes within one inventory deadline, with the money back; the clean-up follows once inventory thaws', async () => {
    const api = (await p.newAccount()).test;
    const { ok, portal, pz, customer } = await shop(api, 'inventory-frozen@example.com', 1, 50);
    const adItemsBefore = (await ok(api.get('/v2/ad-items/custom-html?limit=100'))).data.length;
    const cart = (await ok(api.post(`${P}/${portal}/cart`, {}))).id;
    for (let i = 0; i < 3; i++) await ok(api.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: pz, type: 'html5', custom_html: `<i>${i}</i>` }));
    const inventoryPid = p.pids().inventory;
    process.kill(inventoryPid, 'SIGSTOP');
    let answered: { status: number; body: any };
    let elapsed = 0;
    const started = Date.now();
    try {
      answered = await api.post(ORDERS, { cart, customer });
      elapsed = Date.now() - started;
    } finally {
      process.kill(inventoryPid, 'SIGCONT');
    }
    expect(answered.status).toBe(402);
    expect(answered.body).toMatchObject({ object: 'error', type: 'order_failed_error' });
    // One inventory call ran to its deadline; the clean-up (more calls to the frozen inventory) did not hold the answer.
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    expect(elapsed).toBeLessThan(DEADLINE_MS * 1.75);
    expect((await ok(api.get(`${CUSTOMERS}/${customer}`))).balance).toBe(50);
    await until('what the failed order made is cleaned up', async () => {
      const r = await api.get('/v2/ad-items/custom-html?limit=100');
      return r.status === 200 && r.body.data.length === adItemsBefore && (await ok(api.get(`${ORDERS}?limit=100`))).data.length === 0;
    }, 60_000);
  }, 120_000);
});
