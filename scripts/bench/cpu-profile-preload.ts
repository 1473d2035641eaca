/**
 * `node --require dist/scripts/bench/cpu-profile-preload.js`: a CPU profile of this process written to
 * CPU_PROF_DIR when it exits. Node 20 refuses --cpu-prof in NODE_OPTIONS, so the bench profiles the
 * platform's children with this preload instead (NODE_OPTIONS reaches every child npm start spawns).
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  process.on('exit', () => {
    // The in-process inspector answers synchronously, so this completes before the process ends.
    session.post('Profiler.stop', (err, res) => {
      if (err) return;
      const name = `${path.basename(path.dirname(process.argv[1] ?? ''))}-${path.basename(process.argv[1] ?? 'node', '.js')}-${process.pid}.cpuprofile`;
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, name), JSON.stringify(res.profile));
    });
  });
}
