// Compare mode: the scenario again with one setting changed, on the same clock; B is the run
// `loglab run --until` computes for B's link, and the diff shows what changed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, nativeRun, openBrowser, serveDist } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); fs.mkdirSync(ARTIFACTS, { recursive: true }); });
after(async () => { await browser?.close(); await server?.close(); });

const native = nativeRun;

test('B runs on A’s clock as loglab run computes it, and the diff marks what the setting changed', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=fsmark-create&at=45ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.check('[data-panel="compare"]');
  await page.selectOption('[data-testid="compare-key"]', 'flush');
  await page.fill('[data-testid="compare-value"]', 'legacy');
  await page.click('[data-testid="compare-go"]');
  await page.waitForSelector('[data-testid="compare-table"]');
  const c = await page.$eval('[data-testid="compare"]', (e) => ({ ...e.dataset }));
  assert.equal(c.bLabel, 'flush=legacy');
  assert.equal(c.bSimNs, await page.getAttribute('#lab', 'data-sim-ns'), 'one clock');
  assert.equal(c.bTraceHash, native('?preset=fsmark-create&flush=legacy', '45ms').trace_hash, 'B is the native run of its link');
  assert.equal(await page.getAttribute('#lab', 'data-trace-hash'), native('?preset=fsmark-create', '45ms').trace_hash);
  // Play on: both move together.
  await page.selectOption('[data-testid="speed"]', { label: '100 µs / frame' });
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => BigInt(document.querySelector('#lab').dataset.simNs) > 50_000_000n, null, { timeout: 20000 });
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="compare"]').dataset.bSimNs === document.querySelector('#lab').dataset.simNs);
  const changed = await page.locator('[data-testid="compare-table"] tr.changed').evaluateAll((rows) => rows.map((r) => r.dataset.metric));
  assert.ok(changed.includes('fua_writes') || changed.includes('cache_flushes'), `legacy flushes differently: ${changed}`);
  assert.equal(await page.locator('[data-testid="compare"] canvas').count(), 2, 'two flush timelines, one above the other');
  await page.locator('[data-testid="compare"]').screenshot({ path: path.join(ARTIFACTS, 'panel-compare.png') });
  // Two settings at once.
  await page.fill('[data-testid="compare-more"]', 'iclog_count=2');
  await page.click('[data-testid="compare-go"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="compare"]').dataset.bLabel === 'flush=legacy&iclog_count=2');
  const now = await page.getAttribute('#lab', 'data-sim-ns');
  assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-b-trace-hash'),
    native('?preset=fsmark-create&flush=legacy&iclog_count=2', `${Number(now) / 1000}us`).trace_hash);
  await page.fill('[data-testid="compare-more"]', '');
  await page.click('[data-testid="compare-go"]');
  // A bad value names the key and value and leaves the comparison as it was.
  await page.fill('[data-testid="compare-value"]', 'sideways');
  await page.click('[data-testid="compare-go"]');
  assert.match(await page.textContent('[data-testid="compare"] .error'), /flush.*sideways/);
  assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-b-label'), 'flush=legacy');
  assert.deepEqual(errors, []);
});
