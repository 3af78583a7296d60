// The trace panel: the text `loglab trace` writes for the same link up to the same moment,
// filtered by event, shown and downloaded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS, downloaded, loglab, openBrowser, serveDist } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); fs.mkdirSync(ARTIFACTS, { recursive: true }); });
after(async () => { await browser?.close(); await server?.close(); });

const cliTrace = (args) => loglab(['trace', '--url', 'http://127.0.0.1:8080/?preset=small-crash', '--until', '2ms', ...args]).toString();

test('the downloaded trace equals loglab trace --until for the same link, whole and filtered', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=small-crash&at=2ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.check('[data-panel="trace"]');
  await page.click('[data-testid="trace-show"]');
  const whole = cliTrace([]);
  const body = whole.split('\n').filter((l) => l && !l.startsWith('#'));
  assert.equal(Number(await page.getAttribute('[data-testid="trace-count"]', 'data-lines')), body.length);
  assert.equal((await page.textContent('[data-testid="trace-text"]')).split('\n').at(-1), body.at(-1), 'the last line on screen is the last event');
  assert.equal((await downloaded(page, 'trace-download')).toString(), whole, 'the whole trace, header included');
  await page.fill('[data-testid="trace-filter"]', 'xfs_log_force');
  await page.click('[data-testid="trace-show"]');
  const only = cliTrace(['--event', 'xfs_log_force']);
  assert.ok(only.split('\n').filter((l) => l && !l.startsWith('#')).length > 0, 'the filter keeps some lines');
  assert.equal((await downloaded(page, 'trace-download')).toString(), only, 'filtered as --event filters');
  await page.locator('[data-testid="trace"]').screenshot({ path: path.join(ARTIFACTS, 'panel-trace.png') });
  assert.deepEqual(errors, []);
});
