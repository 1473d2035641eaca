#!/usr/bin/env node
// What the rendered chart must say for the production requirements, checked on renderings
// of the production and external-URL values sets (and a second render, for stability), and of the
// default (bundled database) and bundled values sets:
//   node deploy/chart-assertions.mjs production.yaml external-url.yaml external-url-again.yaml default.yaml bundled.yaml
import fs from 'node:fs';
import { parseAllDocuments } from 'yaml';

const load = (f) => parseAllDocuments(fs.readFileSync(f, 'utf8')).map((d) => d.toJS()).filter(Boolean);
const [prod, ext, ext2, def, bundled] = process.argv.slice(2).map(load);
const problems = [];
const expect = (ok, message) => ok || problems.push(message);
const byKind = (objs, kind) => objs.filter((o) => o.kind === kind);
const env = (d) => Object.fromEntries((d.spec.template.spec.containers[0].env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
const component = (o) => o.metadata.labels['app.kubernetes.io/component'];

// 1. call-level balancing
for (const svc of byKind(prod, 'Service').filter((s) => ['accounts', 'inventory', 'selfserve', 'reporting'].includes(component(s)))) {
  expect(svc.spec.clusterIP === 'None', `${svc.metadata.name}: gRPC Service must be headless`);
}
for (const d of byKind(prod, 'Deployment')) {
  const e = env(d);
  for (const s of ['ACCOUNTS', 'INVENTORY', 'SELFSERVE', 'REPORTING']) expect(/^dns:\/\/\/.+:\d+$/.test(e[`${s}_ADDR`] ?? ''), `${d.metadata.name}: ${s}_ADDR must be a dns:/// target`);
  expect(Number(e.GRPC_MAX_CONNECTION_AGE_MS) > 0, `${d.metadata.name}: GRPC_MAX_CONNECTION_AGE_MS must be set`);
  expect(e.BIND_HOST === '0.0.0.0', `${d.metadata.name}: BIND_HOST=0.0.0.0 expected in pods`);
}
const hpas = byKind(prod, 'HorizontalPodAutoscaler');
for (const c of ['gateway', 'inventory', 'reporting', 'serving']) {
  const h = hpas.find((x) => component(x) === c);
  expect(h && h.spec.behavior?.scaleDown && h.spec.behavior?.scaleUp, `HPA with behavior expected for ${c}`);
}
// 2. probes
const gw = byKind(prod, 'Deployment').find((d) => component(d) === 'gateway');
const gwc = gw.spec.template.spec.containers[0];
expect(gwc.readinessProbe?.httpGet?.path === '/readyz', 'gateway readiness must be /readyz');
expect(gwc.livenessProbe?.httpGet?.path === '/livez', 'gateway liveness must be /livez (not a TCP check)');
// 3. secrets: no generated secret in production; stable checksum between renders
expect(!byKind(prod, 'Secret').some((s) => s.metadata.name.endsWith('-env')), 'production set must not render a generated Secret');
const sums = (objs) => byKind(objs, 'Deployment').map((d) => d.spec.template.metadata.annotations?.['checksum/secret']);
expect(new Set(sums(ext)).size === 1 && sums(ext)[0], 'every Deployment must carry one and the same checksum/secret');
expect(JSON.stringify(sums(ext)) === JSON.stringify(sums(ext2)), 'checksum/secret must not change between two renders');
// 4. migrations
const job = byKind(prod, 'Job')[0];
expect(job?.metadata.annotations?.['helm.sh/hook'] === 'pre-install,pre-upgrade', 'migrations Job must be a pre-install/pre-upgrade hook');
expect(job?.spec.template.spec.containers[0].command.join(' ').includes('dist/scripts/migrate.js'), 'migrations Job runs dist/scripts/migrate.js');
for (const d of byKind(prod, 'Deployment')) expect(env(d).DB_MIGRATE === 'false', `${d.metadata.name}: DB_MIGRATE=false expected`);
// 7. network
const policies = byKind(prod, 'NetworkPolicy');
expect(policies.some((p) => p.metadata.name.endsWith('-default-deny') && !p.spec.ingress && !p.spec.egress && p.spec.policyTypes.length === 2), 'default-deny NetworkPolicy expected');
const lb = byKind(ext, 'Service').find((s) => s.spec.type === 'LoadBalancer');
expect(lb && !lb.spec.ports.some((p) => p.name === 'metrics'), 'a LoadBalancer gateway Service must not expose metrics');
// 10. serving
expect(byKind(prod, 'Deployment').some((d) => component(d) === 'serving'), 'serving Deployment expected');
const ingress = byKind(prod, 'Ingress')[0];
const paths = ingress.spec.rules.flatMap((r) => r.http.paths.map((p) => `${p.path}->${p.backend.service.name}`));
expect(paths.some((p) => p.startsWith('/adserve->') && p.endsWith('-serving')), 'ingress must send /adserve to serving');
expect(byKind(prod, 'PodDisruptionBudget').some((p) => component(p) === 'serving'), 'serving PDB expected');
// 11. bundled database (the default): one PostgreSQL StatefulSet of the chart's own, DATABASE_URL in
// every service, no PVC per service, no migrations Job (each service migrates its own schema).
const SERVICES = ['accounts', 'inventory', 'selfserve', 'reporting'];
for (const [label, objs] of [['default', def], ['bundled', bundled]]) {
  const sts = byKind(objs, 'StatefulSet');
  const pg = sts.find((s) => component(s) === 'postgres');
  expect(sts.length === 1 && pg, `${label}: exactly one postgres StatefulSet expected, got ${sts.map((s) => s.metadata.name).join(', ') || 'none'}`);
  if (pg) {
    const c = pg.spec.template.spec.containers[0];
    expect(/^postgres:1[67](\.|$)/.test(c.image), `${label}: the bundled PostgreSQL must be the official postgres image, 16 or 17 (got ${c.image})`);
    expect(pg.spec.replicas === 1, `${label}: one PostgreSQL pod`);
    expect(pg.spec.volumeClaimTemplates?.length === 1, `${label}: the PostgreSQL data needs a volumeClaimTemplate`);
    expect(c.readinessProbe?.exec?.command?.[0] === 'pg_isready' && c.livenessProbe?.exec?.command?.[0] === 'pg_isready', `${label}: PostgreSQL probes must use pg_isready`);
    expect(c.env.find((e) => e.name === 'POSTGRES_PASSWORD')?.valueFrom?.secretKeyRef?.name?.endsWith('-env'), `${label}: POSTGRES_PASSWORD from the chart's Secret`);
    expect(c.securityContext?.allowPrivilegeEscalation === false && pg.spec.template.spec.securityContext?.runAsNonRoot, `${label}: PostgreSQL must run non-root without privilege escalation`);
    const svc = byKind(objs, 'Service').find((s) => s.metadata.name === pg.spec.serviceName);
    expect(svc?.spec.clusterIP === 'None', `${label}: the StatefulSet's headless Service must exist`);
    expect(pg.metadata.name.length <= 52, `${label}: a StatefulSet name must stay within 52 characters`);
  }
  const secret = byKind(objs, 'Secret').find((s) => s.metadata.name.endsWith('-env'));
  const url = secret?.stringData?.DATABASE_URL ?? '';
  expect(secret?.stringData?.POSTGRES_PASSWORD && url.includes(`:${secret.stringData.POSTGRES_PASSWORD}@`), `${label}: the chart's Secret must hold the generated password and the URL using it`);
  expect(pg && url.includes(`@${pg.metadata.name}.`), `${label}: DATABASE_URL must point at the bundled PostgreSQL`);
  for (const s of SERVICES) {
    const d = byKind(objs, 'Deployment').find((x) => component(x) === s);
    const e = d?.spec.template.spec.containers[0].env ?? [];
    const db = e.find((x) => x.name === 'DATABASE_URL');
    expect(db?.valueFrom?.secretKeyRef?.name === secret?.metadata.name && db?.valueFrom?.secretKeyRef?.key === 'DATABASE_URL', `${label}: ${s} must take DATABASE_URL from the chart's Secret`);
    expect(env(d ?? { spec: { template: { spec: { containers: [{}] } } } }).DB_MIGRATE === 'true', `${label}: ${s} migrates its own schema (DB_MIGRATE=true)`);
    expect(d?.spec.template.spec.initContainers?.some((c) => c.command.join(' ').includes('pg_isready')), `${label}: ${s} must wait for PostgreSQL (pg_isready init container)`);
    expect(!d?.spec.strategy || d.spec.strategy.type !== 'Recreate', `${label}: ${s} needs no Recreate strategy`);
    for (const v of d?.spec.template.spec.volumes ?? []) expect(!v.persistentVolumeClaim, `${label}: ${s} must not mount a PVC (${v.name})`);
  }
  expect(byKind(objs, 'PersistentVolumeClaim').length === 0, `${label}: no PVC per service may be rendered`);
  expect(byKind(objs, 'Job').length === 0, `${label}: no migrations Job in bundled mode`);
}
// Several replicas and the network policies around the bundled PostgreSQL (bundled values set).
expect(byKind(bundled, 'Deployment').find((d) => component(d) === 'accounts')?.spec.replicas === 2, 'bundled: accounts runs 2 replicas');
const bundledPolicies = byKind(bundled, 'NetworkPolicy');
const pgPolicy = bundledPolicies.find((p) => p.spec.podSelector.matchLabels['app.kubernetes.io/component'] === 'postgres');
const fromComponents = (pgPolicy?.spec.ingress?.[0]?.from ?? []).map((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/component']).sort();
expect(JSON.stringify(fromComponents) === JSON.stringify([...SERVICES].sort()), `bundled: PostgreSQL ingress must admit exactly the gRPC services (got ${fromComponents})`);
for (const s of SERVICES) {
  const p = bundledPolicies.find((x) => x.spec.podSelector.matchLabels['app.kubernetes.io/component'] === s);
  expect(p?.spec.egress?.some((r) => r.ports.some((pt) => pt.port === 5432) && r.to?.some((t) => t.podSelector?.matchLabels?.['app.kubernetes.io/component'] === 'postgres')), `bundled: ${s} needs egress to the bundled PostgreSQL`);
}

for (const p of problems) console.log(p);
console.log(`chart-assertions: ${problems.length} problems`);
process.exit(problems.length ? 1 : 0);
