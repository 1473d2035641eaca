#!/usr/bin/env node
// Checks the monitoring material against the code, offline:
//   - every metric the dashboard and the alerting rules use is one the processes export (registered
//     with prom-client in the sources, prom-client's default metrics, or Prometheus's own `up`);
//   - every label they group or filter gRPC/pool metrics by exists on that metric;
//   - writes the dashboard's queries (Grafana variables replaced by sample values) and the rules'
//     groups as Prometheus rule files, for `promtool check rules` to parse (deploy/check-chart.sh).
//
//   node deploy/check-metrics.mjs OUT_DIR
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = process.argv[2] ?? fs.mkdtempSync('/tmp/check-metrics-');
const problems = [];

// --- metrics the code exports: name -> label names
// Target labels the ServiceMonitor's scrape attaches to every series (prometheus-operator: endpoint is
// the scraped port's name, service the Kubernetes Service).
const SCRAPE_LABELS = new Set(['namespace', 'job', 'instance', 'pod', 'container', 'endpoint', 'service']);
const exported = new Map();
function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'test' || e.name === 'node_modules' ? [] : sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}
for (const file of ['services', 'gateway', 'scripts'].flatMap((d) => sourceFiles(path.join(root, d)))) {
  const text = fs.readFileSync(file, 'utf8');
  if (!text.includes("from 'prom-client'")) continue;
  // `new client.Counter({...})` (default import) or `new Counter({...})` (named imports).
  for (const m of text.matchAll(/new (?:client\.)?(Counter|Gauge|Histogram|Summary)\(\{([\s\S]*?)\}\);?/g)) {
    const name = /name: '([a-zA-Z_:][a-zA-Z0-9_:]*)'/.exec(m[2])?.[1];
    if (!name) continue;
    const labels = [...(/labelNames: \[([^\]]*)\]/.exec(m[2])?.[1] ?? '').matchAll(/'([^']+)'/g)].map((x) => x[1]);
    exported.set(name, labels);
    // A label the scrape also attaches (namespace, job, instance, pod, container, endpoint, service)
    // is renamed exported_<label> by Prometheus (honorLabels: false): queries by it would see the target's.
    for (const l of labels) {
      if (SCRAPE_LABELS.has(l)) problems.push(`${path.relative(root, file)}: metric ${name} has label ${l}, which the scrape overwrites (Prometheus renames it exported_${l})`);
    }
    if (m[1] === 'Histogram' || m[1] === 'Summary') {
      for (const suffix of ['_bucket', '_sum', '_count']) exported.set(name + suffix, [...labels, 'le', 'quantile']);
    }
  }
}
const promClient = createRequire(import.meta.url)('prom-client');
const defaults = new promClient.Registry();
promClient.collectDefaultMetrics({ register: defaults });
for (const metric of await defaults.getMetricsAsJSON()) {
  for (const n of [metric.name, `${metric.name}_bucket`, `${metric.name}_sum`, `${metric.name}_count`]) exported.set(n, null);
}
exported.set('up', null);

// --- the queries
const queries = [];
const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'deploy/grafana/ad-serving-dashboard.json'), 'utf8'));
(function walk(o, where) {
  if (Array.isArray(o)) return o.forEach((v, i) => walk(v, where));
  if (o && typeof o === 'object') {
    const title = o.title ?? where;
    if (typeof o.expr === 'string' && o.expr) queries.push({ where: `dashboard "${title}"`, expr: o.expr });
    for (const v of Object.values(o)) walk(v, title);
  }
})(dashboard.panels, 'panel');
const rules = parse(fs.readFileSync(path.join(root, 'deploy/prometheus/rules.yaml'), 'utf8'));
for (const g of rules.spec.groups) for (const r of g.rules) queries.push({ where: `rule ${r.alert ?? r.record}`, expr: r.expr });

const FUNCTIONS = new Set(('sum avg min max count topk bottomk quantile stddev stdvar count_values group by without on ignoring group_left group_right ' +
  'rate irate increase delta idelta deriv histogram_quantile vector scalar abs ceil floor round clamp clamp_min clamp_max label_replace label_join ' +
  'time timestamp absent absent_over_time avg_over_time max_over_time min_over_time sum_over_time count_over_time and or unless bool offset ' +
  'sort sort_desc predict_linear changes resets exp ln log2 log10 sqrt humanizePercentage').split(' '));

function metricsOf(expr) {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, '{}').replace(/\[[^\]]*\]/g, '[]');
  const grouping = [...bare.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)].flatMap((m) => m[1].split(',').map((s) => s.trim()));
  const names = new Set();
  for (const m of bare.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '').matchAll(/(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)/g)) {
    if (!FUNCTIONS.has(m[1]) && !/^(e|inf|nan)$/i.test(m[1])) names.add(m[1]);
  }
  const matchers = [...expr.matchAll(/\{([^}]*)\}/g)].flatMap((m) => [...m[1].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((x) => x[1]));
  return { names: [...names], labels: [...new Set([...grouping, ...matchers])] };
}

// Labels Prometheus and the ServiceMonitor attach to every series.
const TARGET_LABELS = new Set(['namespace', 'job', 'instance', 'pod', 'container', 'endpoint', 'service', 'le', 'quantile']);
for (const q of queries) {
  const { names, labels } = metricsOf(q.expr);
  if (!names.length) problems.push(`${q.where}: no metric found in ${q.expr}`);
  for (const n of names) {
    if (!exported.has(n)) problems.push(`${q.where}: metric ${n} is not exported by the code`);
  }
  // Prometheus's own `service` label (the Kubernetes Service) says nothing about the gRPC service or pool.
  if (labels.includes('service') && names.some((n) => /^(grpc_|db_pool_)/.test(n))) {
    problems.push(`${q.where}: gRPC and pool metrics are labelled grpc_service / pool, not service`);
  }
  // Labels: each must be on at least one metric of the query (checked where the code declares them).
  const declared = names.map((n) => exported.get(n)).filter(Boolean);
  if (declared.length === names.length && declared.length) {
    for (const l of labels) {
      if (!TARGET_LABELS.has(l) && !declared.some((ls) => ls.includes(l))) problems.push(`${q.where}: label ${l} is not a label of ${names.join(', ')}`);
    }
  }
}

// --- rule files for promtool: the rules as they are, and the dashboard queries as recording rules
const SAMPLE = { $namespace: 'ad-serving', $job: 'ad-serving-gateway', $__rate_interval: '1m', $__interval: '1m', $__range: '1h' };
const substitute = (e) => e.replace(/\$__rate_interval|\$__interval|\$__range|\$namespace|\$job/g, (v) => SAMPLE[v]);
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'rules.yml'), stringify({ groups: rules.spec.groups }));
fs.writeFileSync(
  path.join(outDir, 'dashboard-queries.yml'),
  stringify({ groups: [{ name: 'dashboard', rules: queries.filter((q) => q.where.startsWith('dashboard')).map((q, i) => ({ record: `dashboard:query_${i}`, expr: substitute(q.expr) })) }] }),
);

for (const p of problems) console.log(p);
console.log(`check-metrics: ${queries.length} queries, ${exported.size} exported series names, ${problems.length} problems`);
process.exit(problems.length ? 1 : 0);
