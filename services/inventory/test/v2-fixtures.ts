import type { Client } from '../../../gateway/test/support/api';

/** A native ad item (with its template) and a media group to convert it into. */
export async function nativeFixture(api: Client) {
  const t = await api.post('/v2/templates/native', {
    name: 'Card',
    raw_html: '<div class="card"><h1>[%title%]</h1><p>Now [%price%] &amp; free delivery</p><script>track()</script></div>',
    variables: [
      { name: 'Title', placeholder: '[%title%]', type: 'text' },
      { name: 'Price', placeholder: '[%price%]', type: 'number' },
    ],
  });
  expect(t.status).toBe(200);
  const [title, price] = t.body.variables;
  const item = await api.post('/v2/ad-items/native', { name: 'Running shoes', width: 300, height: 250, template: t.body.id, variables: { [title.id]: 'Running <shoes>', [price.id]: 59 } });
  expect(item.status).toBe(200);
  const group = await api.post('/v2/media-groups', { name: 'Rendered natives' });
  expect(group.status).toBe(200);
  return { item: item.body, group: group.body };
}

/** Polls the task until it is done (success or error). */
export async function waitForTask(api: Client, taskUrl: string, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.get(taskUrl);
    if (res.status === 200 && res.body.data.results) return res.body;
    if (Date.now() > until) throw new Error(`task not done in time: ${res.status} ${res.text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
