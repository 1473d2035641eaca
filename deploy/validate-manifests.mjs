#!/usr/bin/env node
// Validates rendered manifests (helm template output) against the Kubernetes API schemas, offline:
// every object must be a known kind whose schema accepts it, and unknown fields are refused (the
// kubernetes-models schemas forbid additional properties, as `kubectl apply --validate=strict` does).
//
//   node deploy/validate-manifests.mjs rendered.yaml [...]
// Exit status 1 and one line per problem when any object fails.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

// The compiled schemas check types and required fields but let unknown fields through, so this
// script also walks every object along the models' type declarations (.d.ts) and refuses any field
// the API does not define: a typo such as `imagePullPolicyy` or `containerz` fails the check.
const modelsRoot = path.dirname(createRequire(import.meta.url).resolve('kubernetes-models/package.json'));
const apimachineryRoot = path.join(modelsRoot, '..', '@kubernetes-models', 'apimachinery');
const declCache = new Map();

/** Properties of the interface declared in a .d.ts: name -> { type, imports } (type text as written). */
function declaration(file) {
  if (declCache.has(file)) return declCache.get(file);
  const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const imports = new Map();
  for (const m of text.matchAll(/import \{ ([^}]+) \} from "([^"]+)";/g)) {
    for (const name of m[1].split(',').map((n) => n.trim())) imports.set(name, m[2]);
  }
  const start = text.search(/export interface I\w+ (extends [\w, ]+ )?\{/);
  const props = new Map();
  if (start >= 0) {
    let i = text.indexOf('{', start) + 1;
    let depth = 0;
    let buf = '';
    for (; i < text.length; i++) {
      const c = text[i];
      if (c === '{' || c === '<' || c === '(') depth++;
      if (c === '}' || c === '>' || c === ')') {
        if (depth === 0) break;
        depth--;
      }
      if (c === ';' && depth === 0) {
        const m = /^\s*"([^"]+)"\??:\s*([\s\S]+)$/.exec(buf);
        if (m) props.set(m[1], m[2].trim());
        buf = '';
      } else buf += c;
    }
  }
  const decl = { props, imports, file };
  declCache.set(file, decl);
  return decl;
}

function resolveImport(fromFile, spec) {
  if (spec.startsWith('@kubernetes-models/apimachinery/')) return path.join(apimachineryRoot, spec.slice('@kubernetes-models/apimachinery/'.length) + '.d.ts');
  if (spec.startsWith('.')) return path.join(path.dirname(fromFile), spec.replace(/\.js$/, '.d.ts'));
  return undefined;
}

/** Checks `value` against a type text from `decl`; pushes unknown field paths to `out`. */
function walkType(value, type, decl, where, out) {
  type = type.trim();
  const arr = /^Array<([\s\S]+)>$/.exec(type);
  if (arr) {
    if (Array.isArray(value)) value.forEach((v, i) => walkType(v, arr[1], decl, `${where}[${i}]`, out));
    return;
  }
  const map = /^\{\s*\[key: string\]:\s*([\s\S]+?);?\s*\}$/.exec(type);
  if (map) {
    if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walkType(v, map[1], decl, `${where}.${k}`, out);
    return;
  }
  const ref = /^I\w+$/.exec(type);
  if (!ref || !value || typeof value !== 'object' || Array.isArray(value)) return;
  const spec = decl.imports.get(type);
  const file = spec && resolveImport(decl.file, spec);
  if (!file || !fs.existsSync(file)) return;
  walkObject(value, declaration(file), where, out);
}

function walkObject(value, decl, where, out) {
  if (!decl.props.size) return; // scalars such as Quantity, IntOrString, Time
  for (const [k, v] of Object.entries(value)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    const type = decl.props.get(k);
    if (type === undefined) out.push(`${where}.${k}`);
    else walkType(v, type, decl, `${where}.${k}`, out);
  }
}

function unknownFields(obj) {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  const file = path.join(modelsRoot, group ? `${group}/${version}` : version, `${obj.kind}.d.ts`);
  const out = [];
  walkObject(obj, declaration(file), obj.kind, out);
  return out;
}

// Kinds outside Kubernetes itself, checked for shape here because no model ships with the packages.
const CUSTOM = {
  'monitoring.coreos.com/v1/ServiceMonitor': (o) => {
    const allowed = new Set(['namespaceSelector', 'selector', 'endpoints', 'jobLabel', 'targetLabels', 'podTargetLabels', 'sampleLimit']);
    const bad = Object.keys(o.spec ?? {}).filter((k) => !allowed.has(k));
    const endpointKeys = new Set(['port', 'path', 'interval', 'scrapeTimeout', 'honorLabels', 'scheme', 'relabelings', 'metricRelabelings']);
    for (const e of o.spec?.endpoints ?? []) bad.push(...Object.keys(e).filter((k) => !endpointKeys.has(k)).map((k) => `endpoints[].${k}`));
    if (bad.length) throw new Error(`unknown fields: ${bad.join(', ')}`);
    if (!o.spec?.selector || !o.spec?.endpoints?.length) throw new Error('spec.selector and spec.endpoints are required');
  },
};

async function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const dir = group ? `${group}/${version}` : version;
  try {
    const mod = await import(`kubernetes-models/${dir}/${kind}`);
    return mod[kind];
  } catch {
    return undefined;
  }
}

let problems = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'));
  for (const doc of docs) {
    if (doc.errors.length) {
      console.log(`${file}: YAML error: ${doc.errors[0].message}`);
      problems++;
      continue;
    }
    const obj = doc.toJS();
    if (!obj) continue;
    const where = `${file}: ${obj.kind}/${obj.metadata?.name}`;
    const custom = CUSTOM[`${obj.apiVersion}/${obj.kind}`];
    try {
      if (custom) custom(obj);
      else {
        const Model = await modelFor(obj.apiVersion, obj.kind);
        if (!Model) throw new Error(`unknown kind ${obj.apiVersion} ${obj.kind}`);
        new Model(obj).validate();
        const unknown = unknownFields(obj);
        if (unknown.length) throw new Error(`unknown fields: ${unknown.join(', ')}`);
      }
      if (obj.metadata?.name && obj.metadata.name.length > 63) throw new Error(`name longer than 63 characters`);
      checked++;
    } catch (err) {
      problems++;
      console.log(`${where}: ${String(err.message ?? err).split('\n').slice(0, 6).join(' | ')}`);
    }
  }
}
console.log(`validate-manifests: ${checked} objects valid, ${problems} problems`);
process.exit(problems ? 1 : 0);
