/**
 * The bench's yardstick: a bare Node HTTPS server answering a fixed JSON ad item, with the platform's
 * certificate, in a process of its own like the gateway. Prints its port on stdout.
 */
import fs from 'node:fs';
import https from 'node:https';

const ITEM = JSON.stringify({
  object: 'custom_html_ad_item',
  self: '/v2/ad-items/custom-html/1',
  id: 1,
  name: 'Bench ad item',
  height: 250,
  width: 300,
  location: null,
  tracking_pixel: null,
  tracking_pixels: [],
  metadata: {},
  trusted_redirect_domains: [],
  is_self_serve: false,
  custom_html: '<div>bench</div>',
  html_content_below: null,
  expand_horizontal_direction: 'none',
  expand_vertical_direction: 'none',
  created_date: '2026-01-01 00:00:00',
  last_modified: '2026-01-01 00:00:00',
});

const server = https.createServer({ cert: fs.readFileSync(process.env.TLS_CERT_FILE!), key: fs.readFileSync(process.env.TLS_KEY_FILE!) }, (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(ITEM);
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as { port: number }).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
