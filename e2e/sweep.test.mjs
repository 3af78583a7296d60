// Sweeps in Web Workers: the rows `loglab sweep --json` prints for the same grid, a table and
// a chart, and the rows as JSON and CSV downloads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, downloaded, loglab, openBrowser, serveDist } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); fs.mkdirSync(ARTIFACTS, { recursive: true }); });
after(async () => { await browser?.close(); await server?.close(); });

// Opens the lab on `query`, runs a sweep of two keys over their values and waits for every run.
async function sweep(page, query, [k1, v1], [k2, v2]) {
  await page.goto(server.url + query);
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.check('[data-panel="sweep"]');
  await page.selectOption('[data-testid="sweep-key1"]', k1);
  await page.fill('[data-testid="sweep-values1"]', v1);
  await page.selectOption('[data-testid="sweep-key2"]', k2);
  await page.fill('[data-testid="sweep-values2"]', v2);
  await page.click('[data-testid="sweep-run"]');
  await page.waitForFunction(() => {
    const s = document.querySelector('[data-testid="sweep"]');
    return s.dataset.total && s.dataset.done === s.dataset.total;
  }, null, { timeout: 120000 });
}

test('a two-key sweep in workers gives loglab sweep --json’s rows, as a table, a chart and downloads', async () => {
  const { page, errors } = browser;
  await sweep(page, '?preset=small-crash&duration=50ms', ['log_size', '2MiB,4MiB,8MiB'], ['flush', 'legacy,upstream']);
  const cli = JSON.parse(loglab(['sweep', '--url', 'http://127.0.0.1:8080/?preset=small-crash&duration=50ms',
    '--vary', 'log_size=2MiB,4MiB,8MiB', '--vary', 'flush=legacy,upstream', '--json']).toString());
  const lab = JSON.parse((await downloaded(page, 'sweep-json')).toString());
  assert.equal(lab.length, cli.length);
  lab.forEach((row, i) => {
    for (const [k, v] of Object.entries(cli[i])) {
      if (typeof v === 'number' && !Number.isInteger(v)) assert.ok(Math.abs(row[k] - v) <= 1e-9 * Math.max(1, Math.abs(v)), `row ${i} ${k}: ${row[k]} vs ${v}`);
      else assert.deepEqual(row[k], v, `row ${i} ${k}`);
    }
  });
  assert.equal(await page.locator('[data-testid="sweep-table"] tr').count(), 1 + 6);
  const csv = (await downloaded(page, 'sweep-csv')).toString().trim().split('\n');
  assert.equal(csv.length, 1 + 6);
  assert.match(csv[0], /^log_size,flush,/);
  await page.selectOption('[data-testid="sweep-metric"]', 'cache_flushes');
  await page.locator('[data-testid="sweep"]').screenshot({ path: path.join(ARTIFACTS, 'panel-sweep.png') });
  // A bad value names the key and value, and nothing runs.
  await page.fill('[data-testid="sweep-values2"]', 'legacy,sideways');
  await page.click('[data-testid="sweep-run"]');
  assert.match(await page.textContent('[data-testid="sweep"] p.error'), /flush.*sideways/);
  assert.deepEqual(errors, []);
});

test('the source thread 000 grid sets the source thread’s published values beside the model’s lines', async () => {
  const { page, errors } = browser;
  await sweep(page, '?preset=seed-log-size&duration=300ms', ['log_size', '10MiB,40MiB,160MiB'], ['device', 'hdd-x4,nvme-x4']);
  assert.match(await page.textContent('[data-testid="sweep-seed"]'), /source thread 000 published/);
  await page.selectOption('[data-testid="sweep-metric"]', 'grant_head_waits');
  await page.locator('[data-testid="sweep"]').screenshot({ path: path.join(ARTIFACTS, 'panel-sweep-seed000.png') });
  // A run in which no fsync completed says so in its latency cells, not 0.
  const rows = await page.locator('[data-testid="sweep-table"] tr').evaluateAll((trs) =>
    trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  for (const [, , tx, p50, p99] of rows) {
    if (tx === '0') assert.deepEqual([p50, p99], ['none completed', 'none completed'], rows.join(' / '));
    else assert.notEqual(p50, 'none completed', rows.join(' / '));
  }
  // A metric the seed does not publish: no rings, no such legend.
  await page.selectOption('[data-testid="sweep-metric"]', 'cache_flushes');
  assert.equal(await page.locator('[data-testid="sweep-seed"]').count(), 0);
  assert.deepEqual(errors, []);
});
