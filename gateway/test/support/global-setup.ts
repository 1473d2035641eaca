import fs from 'node:fs';
import path from 'node:path';
import { startPlatform } from './platform';

/** One platform for the whole run; its addresses reach the test workers through the environment. */
export default async function globalSetup(): Promise<void> {
  const { info, proc } = await startPlatform();
  proc.unref();
  for (const [k, v] of Object.entries(info.env)) process.env[k] = v;
  process.env.TEST_PLATFORM = JSON.stringify(info);
  process.env.TEST_CA_FILE = path.join(info.dataDir, 'tls', 'localhost.crt');
  if (!fs.existsSync(process.env.TEST_CA_FILE)) throw new Error('the gateway did not write its self-signed certificate');
}
