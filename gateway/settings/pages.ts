/** Server-rendered pages of /settings/api: plain HTML forms, one stylesheet, a script only for copying. */

export const escapeHtml = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface KeyRow {
  id: number;
  mode: 'test' | 'live';
  name: string;
  /** First 8 and last 4 characters known (the full key is never stored). */
  shown: string;
  created: string;
  lastUsed: string;
}

export interface Budget {
  name: string;
  limit: number;
  used: number;
}

function layout(title: string, body: string, signedIn = false, csrf = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · API settings</title>
<link rel="stylesheet" href="/settings/api/assets/settings.css">
</head>
<body>
<header class="bar">
  <span class="brand">Ad server</span>
  <nav aria-label="Main">
    <a href="/docs">API reference</a>
    ${signedIn ? `<form method="post" action="/settings/api/sign-out" class="inline"><input type="hidden" name="_csrf" value="${escapeHtml(csrf)}"><button type="submit" class="link">Sign out everywhere</button></form>` : ''}
  </nav>
</header>
<main>
${body}
</main>
</body>
</html>
`;
}

export function signInPage(opts: { csrf: string; email?: string; error?: string }): string {
  return layout(
    'Sign in',
    `<section class="card narrow">
  <h1>Sign in</h1>
  <p class="muted">Manage the API keys of your account.</p>
  ${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
  <form method="post" action="/settings/api/sign-in">
    <input type="hidden" name="_csrf" value="${escapeHtml(opts.csrf)}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit">Sign in</button>
  </form>
</section>`,
  );
}

export function keysPage(opts: { account: { name: string; email: string }; csrf: string; keys: KeyRow[]; budgets: Budget[]; created?: { name: string; mode: string; secret: string }; notice?: string; error?: string }): string {
  const rows = opts.keys
    .map(
      (k) => `<tr>
      <td><span class="mode mode-${k.mode}">${k.mode}</span></td>
      <td>${escapeHtml(k.name)}</td>
      <td><code>${escapeHtml(k.shown)}</code></td>
      <td>${escapeHtml(k.created)}</td>
      <td>${k.lastUsed ? escapeHtml(k.lastUsed) : '<span class="muted">never</span>'}</td>
      <td><a class="danger-link" href="/settings/api/keys/${k.id}/delete" aria-label="Delete key ${escapeHtml(k.name)}">Delete</a></td>
    </tr>`,
    )
    .join('\n');
  const budgets = opts.budgets
    .map((b) => {
      return `<div class="budget">
      <div class="budget-head"><span>${escapeHtml(b.name)}</span><span>${b.used} of ${b.limit} in the last 60 s</span></div>
      <progress max="${b.limit}" value="${Math.min(b.used, b.limit)}" aria-label="${escapeHtml(b.name)}: ${b.used} of ${b.limit} used"></progress>
    </div>`;
    })
    .join('\n');
  return layout(
    'API keys',
    `<h1>API keys</h1>
<p class="muted">${escapeHtml(opts.account.name)}${opts.account.email ? ` · ${escapeHtml(opts.account.email)}` : ''}</p>
${opts.notice ? `<p class="notice" role="status">${escapeHtml(opts.notice)}</p>` : ''}
${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
${
  opts.created
    ? `<section class="card created" aria-labelledby="created-title">
  <h2 id="created-title">Your new ${escapeHtml(opts.created.mode)} key “${escapeHtml(opts.created.name)}”</h2>
  <p>Copy it now: it is shown only once.</p>
  <div class="secret"><code id="new-key">${escapeHtml(opts.created.secret)}</code><button type="button" class="secondary" data-copy="new-key">Copy</button></div>
</section>`
    : ''
}
<section class="card" aria-labelledby="keys-title">
  <h2 id="keys-title">Keys</h2>
  <table>
    <thead><tr><th scope="col">Mode</th><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created (UTC)</th><th scope="col">Last used (UTC)</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
    ${rows || '<tr><td colspan="6" class="muted">No keys yet.</td></tr>'}
    </tbody>
  </table>
</section>
<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">Create a key</h2>
  <form method="post" action="/settings/api/keys" class="row">
    <input type="hidden" name="_csrf" value="${escapeHtml(opts.csrf)}">
    <div><label for="key-name">Name</label><input id="key-name" name="name" required maxlength="100" placeholder="e.g. Reporting job"></div>
    <div><label for="key-mode">Mode</label><select id="key-mode" name="mode"><option value="test">test</option><option value="live">live</option></select></div>
    <div class="end"><button type="submit">Create key</button></div>
  </form>
</section>
<section class="card" aria-labelledby="limits-title">
  <h2 id="limits-title">Rate limits</h2>
  ${budgets}
</section>
<script src="/settings/api/assets/copy.js"></script>`,
    true,
    opts.csrf,
  );
}

export function confirmDeletePage(opts: { csrf: string; key: KeyRow }): string {
  return layout(
    'Delete key',
    `<section class="card narrow">
  <h1>Delete this key?</h1>
  <p><span class="mode mode-${opts.key.mode}">${opts.key.mode}</span> ${escapeHtml(opts.key.name)} <code>${escapeHtml(opts.key.shown)}</code></p>
  <p>Requests with it are refused at once, on every gateway. This cannot be undone.</p>
  <form method="post" action="/settings/api/keys/${opts.key.id}/delete" class="row">
    <input type="hidden" name="_csrf" value="${escapeHtml(opts.csrf)}">
    <button type="submit" class="danger">Delete key</button>
    <a href="/settings/api" class="button secondary">Cancel</a>
  </form>
</section>`,
    true,
    opts.csrf,
  );
}

export function messagePage(title: string, message: string): string {
  return layout(title, `<section class="card narrow"><h1>${escapeHtml(title)}</h1><p role="alert">${escapeHtml(message)}</p><p><a href="/settings/api">Back to API settings</a></p></section>`);
}

export const SETTINGS_CSS = `:root { --ink: #1f2933; --muted: #616e7c; --line: #e4e7eb; --bg: #f7f8fa; --accent: #2f5fd0; --danger: #b42318; --focus: #f5a524; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
.bar { display: flex; justify-content: space-between; align-items: center; padding: 12px 32px; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-weight: 600; }
nav { display: flex; gap: 20px; align-items: center; }
main { max-width: 960px; margin: 32px auto; padding: 0 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 0 0 16px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 24px; margin: 20px 0; }
.narrow { max-width: 420px; margin: 48px auto; }
.muted { color: var(--muted); }
label { display: block; font-weight: 500; margin: 14px 0 6px; }
input, select { width: 100%; padding: 9px 11px; border: 1px solid #cbd2d9; border-radius: 6px; font: inherit; background: #fff; }
button, .button { display: inline-block; padding: 9px 16px; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent); color: #fff; font: inherit; font-weight: 500; cursor: pointer; text-decoration: none; margin-top: 18px; }
button.secondary, .button.secondary { background: #fff; color: var(--ink); border-color: #cbd2d9; }
button.danger { background: var(--danger); border-color: var(--danger); }
button.link { background: none; border: none; color: var(--accent); padding: 0; margin: 0; }
a { color: var(--accent); }
.danger-link { color: var(--danger); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.inline { display: inline; }
.row { display: flex; gap: 16px; align-items: flex-end; flex-wrap: wrap; }
.row > div { flex: 1 1 180px; } .row > .end { flex: 0 0 auto; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 10px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { font-size: 13px; color: var(--muted); font-weight: 500; }
code { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
.mode { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
.mode-test { background: #fff4e5; color: #8a4b00; } .mode-live { background: #e6f4ea; color: #1e6b34; }
.error { background: #fdecea; color: var(--danger); padding: 10px 12px; border-radius: 6px; }
.notice { background: #e8f0fe; padding: 10px 12px; border-radius: 6px; }
.created { border-color: var(--accent); }
.secret { display: flex; gap: 12px; align-items: center; } .secret code { flex: 1; padding: 10px; background: var(--bg); border-radius: 6px; word-break: break-all; } .secret button { margin: 0; }
.budget { margin: 12px 0; } .budget-head { display: flex; justify-content: space-between; font-size: 14px; margin-bottom: 6px; }
progress { width: 100%; height: 8px; appearance: none; border: none; border-radius: 4px; background: var(--line); overflow: hidden; }
progress::-webkit-progress-bar { background: var(--line); } progress::-webkit-progress-value { background: var(--accent); } progress::-moz-progress-bar { background: var(--accent); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`;

export const COPY_JS = `for (const b of document.querySelectorAll('[data-copy]')) {
  b.addEventListener('click', async () => {
    const text = document.getElementById(b.dataset.copy).textContent;
    try { await navigator.clipboard.writeText(text); b.textContent = 'Copied'; } catch { b.textContent = 'Select and copy'; }
  });
}
`;
