import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { describeCrud } from '../../../gateway/test/support/crud-suite';
import { accounts } from '../../../services/shared/grpc/clients';

const P = '/v2/self-serve/portals';
const CUSTOMERS = '/v2/self-serve/customers';
const ORDERS = '/v2/self-serve/orders';
let seq = 0;
const uniqueEmail = () => `customer${Date.now().toString(36)}${++seq}@example.com`;

async function ok(res: Promise<{ status: number; body: any }>): Promise<any> {
  const r = await res;
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 200 });
  return r.body;
}

const newPortal = async (api: Client) => (await ok(api.post(P, { name: 'Portal' }))).id as number;
const newZone = async (api: Client, width = 300, height = 250) => (await ok(api.post('/v2/zones/standard', { name: 'Zone', width, height }))).id as number;
async function newPortalZone(api: Client, portal: number, body: Record<string, unknown> = {}) {
  const zone = await newZone(api);
  return (await ok(api.post(`${P}/${portal}/zones`, { zone, name: 'Sidebar', pricing_model: 'fixed-CPM', cpm: 2.5, quantity: 1000, ...body }))).id as number;
}
const newCart = async (api: Client, portal: number, body: Record<string, unknown> = {}) => (await ok(api.post(`${P}/${portal}/cart`, body))).id as number;

describeCrud('portals', {
  version: 'v2',
  path: P,
  object: 'portal',
  create: (_api, n) => ({ name: `Portal ${n}`, description: 'Ads on our sites' }),
  update: { name: 'Renamed portal' },
  invalid: [{ body: { name: '' }, field: 'name' }, { body: { description: 5 }, field: 'description' }],
  required: ['name'],
});

describeCrud('portal zones', {
  version: 'v2',
  path: `${P}/:portal/zones`,
  object: 'portal_zone',
  setup: async (api) => ({ portal: await newPortal(api), zone: await newZone(api) }),
  create: (_api, n, s) => ({ zone: s.zone, name: `Zone ${n}`, pricing_model: 'fixed-CPM', cpm: 2.5, quantity: 1000 }),
  update: { name: 'Renamed zone', cpm: 3 },
  invalid: [
    { body: { pricing_model: 'free' }, field: 'pricing_model' },
    { body: { cpm: -1 }, field: 'cpm' },
    { body: { zone: 999999999 }, field: 'zone' },
  ],
  required: ['zone', 'name', 'pricing_model'],
});

describeCrud('carts', {
  version: 'v2',
  path: `${P}/:portal/cart`,
  object: 'cart',
  operations: ['create', 'get', 'update', 'delete'],
  setup: async (api) => ({ portal: await newPortal(api) }),
  create: () => ({}),
  update: { set_dates: false },
  invalid: [{ body: { start_date: '2030-13-01', end_date: '2030-12-31' }, field: 'start_date' }, { body: { set_dates: 'yes' }, field: 'set_dates' }],
  required: [],
});

describeCrud('cart items', {
  version: 'v2',
  path: `${P}/:portal/cart/:cart/cart-items`,
  object: 'cart-item',
  stringId: true,
  setup: async (api) => {
    const portal = await newPortal(api);
    return { portal, portal_zone: await newPortalZone(api, portal), cart: await newCart(api, portal) };
  },
  create: (_api, n, s) => ({ portal_zone: s.portal_zone, type: 'html5', custom_html: `<b>Ad ${n}</b>`, destination: 'https://shop.example.com' }),
  update: { keywords: 'shoes,boots' },
  invalid: [
    { body: { type: 'video' }, field: 'type' },
    { body: { destination: 'not a url' }, field: 'destination' },
  ],
  required: ['portal_zone'],
});

describeCrud('customers', {
  version: 'v2',
  path: CUSTOMERS,
  object: 'customer',
  operations: ['list', 'create', 'get', 'update'],
  setup: async (api) => ({ portal: await newPortal(api) }),
  create: (_api, _n, s) => ({ email: uniqueEmail(), password: 'correct horse', portal: s.portal, first_name: 'Ada', company_name: 'Acme' }),
  update: { first_name: 'Ann', low_funds_amount: 5, low_funds_notify: true },
  invalid: [
    { body: { email: 'not-an-email' }, field: 'email' },
    { body: { password: 'short' }, field: 'password' },
    { body: { portal: 999999999 }, field: 'portal' },
  ],
  required: ['email', 'password', 'portal'],
  hidden: ['password'],
});

describe('self-serve specifics', () => {
  let acct: TestAccount;
  let api: Client;
  let portal: number;
  beforeAll(async () => {
    acct = await newAccount(['self-serve']);
    // The money tests send more than a default budget's worth of requests.
    await accounts.setAccountLimits({ accountId: acct.id, generalLimit: 100_000, reportingLimit: 100_000 });
    api = acct.test;
    portal = await newPortal(api);
  });

  const newCustomer = async (body: Record<string, unknown> = {}, client = api, portalId = portal) =>
    ok(client.post(CUSTOMERS, { email: uniqueEmail(), password: 'correct horse', portal: portalId, ...body }));
  const addFunds = (id: number, amount: unknown, client = api) => client.put(`${CUSTOMERS}/${id}/add-funds`, { amount });
  const balanceOf = async (id: number, client = api) => (await ok(client.get(`${CUSTOMERS}/${id}`))).balance as number;

  describe('carts', () => {
    test('dates are stored as whole days, set_dates tells they are used, set_dates false clears them', async () => {
      const cart = await ok(api.post(`${P}/${portal}/cart`, { start_date: '2030-01-05', end_date: '2030-01-20' }));
      expect(cart).toMatchObject({ object: 'cart', portal, set_dates: true, start_date: '2030-01-05 00:00:00', end_date: '2030-01-20 23:59:59' });
      expect(cart.self).toBe(`${P}/${portal}/cart/${cart.id}`);
      const cleared = await ok(api.put(`${P}/${portal}/cart/${cart.id}`, { set_dates: false }));
      expect(cleared).toMatchObject({ set_dates: false, start_date: null, end_date: null });
      const plain = await ok(api.post(`${P}/${portal}/cart`, {}));
      expect(plain).toMatchObject({ set_dates: false, start_date: null, end_date: null });
    });

    test('dates must come as an ordered pair; set_dates true needs them', async () => {
      paramFor(expectError(await api.post(`${P}/${portal}/cart`, { start_date: '2030-02-01' }), 400, 'v2'), 'end_date');
      paramFor(expectError(await api.post(`${P}/${portal}/cart`, { start_date: '2030-02-10', end_date: '2030-02-01' }), 400, 'v2'), 'end_date');
      const cart = await newCart(api, portal);
      paramFor(expectError(await api.put(`${P}/${portal}/cart/${cart}`, { set_dates: true }), 400, 'v2'), 'start_date');
    });

    test('a cart is found only under its own portal, and carts have no list', async () => {
      const cart = await newCart(api, portal);
      const other = await newPortal(api);
      expectError(await api.get(`${P}/${other}/cart/${cart}`), 404, 'v2');
      expectError(await api.get(`${P}/999999999/cart/${cart}`), 404, 'v2');
      expectError(await api.get(`${P}/${portal}/cart`), 501, 'v2');
    });
  });

  describe('cart items', () => {
    let zoneId: number;
    let cart: number;
    beforeAll(async () => {
      zoneId = await newPortalZone(api, portal, { cpm: 4, quantity: 5000, multipler: 1.5 });
      cart = await newCart(api, portal);
    });
    const items = () => `${P}/${portal}/cart/${cart}/cart-items`;

    test('cpm, cpc, quantity and multipler come from the portal zone and cannot be set', async () => {
      const item = await ok(api.post(items(), { portal_zone: zoneId, type: 'raw', custom_html: '<i>x</i>' }));
      expect(item).toMatchObject({ object: 'cart-item', cart, portal_zone: zoneId, cpm: 4, cpc: null, quantity: 5000, multipler: 1.5 });
      expect(typeof item.id).toBe('string');
      const same = await ok(api.put(`${items()}/${item.id}`, { cpm: 0.01, keywords: 'x' }));
      expect(same.cpm).toBe(4);
      paramFor(expectError(await api.put(`${items()}/${item.id}`, { portal_zone: zoneId }), 400, 'v2'), 'portal_zone');
    });

    test('the portal zone must belong to the cart\'s portal, and the cart to the portal of the path', async () => {
      const otherPortal = await newPortal(api);
      const foreignZone = await newPortalZone(api, otherPortal);
      const err = expectError(await api.post(items(), { portal_zone: foreignZone, type: 'html5', custom_html: 'x' }), 400, 'v2');
      expect(paramFor(err, 'portal_zone').type).toBe('invalid_reference');
      expectError(await api.post(`${P}/${otherPortal}/cart/${cart}/cart-items`, { portal_zone: foreignZone, type: 'html5', custom_html: 'x' }), 404, 'v2');
      expectError(await api.post(items(), { portal_zone: 999999999 }), 400, 'v2');
    });

    test('fields must fit the type', async () => {
      paramFor(expectError(await api.post(items(), { portal_zone: zoneId, type: 'image', custom_html: '<b/>' }), 400, 'v2'), 'custom_html');
      paramFor(expectError(await api.post(items(), { portal_zone: zoneId, type: 'html5' }), 400, 'v2'), 'custom_html');
      paramFor(expectError(await api.post(items(), { portal_zone: zoneId, type: 'template' }), 400, 'v2'), 'template');
      paramFor(expectError(await api.post(items(), { portal_zone: zoneId, type: 'html5', custom_html: 'x', alt_text: 'Alt' }), 400, 'v2'), 'alt_text');
    });

    test('auction fields only for auction zones, where bid_amount and total_limit are needed', async () => {
      paramFor(expectError(await api.post(items(), { portal_zone: zoneId, type: 'image', bid_amount: 1 }), 400, 'v2'), 'bid_amount');
      const auction = await newPortalZone(api, portal, { pricing_model: 'auction', cpm: null, quantity: null });
      paramFor(expectError(await api.post(items(), { portal_zone: auction, type: 'image' }), 400, 'v2'), 'bid_amount');
      paramFor(expectError(await api.post(items(), { portal_zone: auction, type: 'image', bid_amount: 2, total_limit: 10, daily_limit: 20 }), 400, 'v2'), 'daily_limit');
      const item = await ok(api.post(items(), { portal_zone: auction, type: 'image', bid_amount: 2, daily_limit: 5, total_limit: 10 }));
      expect(item).toMatchObject({ bid_amount: 2, daily_limit: 5, total_limit: 10 });
    });

    test('template variables are checked against the native template', async () => {
      const template = await ok(
        api.post('/v2/templates/native', {
          name: 'Card',
          raw_html: '<div>[%Title%] [%Sub%]</div>',
          variables: [
            { name: 'Title', placeholder: 'Title', type: 'text', max_length: 20 },
            { name: 'Sub', placeholder: 'Sub', type: 'text', optional: true },
          ],
        }),
      );
      const [title, sub] = template.variables.map((v: { id: number }) => v.id);
      const base = { portal_zone: zoneId, type: 'template', template: template.id };
      for (const template_variables of [[{ id: 999999, value: 'x' }], [{ id: sub, value: 'only optional' }], [{ id: title, value: 'x'.repeat(21) }], [{ id: title, value: true }]]) {
        paramFor(expectError(await api.post(items(), { ...base, template_variables }), 400, 'v2'), 'template_variables');
      }
      paramFor(expectError(await api.post(items(), { ...base, template: 999999999 }), 400, 'v2'), 'template');
      const item = await ok(api.post(items(), { ...base, template_variables: [{ id: title, value: 'Hello' }, { id: sub, value: 42 }] }));
      expect(item.template_variables).toEqual([{ id: title, value: 'Hello' }, { id: sub, value: 42 }]);
    });

    test('deleting the portal zone deletes its cart items', async () => {
      const z = await newPortalZone(api, portal);
      const item = await ok(api.post(items(), { portal_zone: z, type: 'html5', custom_html: 'x' }));
      await ok(api.del(`${P}/${portal}/zones/${z}`));
      expectError(await api.get(`${items()}/${item.id}`), 404, 'v2');
    });
  });

  describe('customers', () => {
    test('email is unique per account and mode, whatever its case', async () => {
      const email = uniqueEmail();
      await newCustomer({ email });
      const dup = expectError(await api.post(CUSTOMERS, { email: email.toUpperCase(), password: 'correct horse', portal }), 409, 'v2');
      expect(dup.message).toMatch(/already exists/);
      const liveCustomer = await newCustomer({ email }, acct.live, await newPortal(acct.live));
      expect(liveCustomer.email).toBe(email);
      const other = await newCustomer();
      expectError(await api.put(`${CUSTOMERS}/${other.id}`, { email }), 409, 'v2');
    });

    test('concurrent creates with one email leave exactly one customer', async () => {
      const email = uniqueEmail();
      const results = await Promise.all([0, 1, 2, 3].map(() => api.post(CUSTOMERS, { email, password: 'correct horse', portal })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    });

    test('a linked advertiser is created; the password is never returned; the balance starts at 0', async () => {
      const c = await newCustomer({ company_name: 'Widgets Inc', password: 'a secret pass' });
      expect(c).toMatchObject({ balance: 0, last_accessed: null, company_name: 'Widgets Inc' });
      expect(JSON.stringify(c)).not.toContain('a secret pass');
      const adv = await ok(api.get(`/v2/advertisers/${c.advertiser}`));
      expect(adv).toMatchObject({ name: 'Widgets Inc', email: c.email });
      expectError(await acct.live.get(`/v2/advertisers/${c.advertiser}`), 404, 'v2');
      expectError(await api.del(`${CUSTOMERS}/${c.id}`), 501, 'v2');
    });
  });

  describe('wallets', () => {
    test('add-funds credits the wallet, answers the customer with the new balance and the transaction', async () => {
      const c = await newCustomer();
      const first = await ok(addFunds(c.id, 25.5));
      expect(first).toMatchObject({ object: 'customer', id: c.id, balance: 25.5, transaction: { object: 'wallet_transaction', type: 'deposit', amount: 25.5, balance: 25.5 } });
      const second = await ok(addFunds(c.id, 0.75));
      expect(second.balance).toBe(26.25);
      const tx = await ok(api.get(`${CUSTOMERS}/${c.id}/transactions`));
      expect(tx).toMatchObject({ object: 'list', has_more: false, url: `${CUSTOMERS}/${c.id}/transactions` });
      expect(tx.data.map((t: any) => [t.type, t.amount, t.balance])).toEqual([['deposit', 0.75, 26.25], ['deposit', 25.5, 25.5]]);
    });

    test('add-funds refuses anything but a positive amount with two decimals, and changes nothing', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 10));
      for (const amount of [0, -5, 1.234, '10', null, 1e12]) {
        paramFor(expectError(await addFunds(c.id, amount), 400, 'v2'), 'amount');
      }
      paramFor(expectError(await api.put(`${CUSTOMERS}/${c.id}/add-funds`, {}), 400, 'v2'), 'amount');
      paramFor(expectError(await api.put(`${CUSTOMERS}/${c.id}/add-funds`, { amount: 5, currency: 'USD' }), 400, 'v2'), 'currency');
      expectError(await addFunds(999999999, 5), 404, 'v2');
      expect(await balanceOf(c.id)).toBe(10);
      expect((await ok(api.get(`${CUSTOMERS}/${c.id}/transactions`))).data).toHaveLength(1);
    });

    test('a test-mode wallet is invisible to the live key and another account', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 5));
      expectError(await addFunds(c.id, 5, acct.live), 404, 'v2');
      const other = await newAccount();
      expectError(await addFunds(c.id, 5, other.test), 404, 'v2');
      expectError(await other.test.get(`${CUSTOMERS}/${c.id}/transactions`), 404, 'v2');
      expect(await balanceOf(c.id)).toBe(5);
    });

    test('parallel add-funds never lose or double-count money', async () => {
      const c = await newCustomer();
      const results = await Promise.all(Array.from({ length: 20 }, () => addFunds(c.id, 1.1)));
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(await balanceOf(c.id)).toBe(22);
      const tx = await ok(api.get(`${CUSTOMERS}/${c.id}/transactions?limit=100`));
      expect(tx.data).toHaveLength(20);
      expect(tx.data.map((t: any) => t.balance).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => Math.round((i + 1) * 110) / 100));
    });
  });

  describe('orders', () => {
    /** A cart of `n` html5 items in a fixed-CPM zone; each costs cpm × quantity / 1000 × multipler. */
    async function cartOf(n: number, zone: Record<string, unknown> = {}) {
      const pz = await newPortalZone(api, portal, { cpm: 2, quantity: 1000, ...zone });
      const cart = await newCart(api, portal, { start_date: '2030-03-01', end_date: '2030-03-31' });
      for (let i = 0; i < n; i++) await ok(api.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: pz, type: 'html5', custom_html: `<b>${i}</b>` }));
      return { cart, pz };
    }
    const order = (cart: number, customer: number) => api.post(ORDERS, { cart, customer });
    const count = async (path: string) => (await ok(api.get(`${path}?limit=100`))).data.length as number;

    test('an order debits the wallet and creates the campaign, ad items and placements', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 10));
      const { cart } = await cartOf(2, { multipler: 1.25 });
      const o = await ok(order(cart, c.id));
      expect(o).toMatchObject({ object: 'order', self: `${ORDERS}/${o.id}`, customer: c.id, portal, cart, advertiser: c.advertiser, status: 'placed', total: 5 });
      expect(o.start_date).toBe('2030-03-01 00:00:00');
      expect(await balanceOf(c.id)).toBe(5);
      const campaign = await ok(api.get(`/v2/campaigns/standard/${o.campaign}`));
      expect(campaign.advertiser).toBe(c.advertiser);
      const items = await ok(api.get(`${ORDERS}/${o.id}/items`));
      expect(items.data).toHaveLength(2);
      for (const it of items.data) {
        expect(it).toMatchObject({ object: 'order_item', order: o.id, type: 'html5', price: 2.5, ad_item: { type: 'custom_html_ad_item' } });
        const placement = await ok(api.get(`/v2/placements/${it.placement}`));
        expect(placement.advertisement).toEqual({ id: it.ad_item.id, type: 'custom_html_ad_item' });
        await ok(api.get(`/v2/ad-items/custom-html/${it.ad_item.id}`));
      }
      expect((await ok(api.get(`${ORDERS}?id=${o.id}`))).data).toHaveLength(1);
      const tx = await ok(api.get(`${CUSTOMERS}/${c.id}/transactions`));
      expect(tx.data[0]).toMatchObject({ type: 'order', amount: -5, balance: 5, order: o.id });
      expect(expectError(await order(cart, c.id), 409, 'v2').message).toMatch(/already been ordered/);
      expect(await balanceOf(c.id)).toBe(5);
    });

    test('order errors: missing fields, unknown cart or customer, empty cart, foreign portal, insufficient funds', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 1));
      paramFor(expectError(await api.post(ORDERS, { cart: 1 }), 400, 'v2'), 'customer');
      paramFor(expectError(await api.post(ORDERS, { cart: 'x', customer: c.id }), 400, 'v2'), 'cart');
      paramFor(expectError(await order(999999999, c.id), 400, 'v2'), 'cart');
      const { cart } = await cartOf(1);
      paramFor(expectError(await order(cart, 999999999), 400, 'v2'), 'customer');
      paramFor(expectError(await order(await newCart(api, portal), c.id), 400, 'v2'), 'cart');
      const stranger = await newCustomer({}, api, await newPortal(api));
      paramFor(expectError(await order(cart, stranger.id), 400, 'v2'), 'customer');
      const poor = expectError(await order(cart, c.id), 402, 'v2');
      expect(poor.message).toMatch(/Insufficient funds/);
      expect(await balanceOf(c.id)).toBe(1);
      expect((await ok(api.get(`${ORDERS}?limit=100`))).data.filter((o: any) => o.customer === c.id)).toHaveLength(0);
      expectError(await acct.live.post(ORDERS, { cart, customer: c.id }), 400, 'v2');
    });

    test('two simultaneous orders on one wallet: only what the balance covers goes through', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 5));
      const carts = [(await cartOf(1, { cpm: 3 })).cart, (await cartOf(1, { cpm: 3 })).cart];
      const results = await Promise.all(carts.map((cart) => order(cart, c.id)));
      expect(results.map((r) => r.status).sort()).toEqual([200, 402]);
      expect(await balanceOf(c.id)).toBe(2);
      const tx = await ok(api.get(`${CUSTOMERS}/${c.id}/transactions`));
      expect(tx.data.map((t: any) => t.amount)).toEqual([-3, 5]);
    });

    test('low-funds and zero-funds notices are recorded when the thresholds are crossed', async () => {
      const c = await newCustomer({ low_funds_amount: 5, low_funds_notify: true, zero_funds_notify: true });
      await ok(addFunds(c.id, 10));
      await ok(order((await cartOf(1, { cpm: 4 })).cart, c.id)); // 10 -> 6: above the threshold
      expect((await ok(api.get(`${CUSTOMERS}/${c.id}/notices`))).data).toEqual([]);
      await ok(order((await cartOf(1, { cpm: 2 })).cart, c.id)); // 6 -> 4: low funds
      await ok(order((await cartOf(1, { cpm: 4 })).cart, c.id)); // 4 -> 0: zero funds (already low)
      const notices = await ok(api.get(`${CUSTOMERS}/${c.id}/notices`));
      expect(notices.data.map((n: any) => [n.type, n.balance])).toEqual([['zero_funds', 0], ['low_funds', 4]]);
      expect(notices.data[1].threshold).toBe(5);
    });

    test('an order whose inventory step fails midway leaves balance and inventory unchanged', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 20));
      const { cart, pz } = await cartOf(1);
      // A second item whose standard zone disappears after it was added: its placement cannot be made,
      // after the campaign and the first ad items already were.
      const zone = (await ok(api.get(`${P}/${portal}/zones/${pz}`))).zone;
      const doomedPz = await newPortalZone(api, portal);
      await ok(api.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: doomedPz, type: 'html5', custom_html: '<b>late</b>' }));
      const doomedZone = (await ok(api.get(`${P}/${portal}/zones/${doomedPz}`))).zone;
      expect(doomedZone).not.toBe(zone);
      await ok(api.del(`/v2/zones/standard/${doomedZone}`));
      const before = {
        campaigns: await count('/v2/campaigns/standard'),
        adItems: await count('/v2/ad-items/custom-html'),
        placements: await count('/v2/placements'),
        orders: await count(ORDERS),
      };
      const failed = expectError(await order(cart, c.id), 402, 'v2');
      expect(failed.message).toMatch(/nothing was charged/);
      expect(await balanceOf(c.id)).toBe(20);
      // History is append-only: the hold stays, followed by the entry that gave it back.
      const history = (await ok(api.get(`${CUSTOMERS}/${c.id}/transactions`))).data;
      expect(history.map((t: any) => [t.type, t.amount, t.balance])).toEqual([['release', 4.5, 20], ['order', -4.5, 15.5], ['deposit', 20, 20]]);
      expect(history[0].order).toBe(history[1].order);
      // What the order made in inventory goes right after the answer (which does not wait for it).
      const now = async () => ({
        campaigns: await count('/v2/campaigns/standard'),
        adItems: await count('/v2/ad-items/custom-html'),
        placements: await count('/v2/placements'),
        orders: await count(ORDERS),
      });
      for (let i = 0; i < 100 && JSON.stringify(await now()) !== JSON.stringify(before); i++) await new Promise((r) => setTimeout(r, 100));
      expect(await now()).toEqual(before);
      // Without the broken item the same cart can still be ordered.
      const items = await ok(api.get(`${P}/${portal}/cart/${cart}/cart-items`));
      await ok(api.del(`${P}/${portal}/cart/${cart}/cart-items/${items.data.find((i: any) => i.portal_zone === doomedPz).id}`));
      await ok(order(cart, c.id));
      expect(await balanceOf(c.id)).toBe(18);
    });
  });

  describe('exact money', () => {
    const withKey = (k: string) => ({ headers: { 'Idempotency-Key': k } });
    const key = () => `money-${Date.now().toString(36)}-${++seq}`;

    test('1,000 deposits of 0.1 make exactly 100.00', async () => {
      const c = await newCustomer();
      let next = 0;
      // Eight lanes keep the run short; each deposit is its own atomic statement either way.
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (next < 1000) {
          next++;
          const r = await addFunds(c.id, 0.1);
          if (r.status !== 200) throw new Error(`deposit answered ${r.status}: ${r.text}`);
        }
      }));
      expect(await balanceOf(c.id)).toBe(100);
      const firstPage = await ok(api.get(`${CUSTOMERS}/${c.id}/transactions?limit=1`));
      expect(firstPage.data[0].balance).toBe(100);
    }, 60_000);

    test('amounts with more than two decimals are refused and change nothing', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 3.3));
      for (const amount of [0.001, 10.005, 0.105, 1e-7]) {
        const err = paramFor(expectError(await addFunds(c.id, amount), 400, 'v2'), 'amount');
        expect(err.message).toMatch(amount >= 0.01 ? /two decimal|2 decimal/ : /between 0\.01/);
      }
      expect(await balanceOf(c.id)).toBe(3.3);
      expect((await ok(api.get(`${CUSTOMERS}/${c.id}/transactions`))).data).toHaveLength(1);
    });

    test('items priced 0.07 × 3 total exactly 0.21', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 1));
      const pz = await newPortalZone(api, portal, { pricing_model: 'fixed-CPC', cpm: null, cpc: 0.07, quantity: 1 });
      const cart = await newCart(api, portal);
      for (let i = 0; i < 3; i++) await ok(api.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: pz, type: 'html5', custom_html: `<i>${i}</i>` }));
      const o = await ok(api.post(ORDERS, { cart, customer: c.id }));
      expect(o.total).toBe(0.21);
      expect((await ok(api.get(`${ORDERS}/${o.id}/items`))).data.map((i: any) => i.price)).toEqual([0.07, 0.07, 0.07]);
      expect(await balanceOf(c.id)).toBe(0.79);
      expect((await ok(api.get(`${CUSTOMERS}/${c.id}/transactions?limit=1`))).data[0]).toMatchObject({ type: 'order', amount: -0.21, balance: 0.79 });
    });

    test('sub-cent prices: the total is the exact sum rounded once, half up; a total that rounds to 0 is refused', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 5));
      const cartAt = async (cpm: number, quantity: number, n: number) => {
        const pz = await newPortalZone(api, portal, { cpm, quantity });
        const cart = await newCart(api, portal);
        for (let i = 0; i < n; i++) await ok(api.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: pz, type: 'html5', custom_html: `<i>${i}</i>` }));
        return cart;
      };
      // Three impressions at a CPM of 0.004: 0.000012 in all, which is no order.
      const tiny = await cartAt(0.004, 1, 3);
      const refused = paramFor(expectError(await api.post(ORDERS, { cart: tiny, customer: c.id }), 400, 'v2'), 'cart');
      expect(refused.message).toMatch(/0\.000012.*rounds to 0\.00/);
      expect(await balanceOf(c.id)).toBe(5);
      expect((await ok(api.get(`${ORDERS}?limit=100`))).data.filter((o: any) => o.customer === c.id)).toEqual([]);
      // 0.0045 × 3 = 0.0135 → 0.01 (rounding each item first would make 0.00 + 0.00 + 0.00).
      const small = await cartAt(0.0045, 1000, 3);
      const o = await ok(api.post(ORDERS, { cart: small, customer: c.id }));
      expect(o.total).toBe(0.01);
      expect((await ok(api.get(`${ORDERS}/${o.id}/items`))).data.map((i: any) => i.price)).toEqual([0.0045, 0.0045, 0.0045]);
      // Half up: 0.005 → 0.01.
      const half = await ok(api.post(ORDERS, { cart: await cartAt(0.005, 1000, 1), customer: c.id }));
      expect(half.total).toBe(0.01);
      expect(await balanceOf(c.id)).toBe(4.98);
    });

    test('a keyed add-funds is applied once; the key with another amount is refused', async () => {
      const c = await newCustomer();
      const k = key();
      const first = await ok(api.put(`${CUSTOMERS}/${c.id}/add-funds`, { amount: 7.25 }, withKey(k)));
      const again = await api.put(`${CUSTOMERS}/${c.id}/add-funds`, { amount: 7.25 }, withKey(k));
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.transaction).toEqual(first.transaction);
      expect(expectError(await api.put(`${CUSTOMERS}/${c.id}/add-funds`, { amount: 8 }, withKey(k)), 409, 'v2').type).toBe('idempotency_error');
      expect(await balanceOf(c.id)).toBe(7.25);
      expect((await ok(api.get(`${CUSTOMERS}/${c.id}/transactions`))).data).toHaveLength(1);
    });

    test('a keyed order is placed once and its retry answers the same order', async () => {
      const c = await newCustomer();
      await ok(addFunds(c.id, 10));
      const pz = await newPortalZone(api, portal, { cpm: 2, quantity: 1000 });
      const cart = await newCart(api, portal);
      await ok(api.post(`${P}/${portal}/cart/${cart}/cart-items`, { portal_zone: pz, type: 'html5', custom_html: '<b>once</b>' }));
      const k = key();
      const first = await ok(api.post(ORDERS, { cart, customer: c.id }, withKey(k)));
      const again = await api.post(ORDERS, { cart, customer: c.id }, withKey(k));
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toMatchObject({ id: first.id, status: 'placed', total: 2 });
      expect(await balanceOf(c.id)).toBe(8);
    });
  });
});
