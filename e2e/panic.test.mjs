// A bug in the model must not cost the user their scenario: the panic panel names the link to
// report and restarts the model on the same scenario without reloading the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serveDist, openBrowser, ARTIFACTS } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); fs.mkdirSync(ARTIFACTS, { recursive: true }); });
after(async () => { await browser?.close(); await server?.close(); });

test('a panic shows the scenario link and Restart runs the same scenario again, without a reload', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=fsmark-create&writers=4');
  await page.waitForSelector('#lab[data-ready="true"]');
  // Change the scenario on the page (not in the link it opened with): that must survive too.
  await page.click('summary');
  await page.fill('[data-testid="set-log_size"]', '16MiB');
  await page.press('[data-testid="set-log_size"]', 'Enter');
  await page.waitForFunction(() => document.querySelector('header .sub').textContent.includes('16 MiB log'));
  await page.evaluate(() => { window.__notReloaded = true; });
  await page.selectOption('[data-testid="speed"]', { label: '100 µs / frame' });
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => BigInt(document.querySelector('#lab').dataset.simNs) > 1_000_000n);
  await page.evaluate(() => window.wasmBindings.loglab_inject_panic());
  await page.waitForSelector('[data-testid="panic"]');
  const link = await page.textContent('[data-testid="panic-link"]');
  assert.match(link, /\?preset=fsmark-create&.*writers=4/);
  assert.match(link, /log_size=16MiB/);
  assert.match(await page.textContent('[data-testid="panic"]'), /injected panic/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'panic.png') });
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'panic-restart', 'focus is on Restart');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid="panic"]', { state: 'detached' });
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.evaluate(() => window.__notReloaded), true, 'the page was not reloaded');
  assert.equal(await page.getAttribute('#lab', 'data-preset'), 'fsmark-create');
  assert.match(await page.textContent('header .sub'), /4 writers.*16 MiB log/);
  assert.equal(await page.locator('#lab').count(), 1, 'one lab on the page');
  assert.equal(await page.getAttribute('#lab', 'data-sim-ns'), '0', 'the model starts again');
  // The restarted lab works: play and pause.
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => BigInt(document.querySelector('#lab').dataset.simNs) > 500_000n);
  await page.click('[data-testid="play"]');
  const unexpected = errors.filter((e) => !/Log Lab panicked|injected panic|unreachable|RuntimeError/.test(e));
  assert.deepEqual(unexpected, []);
});
