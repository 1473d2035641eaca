import crypto from 'node:crypto';
import type http from 'node:http';
import { Counter } from 'prom-client';
import { EventKind } from '../../proto/gen/adserver/reporting/v1/events';
import { envInt } from '../shared/config';
import { registry } from '../shared/metrics';
import { AD_ITEM_KINDS, type DecisionData } from './decision-store';
import { decisionEvent, type EventSink } from './events';
import { clientIp, cookies, invalid, macro, positiveInt, safeDecode } from './request';
import type { Decision, TokenSigner } from './tracking';
import type { Visitors } from './visitor';
import type { DeliveryLedger } from './delivery-ledger';

const CONVERSION_KINDS = new Set([...AD_ITEM_KINDS, 'standard_campaign', 'standard_zone', 'email_zone', 'vast_campaign', 'vast_zone', 'vast_placement']);

const conversionsRefused = new Counter({ name: 'serving_conversions_refused_total', help: 'Conversion pixels over CONVERSION_LIMIT per client address and account a minute, not recorded', registers: [registry] });

/** The decision field that names what a conversion tag's `type` is: its ad item, campaign, VAST placement or zone. */
function fieldOf(kind: string): 'adItem' | 'campaign' | 'placement' | 'zone' {
  if (AD_ITEM_KINDS.has(kind)) return 'adItem';
  if (kind === 'standard_campaign' || kind === 'vast_campaign') return 'campaign';
  return kind === 'vast_placement' ? 'placement' : 'zone';
}

/** Whether a click's decision touched the resource a conversion tag names. */
function touched(d: Decision, kind: string, id: number): boolean {
  const field = fieldOf(kind);
  return d[field] === id && (field !== 'adItem' || d.adItemKind === kind);
}

/**
 * The conversion pixel (`/serve/conversion`): attributed to the browser's last click on the
 * account's ads when there was one. A value is credited only after a click, an order reference counts
 * once, and each client address may record CONVERSION_LIMIT conversions per account and minute in
 * this process; past it the pixel still answers and records nothing.
 */
export class Conversions {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly limit = envInt('CONVERSION_LIMIT', 30);

  constructor(
    private readonly data: { current: DecisionData },
    private readonly signer: TokenSigner,
    private readonly events: EventSink,
    private readonly visitors: Visitors,
    /** Conversions move the CVR an auction converts CPA prices with. */
    private readonly delivery?: DeliveryLedger,
  ) {}

  private allowed(key: string, now = Date.now()): boolean {
    if (this.windows.size > 100_000) this.windows.clear();
    const w = this.windows.get(key);
    if (!w || now - w.start >= 60_000) {
      this.windows.set(key, { start: now, count: 1 });
      return true;
    }
    if (w.count >= this.limit) {
      conversionsRefused.inc();
      return false;
    }
    w.count++;
    return true;
  }

  /** Records the conversion a pixel request names (when it is to be recorded); the caller answers the pixel. */
  record(req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): void {
    const account = positiveInt(q, 'account', 'the account id');
    const kind = q.get('type') ?? '';
    if (!CONVERSION_KINDS.has(kind)) throw invalid('type', `'type' must name what converted: ${[...CONVERSION_KINDS].join(', ')}.`);
    const id = positiveInt(q, 'id', `the ${kind} id`);
    const value = q.get('value') ?? '';
    if (value && !/^\d{1,12}(\.\d{1,4})?$/.test(value)) throw invalid('value', `'value' must be a decimal amount such as 19.99.`);
    const reference = macro(q.get('ref'), 'ref').slice(0, 255);
    // A test tag (test=1) and an unknown target answer the pixel and record nothing.
    // VAST placements are held under display's name (decision-store's HELD_AS).
    if (q.get('test') === '1') return;
    // Attribute to the last click on this account's ads when this browser made one.
    const clicked = this.signer.verify(safeDecode(cookies(req).adsrv_c ?? ''));
    const attributed = !!clicked && !clicked.test && clicked.account === account;
    // The target must be known: held in decision data, or what this browser's signed click touched (an
    // ad item no placement names any more, after its campaign was archived, is no longer held).
    const known = !!this.data.current.get(account, kind === 'vast_placement' ? 'placement' : kind, id) || (attributed && touched(clicked, kind, id));
    if (!known || !this.allowed(`${account}:${clientIp(req)}`)) return;
    const ctx = this.visitors.context(req, res);
    const d: Partial<Decision> & { account: number } = attributed ? { ...clicked } : { account };
    if (!attributed) {
      const field = fieldOf(kind);
      d[field] = id;
      if (field === 'adItem') d.adItemKind = kind;
    }
    // One conversion per order reference and account, however often its page is reloaded.
    const eventId = reference ? `conversion:${account}:${crypto.createHash('sha256').update(reference).digest('base64url').slice(0, 32)}` : `conversion:${crypto.randomUUID()}`;
    const e = decisionEvent(EventKind.CONVERSION, d, ctx, eventId);
    // A value is credited only to a conversion that follows a click: anyone can load the pixel.
    e.conversionValue = attributed ? value : '';
    e.conversionReference = reference;
    // A conversion of video inventory counts in the VAST reports.
    if (/^vast4?_/.test(kind)) e.vast = true;
    this.events.push(e);
    if (attributed && d.placement) this.delivery?.record(this.data.current, 'conversions', { id: eventId, account, placement: d.placement });
  }
}
