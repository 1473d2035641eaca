import fs from 'node:fs';
import { dropSchemas, stopPlatform, type PlatformInfo } from './platform';

export default async function globalTeardown(): Promise<void> {
  const raw = process.env.TEST_PLATFORM;
  if (!raw) return;
  const info = JSON.parse(raw) as PlatformInfo;
  await stopPlatform(info.pid, 30_000, info.dataDir);
  await dropSchemas(info.schemaPrefix).catch(() => undefined);
  if (!process.env.KEEP_TEST_DATA) fs.rmSync(info.dataDir, { recursive: true, force: true });
}
