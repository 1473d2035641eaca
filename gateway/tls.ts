import fs from 'node:fs';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { dataDir, envStr } from '../services/shared/config';
import { log } from '../services/shared/log';

/**
 * The HTTPS certificate: TLS_CERT_FILE/TLS_KEY_FILE when given, otherwise a self-signed certificate for
 * localhost, generated once and kept under DATA_DIR/tls so clients can pin it across restarts.
 */
export async function loadTlsCredentials(): Promise<{ cert: string; key: string; selfSigned: boolean; certPath?: string }> {
  const certFile = envStr('TLS_CERT_FILE');
  const keyFile = envStr('TLS_KEY_FILE');
  if (certFile || keyFile) {
    if (!certFile || !keyFile) throw new Error('set both TLS_CERT_FILE and TLS_KEY_FILE, or neither');
    return { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8'), selfSigned: false, certPath: certFile };
  }
  const dir = path.join(dataDir(), 'tls');
  const certPath = path.join(dir, 'localhost.crt');
  const keyPath = path.join(dir, 'localhost.key');
  if (fs.existsSync(certPath) && fs.existsSync(keyPath)) {
    return { cert: fs.readFileSync(certPath, 'utf8'), key: fs.readFileSync(keyPath, 'utf8'), selfSigned: true, certPath };
  }
  fs.mkdirSync(dir, { recursive: true });
  const notAfter = new Date();
  notAfter.setFullYear(notAfter.getFullYear() + 2);
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
  fs.writeFileSync(keyPath, pems.private, { mode: 0o600 });
  fs.writeFileSync(certPath, pems.cert);
  log.info('generated a self-signed certificate for localhost', { cert: certPath });
  return { cert: pems.cert, key: pems.private, selfSigned: true, certPath };
}
