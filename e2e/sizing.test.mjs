// The mkfs log sizing panel gives what `loglab size --json` gives for the same geometry,
// updates as you type, keeps a bad value with its message, and runs the log it picked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, loglab, openBrowser, serveDist } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); fs.mkdirSync(ARTIFACTS, { recursive: true }); });
after(async () => { await browser?.close(); await server?.close(); });

const size = (args) => JSON.parse(loglab(['size', ...args, '--json']).toString());

const GEOMETRIES = [
  { fields: { fs_size: '4GiB' }, args: ['--fs-size', '4GiB'] },
  { fields: { fs_size: '64GiB' }, args: ['--fs-size', '64GiB'] },
  { fields: { fs_size: '4TiB', block_size: '1024' }, args: ['--fs-size', '4TiB', '--block-size', '1024'] },
  { fields: { fs_size: '220GiB', dsu: '64KiB', dsw: '4' }, rmapbt: true, args: ['--fs-size', '220GiB', '--dsu', '64KiB', '--dsw', '4', '--rmapbt', '1'] },
];

test('sizing equals loglab size --json for several geometries, step by step', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=fsync-heavy');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.locator('[data-testid="sizing"]').count(), 0, 'hidden until asked for');
  await page.check('[data-panel="mkfs log sizing"]');
  for (const g of GEOMETRIES) {
    for (const k of ['fs_size', 'block_size', 'dsu', 'dsw']) await page.fill(`[data-testid="size-${k}"]`, g.fields[k] ?? (k === 'block_size' ? '4096' : ''));
    await page.setChecked('[data-testid="size-rmapbt"]', !!g.rmapbt);
    const cli = size(g.args);
    for (const [algo, r] of Object.entries(cli.algorithms)) {
      const col = page.locator(`[data-algo="${algo}"]`);
      assert.equal(Number(await col.getAttribute('data-log-blocks')), r.log_blocks, `${g.args.join(' ')}: ${algo} log blocks`);
      assert.equal(Number(await col.getAttribute('data-min-log-blocks')), r.min_log_blocks, `${algo} minimum`);
      assert.deepEqual(await col.locator('ol.steps li').allTextContents(), r.steps, `${algo} steps`);
    }
  }
  await page.fill('[data-testid="size-fs_size"]', '4GiB');
  await page.fill('[data-testid="size-block_size"]', '4096');
  await page.fill('[data-testid="size-dsu"]', '');
  await page.fill('[data-testid="size-dsw"]', '');
  await page.setChecked('[data-testid="size-rmapbt"]', false);
  await page.locator('[data-testid="sizing"]').screenshot({ path: path.join(ARTIFACTS, 'panel-sizing.png') });
  assert.deepEqual(errors, []);
});

test('a bad size keeps what was typed with its message; mkfs refusals show mkfs’s words; Run this opens that log', async () => {
  const { page, errors } = browser;
  await page.fill('[data-testid="size-fs_size"]', 'lots');
  assert.equal(await page.inputValue('[data-testid="size-fs_size"]'), 'lots');
  assert.match(await page.textContent('[data-testid="sizing"] .field.bad'), /fs_size.*lots/);
  await page.fill('[data-testid="size-fs_size"]', '100MiB');
  assert.match(await page.textContent('[data-algo="xfsprogs-6.1"]'), /Filesystem must be larger than 300MB/);
  await page.fill('[data-testid="size-fs_size"]', '4GiB');
  const blocks = Number(await page.getAttribute('[data-algo="xfsprogs-6.1"]', 'data-log-blocks'));
  await page.click('[data-testid="size-run-xfsprogs-6.1"]');
  const mib = blocks * 4096 / 1048576;
  await page.waitForFunction((m) => document.querySelector('header .sub').textContent.includes(`${m} MiB log`), mib);
  assert.equal(await page.locator('[data-testid="sizing"]').count(), 1, 'the panel stays open on the new scenario');
  assert.deepEqual(errors, []);
});
