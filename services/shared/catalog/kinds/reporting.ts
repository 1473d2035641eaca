import type { FieldSpec, KindGroup, ResourceKind } from '../types';

/**
 * Saved report configurations and their schedules (reference: display_report_config_*), display and
 * VAST alike. The reporting service checks what the field language cannot (report type, period, the
 * date setup) and generates results into its own typed table.
 */

const ids: FieldSpec = { type: 'array', nullable: true, items: { type: 'integer', min: 1 }, maxBytes: 20_000 };
export const REPORT_COLUMNS = ['impressions', 'eligible', 'viewable', 'viewable_ctr', 'clicks', 'conversions', 'ctr', 'cvr', 'e_cpm', 'e_cpc', 'e_cpa', 'cost', 'payout', 'revenue'] as const;

const configurationFields: Record<string, FieldSpec> = {
  name: { type: 'string', required: true, minLength: 1, maxLength: 255 },
  type: { type: 'string', required: true },
  period: { type: 'string', required: true, enum: ['day', 'week', 'month', 'year'] },
  date: {
    type: 'object',
    required: true,
    closed: true,
    properties: {
      preset: { type: 'string', nullable: true },
      start: { type: 'string', nullable: true },
      end: { type: 'string', nullable: true },
      timezone: { type: 'string', nullable: true },
    },
  },
  filters: {
    type: 'object',
    nullable: true,
    closed: true,
    default: null,
    properties: { publishers: ids, advertisers: ids, zones: ids, campaigns: ids, ad_items: ids, channels: ids },
  },
  columns: { type: 'array', default: [], items: { type: 'string', enum: REPORT_COLUMNS }, maxBytes: 2000 },
  exclude_publisher_ad_items: { type: 'boolean', default: false },
  exclude_campaign_ad_items: { type: 'boolean', default: false },
  exclude_channel_stats: { type: 'boolean', default: false },
  require_channel_stats: { type: 'boolean', default: false },
};

function configuration(kind: string, path: string): ResourceKind {
  return {
    kind,
    service: 'reporting',
    title: 'report configuration',
    fields: configurationFields,
    timestamps: { created: 'created_at', modified: 'updated_at' },
    views: { v2: { object: 'report_configuration', path } },
  };
}

/** Display configurations: `/v2/reports/report-configurations` (the gateway also answers them as `/v2/custom-reports`). */
export const reportConfiguration = configuration('report_configuration', '/v2/reports/report-configurations');
/** VAST configurations: `/v2/vast-custom-reports` (the reference has no other path for them). */
export const vastReportConfiguration = configuration('vast_report_configuration', '/v2/vast-custom-reports');

function schedule(kind: string, parentKind: string, parentPath: string): ResourceKind {
  return {
    kind,
    service: 'reporting',
    title: 'report configuration schedule',
    fields: {
      report_configuration: { type: 'ref', ref: parentKind, required: true, parent: true, createOnly: true },
      name: { type: 'string', required: true, minLength: 1, maxLength: 255 },
      name_suffix: { type: 'string', nullable: true, default: 'DATE_SENT', enum: ['DATE_SENT', 'REPORT_NUMBER'] },
      name_suffix_date_format: { type: 'string', nullable: true, default: 'YYYY-MM-DD', enum: ['MM/DD/YYYY', 'DD/MM/YYYY', 'YYYY/MM/DD', 'YYYY-MM-DD', 'MM-DD-YYYY', 'DD-MM-YYYY'] },
      start_at: { type: 'string', nullable: true, format: 'date', default: null },
      active: { type: 'boolean', default: true },
      frequency: { type: 'string', required: true, enum: ['DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'YEARLY'] },
      send_as: { type: 'string', default: 'LINK', enum: ['LINK'] },
      recipients: { type: 'array', required: true, items: { type: 'integer', min: 1 }, maxBytes: 5000 },
      display_as: {
        type: 'object', closed: true, default: { details: true, summary: false },
        properties: { details: { type: 'boolean' }, summary: { type: 'boolean' } },
      },
      send_count: { type: 'integer', readOnly: true },
      next_report_at: { type: 'string', readOnly: true, nullable: true },
    },
    timestamps: { created: 'created_at', modified: 'updated_at' },
    views: {
      v2: {
        object: 'report_configuration_schedule',
        path: `${parentPath}/:report_configuration_id/schedules`,
        scope: { report_configuration_id: 'report_configuration' },
      },
    },
  };
}

export const reportConfigurationSchedule = schedule('report_configuration_schedule', 'report_configuration', '/v2/reports/report-configurations');
export const vastReportConfigurationSchedule = schedule('vast_report_configuration_schedule', 'vast_report_configuration', '/v2/vast-custom-reports');

export const kinds: ResourceKind[] = [reportConfiguration, vastReportConfiguration, reportConfigurationSchedule, vastReportConfigurationSchedule];

/** Every schedule of every configuration (the reference's `report_config` filters by configuration). */
export const groups: KindGroup[] = [
  { version: 'v2', path: '/v2/reports/report-configurations/schedules', kinds: ['report_configuration_schedule'], idFilters: { report_config: 'report_configuration' } },
];
