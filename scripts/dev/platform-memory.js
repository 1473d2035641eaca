#!/usr/bin/env node
/**
 * Memory of a running `npm start` platform: the launcher, every child in DATA_DIR/pids.json and the
 * embedded PostgreSQL server with its backends. Prints RSS per process and the totals of RSS (what a
 * container limit counts, shared pages counted once per process) and PSS (shared pages divided).
 *   node scripts/dev/platform-memory.js [DATA_DIR]
 */
const fs = require('node:fs');
const path = require('node:path');

const dataDir = path.resolve(process.argv[2] ?? process.env.DATA_DIR ?? '.data');
const pids = JSON.parse(fs.readFileSync(path.join(dataDir, 'pids.json'), 'utf8'));
const rows = Object.entries(pids).map(([name, pid]) => ({ name: name === 'start' ? 'launcher' : name, pid }));
try {
  const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  rows.push({ name: 'postgres', pid: postmaster });
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(fs.readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]);
      if (ppid === postmaster) rows.push({ name: `postgres: ${fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').replace(/^postgres: /, '').trim()}`, pid: Number(entry) });
    } catch {
      /* gone meanwhile */
    }
  }
} catch {
  /* DATABASE_URL platform: no embedded server */
}
let rss = 0;
let pss = 0;
for (const row of rows) {
  try {
    const text = fs.readFileSync(`/proc/${row.pid}/smaps_rollup`, 'utf8');
    row.rss = Number(/^Rss:\s+(\d+)/m.exec(text)[1]) / 1024;
    row.pss = Number(/^Pss:\s+(\d+)/m.exec(text)[1]) / 1024;
    rss += row.rss;
    pss += row.pss;
    console.log(`${row.rss.toFixed(0).padStart(6)} MB RSS  ${row.pss.toFixed(0).padStart(5)} MB PSS  ${row.name} (${row.pid})`);
  } catch {
    /* not running */
  }
}
console.log(`total: ${rss.toFixed(0)} MB RSS, ${pss.toFixed(0)} MB PSS over ${rows.length} processes`);
