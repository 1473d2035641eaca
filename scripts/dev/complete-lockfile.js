#!/usr/bin/env node
/**
 * npm 11 here writes package-lock.json without the other platforms' optional binaries (packages named
 * `@scope/pkg-<os>-<cpu>`; the registry mirror here does not even carry them) and then `npm ci` refuses
 * that same lockfile as out of sync. This adds the missing entries with their version and the os/cpu/
 * libc they are for (from the registry when it has them, else from the package name), which is all
 * `npm ci` needs to skip them on a platform they do not fit. Run after changing dependencies:
 *   npm install && node scripts/dev/complete-lockfile.js
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const OSES = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'netbsd', 'openbsd', 'sunos', 'aix'];
const CPUS = { arm64: 'arm64', aarch64: 'arm64', x64: 'x64', arm: 'arm', armv7: 'arm', ia32: 'ia32', loong64: 'loong64', ppc64: 'ppc64', riscv64: 'riscv64', s390x: 's390x', wasm32: 'wasm32' };

const file = path.resolve(__dirname, '../../package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
let added = 0;
for (const [key, pkg] of Object.entries(lock.packages)) {
  for (const [dep, range] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${key}/node_modules/${dep}`;
    const hoisted = `node_modules/${dep}`;
    if (lock.packages[nested] || lock.packages[hoisted]) continue;
    const m = registryMeta(dep, range) ?? platformFromName(dep, range);
    const entry = { version: m.version };
    if (m['dist.integrity']) entry.integrity = m['dist.integrity'];
    if (pkg.dev) entry.dev = true;
    entry.optional = true;
    if (m.cpu) entry.cpu = [].concat(m.cpu);
    if (m.os) entry.os = [].concat(m.os);
    if (m.libc) entry.libc = [].concat(m.libc);
    if (m.license) entry.license = m.license;
    lock.packages[hoisted] = entry;
    added++;
  }
}
function registryMeta(dep, range) {
  try {
    const out = execFileSync('npm', ['view', `${dep}@${range}`, 'version', 'dist.integrity', 'os', 'cpu', 'libc', 'license', '--json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const meta = JSON.parse(out);
    return Array.isArray(meta) ? meta[meta.length - 1] : meta;
  } catch {
    return undefined;
  }
}

function platformFromName(dep, version) {
  const parts = dep.split('/').pop().split('-');
  const m = { version };
  const os = parts.find((p) => OSES.includes(p));
  const cpu = parts.find((p) => CPUS[p]);
  if (os) m.os = [os];
  if (cpu) m.cpu = [CPUS[cpu]];
  if (parts.some((p) => p.startsWith('gnu'))) m.libc = ['glibc'];
  if (parts.some((p) => p.startsWith('musl'))) m.libc = ['musl'];
  if (!os && !cpu) throw new Error(`cannot tell the platform of ${dep}`);
  return m;
}

const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} optional platform entries to package-lock.json`);
