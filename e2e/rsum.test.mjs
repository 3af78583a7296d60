// The realtime summary panel (source thread 004): the rsum heat map with the minimum-level cache, and
// the summary reads with the cache on and off, as loglab run counts them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, nativeRun, openBrowser, serveDist } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); fs.mkdirSync(ARTIFACTS, { recursive: true }); });
after(async () => { await browser?.close(); await server?.close(); });

const native = nativeRun;

test('the rsum heat map shows the cache, and summary reads with it on and off match loglab run', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=rt-alloc-fragmented&at=20ms');
  await page.waitForSelector('#lab[data-ready="true"]', { timeout: 60000 });
  const panel = page.locator('[data-testid="rsum"]');
  assert.equal(await panel.getAttribute('data-cache'), 'on');
  const reads = Number(await panel.getAttribute('data-summary-reads'));
  assert.equal(reads, native('?preset=rt-alloc-fragmented', '20ms').rsum_reads);
  assert.ok(await panel.locator('canvas').evaluate((c) => c.width > 0));
  await page.click('[data-testid="rsum-compare"]');
  await page.waitForSelector('[data-testid="rsum-reads-b"]');
  const off = Number(await page.textContent('[data-testid="rsum-reads-b"]'));
  assert.equal(off, native('?preset=rt-alloc-fragmented&rsum_cache=off', '20ms').rsum_reads, 'the compare run is the CLI run with the cache off');
  assert.ok(off > reads, `the cache saves summary reads (${reads} with, ${off} without)`);
  assert.equal(await page.getAttribute('[data-testid="compare"]', 'data-b-label'), 'rsum_cache=off', 'compare mode opened with it');
  await panel.screenshot({ path: path.join(ARTIFACTS, 'panel-rsum.png') });
  // Other scenarios have no realtime device and no panel.
  await page.goto(server.url + '?preset=small-crash');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.locator('[data-testid="rsum"]').count(), 0);
  assert.deepEqual(errors, []);
});
