import type { FieldSpec, Json, ParameterError } from '../../shared/catalog';
import { checkValue } from '../../shared/catalog/validate';
import type { KindHooks } from '../../shared/resource-store';
import { adItemBasics } from './ad-items';
import { assignIds, loadAttributes, throwIf } from './common';

/** Native ads: templates (their variables get ids) and native ad items, whose values must fit their template's variables. */

const URL_VARIABLE_TYPES = new Set(['url', 'url_raw', 'image_url']);
const URL_FIELD: FieldSpec = { type: 'string', format: 'url', maxLength: 2048 };

const nativeTemplate: KindHooks = {
  async prepare(values, ctx) {
    const errors: ParameterError[] = [];
    if (Array.isArray(values.variables)) {
      const seen = new Set<string>();
      for (const v of values.variables as { placeholder: string; type: string; dropdown_values?: string | null }[]) {
        if (seen.has(v.placeholder)) errors.push({ field: 'variables', type: 'invalid_value', message: `'variables' uses the placeholder '${v.placeholder}' twice.` });
        seen.add(v.placeholder);
        if (v.type === 'dropdown' && !v.dropdown_values) errors.push({ field: 'variables', type: 'invalid_value', message: `'variables': the dropdown variable '${v.placeholder}' needs dropdown_values.` });
      }
      throwIf(errors);
      await assignIds(values, 'variables', ctx, errors);
    }
    throwIf(errors);
  },
};

const nativeAdItem: KindHooks = {
  async prepare(values, ctx) {
    await adItemBasics(values, ctx);
    const templateId = (values.template ?? ctx.existing?.template) as number | null | undefined;
    const variables = (values.variables ?? ctx.existing?.variables ?? {}) as Record<string, Json>;
    if (values.variables === undefined && values.template === undefined) return;
    const errors: ParameterError[] = [];
    const template = templateId ? await loadAttributes(ctx, 'native_template', templateId) : undefined;
    const defs = new Map(((template?.variables as { id: number; name: string; type: string; max_length?: number | null; optional?: boolean }[]) ?? []).map((v) => [String(v.id), v]));
    for (const [key, value] of Object.entries(variables)) {
      const def = defs.get(key);
      if (!def) {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables' has '${key.slice(0, 32)}', which is not a variable id of native template ${templateId}; known ids: ${[...defs.keys()].join(', ') || 'none'}.` });
        break;
      }
      if (typeof value !== 'string' && typeof value !== 'number') {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables.${key}' must be a string or a number.` });
        break;
      }
      if (def.type === 'number' && Number.isNaN(Number(value))) {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables.${key}' (${def.name}) must be a number.` });
        break;
      }
      // Values of URL variables end up in pages as links and sources: the catalog's one URL rule (http(s) only).
      const urlProblem = URL_VARIABLE_TYPES.has(def.type) && value !== '' ? checkValue(URL_FIELD, String(value), 1) : undefined;
      if (urlProblem) {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables.${key}' (${def.name}) ${urlProblem}.` });
        break;
      }
      if (def.max_length && String(value).length > def.max_length) {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables.${key}' (${def.name}) must be at most ${def.max_length} characters long.` });
        break;
      }
    }
    throwIf(errors);
  },
};

export const nativeHooks: Record<string, KindHooks> = {
  native_template: nativeTemplate,
  native_ad_item: nativeAdItem,
};
