import path from 'node:path';
import express, { Router } from 'express';
import type { ApiVersion } from '../services/shared/catalog';
import { openApiDocument } from './api/openapi';
import { ApiError } from './errors';

/** swagger-ui-dist's files, served by the platform itself: the reference page needs no outside network. */
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

const documents = new Map<ApiVersion, string>();
function documentJson(version: ApiVersion): string {
  let doc = documents.get(version);
  if (!doc) documents.set(version, (doc = JSON.stringify(openApiDocument(version))));
  return doc;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/docs.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/docs.js"></script>
</body>
</html>
`;

// One file of our own, so the page's policy can forbid inline scripts.
const INIT = `window.ui = SwaggerUIBundle({
  urls: [{ url: '/v2/openapi.json', name: 'v2' }, { url: '/v1/openapi.json', name: 'v1' }],
  'urls.primaryName': new URLSearchParams(location.search).get('version') === 'v1' ? 'v1' : 'v2',
  dom_id: '#reference',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

const CSS = `body { margin: 0; background: #fafafa; }
.swagger-ui .topbar { background: #1f2933; }
.swagger-ui .topbar .link { visibility: hidden; }
`;

/** Everything the page loads comes from this origin (checked by the browser test). */
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/**
 * /v1/openapi.json and /v2/openapi.json (no key needed) and the reference page at /docs. Like the API,
 * they are answered only over TLS.
 */
export function docsRouter(): Router {
  const router = Router();
  const httpsOnly: express.RequestHandler = (req, _res, next) =>
    req.secure ? next() : next(new ApiError(req.path.startsWith('/v1/') ? 400 : 403, 'https_required_error', 'The API reference is served over HTTPS only.'));
  for (const version of ['v1', 'v2'] as const) {
    router.get(`/${version}/openapi.json`, httpsOnly, (_req, res) => {
      res.type('application/json').send(documentJson(version));
    });
  }
  router.use('/docs', httpsOnly);
  router.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.type('html').send(PAGE);
  });
  router.get('/docs/docs.js', (_req, res) => res.type('application/javascript').send(INIT));
  router.get('/docs/docs.css', (_req, res) => res.type('text/css').send(CSS));
  router.use('/docs/assets', express.static(SWAGGER_UI_DIR, { index: false, fallthrough: false }));
  return router;
}
