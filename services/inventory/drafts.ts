import { status } from '@grpc/grpc-js';
import type { Knex } from 'knex';
import {
  DraftsService,
  type CampaignResources,
  type ConversionErrors,
  type DraftErrors,
  type GetCampaignResourcesRequest,
  type SaveCampaignRequest,
  type SaveCampaignResponse,
} from '../../proto/gen/adserver/inventory/v1/drafts';
import type { Resource } from '../../proto/gen/adserver/resources/v1/resources';
import { getKind, type Json, type ParameterError } from '../shared/catalog';
import { DRAFT_AD_ITEM_KINDS, DRAFTS } from '../shared/catalog/kinds/drafts';
import { fail, ServiceError } from '../shared/errors';
import { implement, type ServiceBinding } from '../shared/grpc/server';
import type { Attributes, ResourceStore } from '../shared/resource-store';
import { tenantFromMetadata, type Tenant } from '../shared/tenant';
import { kindOf } from './hooks/drafts';

/**
 * Saving a draft campaign: the real campaign and the real resources of its draft parts are created
 * in one transaction through the resource store (the real kinds' validation, references and hooks),
 * draft references resolved to the new ids; then every draft is marked converted. Any part that does
 * not pass rolls everything back and is reported by draft id and field.
 */

/** A row of the resources table (the store's `toResource` renders it). */
type Row = Parameters<ResourceStore['toResource']>[0];

/** The reference's error types for the catalog's. */
const ERROR_TYPE: Record<ParameterError['type'], string> = {
  missing_field: 'required',
  invalid_value: 'invalid_value',
  invalid_reference: 'invalid_value',
  unknown_field: 'invalid_field',
  read_only: 'invalid_field',
};

type Group = 'adItems' | 'placements' | 'schedules' | 'campaignAssignments';

/** Thrown inside the transaction to roll it back with the errors gathered. */
class ConversionFailed extends Error {
  constructor(readonly errors: ConversionErrors) {
    super('draft conversion failed');
  }
}

class Conversion {
  readonly errors: ConversionErrors = { campaign: undefined, adItems: [], placements: [], schedules: [], campaignAssignments: [] };
  private failed = false;
  /** Draft id -> the real id made from it (or made by an earlier save, for shared display drafts). */
  readonly made = new Map<number, number>();
  /** Drafts converted by this save: marked once everything is created. */
  readonly converted: { row: Row; realId: number }[] = [];

  constructor(
    private readonly store: ResourceStore,
    private readonly t: Tenant,
    private readonly trx: Knex.Transaction,
  ) {}

  private report(group: Group | 'campaign', draftId: number, errors: ParameterError[]): void {
    this.failed = true;
    const entry: DraftErrors = { draftId, errors: errors.map((e) => ({ field: e.field, type: ERROR_TYPE[e.type] ?? 'invalid_value', message: e.message })) };
    if (group === 'campaign') this.errors.campaign = entry;
    else this.errors[group].push(entry);
  }

  /** Creates the real resource of draft `row` with `attributes`; on a validation failure reports it and answers undefined. */
  async create(group: Group | 'campaign', row: Row, attributes: Attributes): Promise<Resource | undefined> {
    const id = Number(row.id);
    if (row.attributes.asset_created === true) {
      // A display ad item or schedule draft shared with a campaign saved before: use what it became.
      const realId = row.attributes[DRAFTS.get(row.kind)!.createdField] as number;
      this.made.set(id, realId);
      return undefined;
    }
    const known = this.made.get(id);
    if (known !== undefined) return undefined;
    try {
      const real = await this.store.create(this.t, DRAFTS.get(row.kind)!.real.kind, attributes, `draft:${id}`, undefined, this.trx);
      this.made.set(id, real.id);
      this.converted.push({ row, realId: real.id });
      return real;
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code !== status.INVALID_ARGUMENT) throw err;
      this.report(group, id, err.parameters?.length ? err.parameters : [{ field: '', type: 'invalid_value', message: err.message }]);
      return undefined;
    }
  }

  /** A part that cannot be made because a draft it names is missing (deleted since it was written). */
  missing(group: Group, row: Row, field: string, what: string): void {
    this.report(group, Number(row.id), [{ field, type: 'invalid_reference', message: `'${field}' refers to ${what}, which does not exist.` }]);
  }

  /** Marks the converted drafts, or rolls back with the errors. */
  async finish(): Promise<void> {
    if (this.failed) throw new ConversionFailed(this.errors);
    for (const { row, realId } of this.converted) {
      const mark = { asset_created: true, [DRAFTS.get(row.kind)!.createdField]: realId };
      await this.trx('resources')
        .where({ account_id: this.t.accountId, mode: this.t.mode, id: row.id })
        .update({ attributes: this.trx.raw('attributes || ?::jsonb', [JSON.stringify(mark)]), updated_at: this.trx.fn.now() });
    }
  }
}

const draftOf = (row: Row) => ({ ...((row.attributes.draft ?? {}) as Attributes) });
const idsOf = (c: Conversion, rows: Row[]) => rows.map((r) => c.made.get(Number(r.id))).filter((id): id is number => id !== undefined);

export class DraftsApi {
  constructor(
    private readonly store: ResourceStore,
    private readonly knex: Knex,
  ) {}

  private scoped(t: Tenant, db: Knex | Knex.Transaction) {
    return db<Row>('resources').where('account_id', t.accountId).andWhere('mode', t.mode).whereNull('archived_at');
  }

  private async campaignRow(t: Tenant, kind: string, id: number, db: Knex | Knex.Transaction, lock = false): Promise<Row> {
    if (kind !== 'draft_vast_campaign' && kind !== 'draft_standard_campaign') throw fail.badRequest(`'${kind}' is not a draft campaign kind.`);
    const q = this.scoped(t, db).andWhere({ kind, id }).first();
    // Locked so that two saves of one draft cannot both convert it.
    const row = (await (lock ? q.forUpdate() : q)) as Row | undefined;
    if (!row) throw fail.notFound(getKind(kind).title, id);
    return row;
  }

  private parts(t: Tenant, db: Knex | Knex.Transaction, kinds: readonly string[], match: Record<string, Json>): Promise<Row[]> {
    return this.scoped(t, db)
      .whereIn('kind', kinds)
      .whereRaw('attributes @> ?::jsonb', [JSON.stringify(match)])
      .orderBy('id')
      .select('*') as Promise<Row[]>;
  }

  private byIds(t: Tenant, db: Knex | Knex.Transaction, kinds: readonly string[], ids: number[]): Promise<Row[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.scoped(t, db).whereIn('kind', kinds).whereIn('id', [...new Set(ids)]).orderBy('id').select('*') as Promise<Row[]>;
  }

  /** The draft parts of a draft campaign, grouped as the reference lists them. */
  private async partsOf(t: Tenant, db: Knex | Knex.Transaction, campaign: Row) {
    const id = Number(campaign.id);
    if (campaign.kind === 'draft_vast_campaign') {
      const link = { vast_campaign_draft_id: id };
      return {
        adItems: await this.parts(t, db, ['draft_vast_ad_item'], link),
        schedules: await this.parts(t, db, ['draft_vast_schedule'], link),
        assignments: await this.parts(t, db, ['draft_vast_campaign_assignment'], link),
        placements: await this.parts(t, db, ['draft_vast_placement'], link),
      };
    }
    // Display ad items and schedules stand alone: a campaign's are those its assignments and placements name.
    const assignments = await this.parts(t, db, ['draft_campaign_assignment'], { campaign_draft_id: id });
    const placements = await this.parts(t, db, ['draft_placement'], { campaign_draft_id: id });
    const adItems = await this.byIds(t, db, DRAFT_AD_ITEM_KINDS, assignments.map((a) => a.attributes.ad_item_draft_id as number));
    const schedules = await this.byIds(t, db, ['draft_schedule'], placements.map((p) => p.attributes.schedule_draft_id as number).filter((s) => typeof s === 'number'));
    return { adItems, schedules, assignments, placements };
  }

  async save(t: Tenant, req: SaveCampaignRequest): Promise<SaveCampaignResponse> {
    try {
      return await this.store.transaction(async (trx) => {
        const campaignDraft = await this.campaignRow(t, req.kind, req.id, trx, true);
        if (campaignDraft.attributes.asset_created === true) throw fail.notModifiable('This draft has already been converted.');
        const c = new Conversion(this.store, t, trx);
        const vast = req.kind === 'draft_vast_campaign';
        const { adItems, schedules, assignments, placements } = await this.partsOf(t, trx, campaignDraft);
        const campaign = await c.create('campaign', campaignDraft, draftOf(campaignDraft));
        for (const row of adItems) await c.create('adItems', row, draftOf(row));
        for (const row of schedules) await c.create('schedules', row, draftOf(row));
        const adItemKind = new Map(adItems.map((r) => [Number(r.id), DRAFTS.get(r.kind)!.real.kind]));
        // Without the campaign its relations cannot be made; its errors are reported already.
        if (campaign) {
          for (const row of assignments) {
            const a = row.attributes;
            const itemField = vast ? 'vast_ad_item_draft_id' : 'ad_item_draft_id';
            const item = c.made.get(a[itemField] as number);
            if (item === undefined) {
              if (!adItemKind.has(a[itemField] as number)) c.missing('campaignAssignments', row, itemField, `draft ad item ${a[itemField]}`);
              continue;
            }
            const refs: Attributes = vast
              ? { campaign: campaign.id, ad_item: item }
              : { campaign: { id: campaign.id, type: 'standard_campaign' }, advertisement: { id: item, type: adItemKind.get(a[itemField] as number)! } };
            await c.create('campaignAssignments', row, { ...draftOf(row), ...refs });
          }
          for (const row of placements) {
            const a = row.attributes;
            const values: Attributes = { ...draftOf(row), advertisement: { id: campaign.id, type: vast ? 'vast_campaign' : 'standard_campaign' } };
            if (typeof a.schedule_draft_id === 'number') {
              const s = c.made.get(a.schedule_draft_id);
              if (s === undefined) continue; // the schedule draft failed and is reported
              values.schedule = s;
            }
            if (!vast) {
              if (typeof a.zone_id === 'number') {
                const zoneKind = await kindOf({ db: trx, tenant: t }, ['standard_zone', 'email_zone'], a.zone_id);
                if (!zoneKind) {
                  c.missing('placements', row, 'zone_id', `zone ${a.zone_id}`);
                  continue;
                }
                values.zone = { id: a.zone_id, type: zoneKind };
              }
              if (typeof a.channel_id === 'number') values.channel = a.channel_id;
            }
            await c.create('placements', row, values);
          }
        }
        await c.finish();
        return {
          saved: {
            campaign,
            adItems: idsOf(c, adItems),
            schedules: idsOf(c, schedules),
            campaignAssignments: idsOf(c, assignments),
            placements: idsOf(c, placements),
          },
          errors: undefined,
        };
      });
    } catch (err) {
      if (err instanceof ConversionFailed) return { saved: undefined, errors: err.errors };
      throw err;
    }
  }

  async resources(t: Tenant, req: GetCampaignResourcesRequest): Promise<CampaignResources> {
    const db = this.knex;
    const campaign = await this.campaignRow(t, req.kind, req.id, db);
    const p = await this.partsOf(t, db, campaign);
    const out = (rows: Row[]) => rows.map((r) => this.store.toResource(r));
    return {
      campaign: this.store.toResource(campaign),
      adItems: out(p.adItems),
      schedules: out(p.schedules),
      campaignAssignments: out(p.assignments),
      placements: out(p.placements),
    };
  }
}

export function draftsBinding(store: ResourceStore, knex: Knex): ServiceBinding {
  const api = new DraftsApi(store, knex);
  return implement('inventory.Drafts', DraftsService, {
    saveCampaign: async (req: SaveCampaignRequest, c) => api.save(tenantFromMetadata(c.metadata), req),
    getCampaignResources: async (req: GetCampaignResourcesRequest, c) => api.resources(tenantFromMetadata(c.metadata), req),
  });
}
