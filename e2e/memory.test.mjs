// Memory stays bounded in the browser: a busy preset played for two virtual minutes keeps its
// wasm memory (which only ever grows: it is the high-water mark) where it stood after the first
// 40 virtual seconds, when time travel's snapshots have filled their budget. An allocator that
// fragments under the snapshots' churn creeps upward here (talc did: +33 MiB by 120 s, and on to
// +74 MiB over ten minutes; the default dlmalloc stays flat). The long soak is e2e/soak.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveDist, openBrowser } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

test('two virtual minutes of fsync-heavy keep the wasm memory where it was at 40 s', { timeout: 240000 }, async () => {
  const { page, errors } = browser;
  await page.goto(`${server.url}?preset=fsync-heavy&duration=120s`);
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.selectOption('[data-testid="speed"]', { label: '100 ms / frame' });
  await page.click('[data-testid="play"]');
  const sample = () => page.evaluate(() => ({
    ns: Number(document.querySelector('#lab').dataset.simNs),
    wasm: window.wasmBindings.loglab_memory_bytes(),
  }));
  const reach = (ns) => page.waitForFunction((t) => Number(document.querySelector('#lab').dataset.simNs) >= t,
    ns, { timeout: 200000, polling: 500 });
  await reach(40e9);
  const early = await sample();
  await reach(120e9);
  const late = await sample();
  const mib = (b) => b / 1048576;
  console.log(`wasm memory: ${mib(early.wasm).toFixed(1)} MiB at ${(early.ns / 1e9).toFixed(1)} s, `
    + `${mib(late.wasm).toFixed(1)} MiB at ${(late.ns / 1e9).toFixed(1)} s`);
  assert.ok(mib(late.wasm - early.wasm) < 8, `the wasm memory grew ${mib(late.wasm - early.wasm).toFixed(1)} MiB`);
  assert.deepEqual(errors, []);
});
