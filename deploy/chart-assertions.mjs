#!/usr/bin/env node
// What the rendered chart must say for the production requirements, checked on renderings
// of the production and external-URL values sets (and a second render, for stability):
//   node deploy/chart-assertions.mjs production.yaml external-url.yaml external-url-again.yaml
import fs from 'node:fs';
import { parseAllDocuments } from 'yaml';

const load = (f) => parseAllDocuments(fs.readFileSync(f, 'utf8')).map((d) => d.toJS()).filter(Boolean);
const [prod, ext, ext2] = process.argv.slice(2).map(load);
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

for (const p of problems) console.log(p);
console.log(`chart-assertions: ${problems.length} problems`);
process.exit(problems.length ? 1 : 0);
