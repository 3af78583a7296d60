// Links that keep working while the model improves: Copy link records the moment, the panels,
// the speed and the comparison with the model version and trace hash; a fresh browser opens
// it on the same hash; a link whose hash this model no longer computes opens with a banner
// naming the model changes in between; every link of every schema in the corpus opens; bad
// links each say what is wrong and the default scenario opens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveDist, openBrowser, nativeRun, loglab } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

async function open(page, query) {
  await page.goto(server.url + query);
  await page.waitForSelector('#lab[data-ready="true"]', { timeout: 60000 });
  return page.$eval('#lab', (e) => ({ ...e.dataset }));
}

test('Copy link records the moment, panels, speed and comparison; a fresh browser opens it on the same hash', async () => {
  const { page } = browser;
  await open(page, '?preset=cil-throttle-32mb&at=150ms');
  // Show the compare panel, run a comparison, change the speed, then step a little.
  await page.check('[data-testid="panels"] input[data-panel="compare"]');
  await page.selectOption('[data-testid="compare-key"]', 'flush');
  await page.fill('[data-testid="compare-value"]', 'legacy');
  await page.click('[data-testid="compare-go"]');
  await page.selectOption('[data-testid="speed"]', String(1_000_000));
  await page.click('[data-testid="step"]');
  await page.waitForFunction(() => document.querySelector('#lab').dataset.simNs === '151000000');
  await page.click('[data-testid="copy-link"]');
  const link = await page.inputValue('[data-testid="copied-link"]');
  const lab = await page.$eval('#lab', (e) => ({ ...e.dataset }));
  const u = new URL(link);
  assert.equal(u.origin + u.pathname, server.url);
  const q = u.searchParams;
  assert.equal(q.get('preset'), 'cil-throttle-32mb');
  assert.equal(q.get('at'), '151ms');
  assert.equal(q.get('v'), '2');
  assert.match(q.get('m'), /^\d+$/);
  assert.equal(q.get('h'), lab.traceHash, 'the hash of the moment on screen');
  assert.equal(q.get('speed'), '1ms');
  assert.equal(q.get('cmp'), 'flush:legacy');
  assert.ok(q.get('panels').split(',').includes('compare'), q.get('panels'));
  // The native run to that moment has that hash too.
  assert.equal(nativeRun(u.search, '151ms').trace_hash, q.get('h'));
  // A fresh profile opens the link on the same hash, with its panels, speed and comparison.
  const fresh = await openBrowser();
  try {
    const again = await open(fresh.page, u.search);
    assert.equal(again.traceHash, q.get('h'));
    assert.equal(again.simNs, '151000000');
    assert.equal(await fresh.page.locator('[data-testid="model-changed"]').count(), 0, 'no banner: the hash holds');
    assert.equal(await fresh.page.inputValue('[data-testid="speed"]'), String(1_000_000));
    assert.equal(await fresh.page.isChecked('[data-testid="panels"] input[data-panel="compare"]'), true);
    await fresh.page.waitForSelector('[data-testid="compare-table"]');
    assert.equal(await fresh.page.locator('[data-testid="error"]').count(), 0);
  } finally {
    await fresh.close();
  }
});

test('a link whose trace hash the model no longer computes opens with a banner naming the changes since', async () => {
  const { page } = browser;
  const lab = await open(page, '?preset=small-crash&at=5ms&v=2&m=1&h=0123456789abcdef');
  assert.equal(lab.preset, 'small-crash', 'it still opens the link');
  assert.equal(lab.simNs, '5000000');
  const banner = page.locator('[data-testid="model-changed"]');
  assert.equal(await banner.count(), 1);
  assert.equal(await banner.getAttribute('data-link-model'), '1');
  assert.equal(await banner.getAttribute('data-link-hash'), '0123456789abcdef');
  assert.equal(await banner.getAttribute('data-hash'), lab.traceHash);
  const text = await banner.textContent();
  assert.match(text, /made with model version 1/);
  assert.ok(await banner.locator('li[data-version="2"]').count() === 1, text);
  // The same link with the hash this model computes: no banner.
  await open(page, `?preset=small-crash&at=5ms&v=2&m=1&h=${lab.traceHash}`);
  assert.equal(await page.locator('[data-testid="model-changed"]').count(), 0);
});

test('every link of every schema in the corpus opens without an error', async () => {
  const { page } = browser;
  for (const v of ['v1', 'v2']) {
    const corpus = fs.readFileSync(path.join(here, '..', 'crates', 'xlog', 'tests', 'links', `${v}.txt`), 'utf8');
    const links = corpus.split('\n').filter((l) => l && !l.startsWith('#'));
    assert.ok(links.length >= 10);
    for (const link of links) {
      const query = link.includes('?') ? link.slice(link.indexOf('?')) : '';
      await open(page, query);
      const err = await page.locator('[data-testid="error"]').count();
      assert.equal(err, 0, `${v}: ${link}: ${err && await page.textContent('[data-testid="error"]')}`);
    }
  }
});

test('bad links each say what is wrong, and the default scenario opens', async () => {
  const { page } = browser;
  for (const [query, needle] of [
    [`?preset=small-crash&writers=${'9'.repeat(9000)}`, /the link is 9\d{3} bytes long \(at most 8192\)/],
    ['?preset=small-crash&colour=red', /unknown key 'colour'/],
    ['?preset=small-crash&at=-5ms', /at: '-5ms' is not a duration/],
    ['?preset=small-crash&v=7', /schema version 7, newer than this lab's 2/],
    ['?preset=small-crash&panels=ring,kitchen', /panels: 'kitchen' is not a panel/],
    ['?preset=small-crash&speed=3ms', /speed: '3ms' is not a speed of Play/],
  ]) {
    const lab = await open(page, query);
    const msg = await page.textContent('[data-testid="error"]');
    assert.match(msg, needle, query.slice(0, 80));
    // Short enough to read: it quotes no part of the link whole (an unknown key's message
    // lists every key there is, so it grows with them).
    assert.ok(!msg.includes('9'.repeat(64)), `the message does not echo the link whole (${msg.length} characters)`);
    assert.ok(msg.length < 1200, `the message is short (${msg.length} characters)`);
    assert.equal(lab.preset, 'fsync-heavy', 'the default scenario opens');
  }
});

test('every preset link round-trips: Copy link reopens it on the same moment and hash', async () => {
  const { page } = browser;
  const presets = JSON.parse(loglab(['presets', '--json'])).map((p) => p.name);
  assert.ok(presets.length >= 20);
  for (const name of presets) {
    const lab = await open(page, `?preset=${name}&at=1ms`);
    await page.click('[data-testid="copy-link"]');
    const link = new URL(await page.inputValue('[data-testid="copied-link"]'));
    assert.equal(link.searchParams.get('preset'), name);
    assert.equal(link.searchParams.get('h'), lab.traceHash, name);
    const again = await open(page, link.search);
    assert.equal(again.traceHash, lab.traceHash, name);
    assert.equal(await page.locator('[data-testid="model-changed"]').count(), 0, name);
  }
});
