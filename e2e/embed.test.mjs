// A lab a course page can embed: the static site served under a sub-path (as a course hosts
// it), an embed=1 link inside an iframe of docs/course-page.html, and window.loglab driving
// the lab from a script (load, seek, step, play, pause, now, hash, metrics, view, link, on),
// checked against the native CLI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveDist, openBrowser, nativeRun, loglab, ORIGIN } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SUB = '/os/loglab/';
let server, browser;
before(async () => {
  server = await serveDist(SUB, { '/os/index.html': path.join(here, '..', 'docs', 'course-page.html') });
  browser = await openBrowser();
});
after(async () => { await browser?.close(); await server?.close(); });

async function ready(page) {
  await page.waitForSelector('#lab[data-ready="true"]', { timeout: 60000 });
  await page.waitForFunction(() => typeof window.loglab?.hash === 'function');
}

test('the site works from a sub-path: the lab, its links and its Web Workers', async () => {
  const { page, errors } = browser;
  await page.goto(`${server.url}?preset=small-crash&at=5ms`);
  await ready(page);
  assert.equal(await page.$eval('#lab', (e) => e.dataset.traceHash), nativeRun('?preset=small-crash&at=5ms', '5ms').trace_hash);
  // Copy link stays under the sub-path.
  await page.click('[data-testid="copy-link"]');
  assert.ok((await page.inputValue('[data-testid="copied-link"]')).startsWith(server.url + '?'));
  // The crash heat map's workers load the lab's module from the sub-path too.
  await page.click('[data-testid="crash-explore"]');
  await page.waitForFunction(() => {
    const h = document.querySelector('[data-testid="crash-heatmap"]');
    return h && h.dataset.points === h.dataset.total && Number(h.dataset.states) > 0;
  }, null, { timeout: 60000 });
  assert.deepEqual(errors.filter((e) => !/Content Security Policy/.test(e)), []);
});

test('an embed=1 link inside a course page\'s iframe shows its panels without the editor, driven by the page', async () => {
  const { page } = browser;
  await page.goto(`${server.origin}/os/index.html`);
  const frame = page.frameLocator('#lab');
  await frame.locator('#lab[data-ready="true"]').waitFor({ timeout: 60000 });
  assert.equal(await frame.locator('#lab').getAttribute('data-embed'), 'true');
  assert.equal(await frame.locator('[data-testid="preset"]').count(), 0, 'no scenario editor');
  assert.equal(await frame.locator('[data-testid="panels"]').count(), 0, 'no panel picker');
  assert.equal(await frame.locator('[data-testid="play"]').count(), 1, 'Play stays');
  assert.equal(await frame.locator('[data-testid="cil"]').count(), 1);
  assert.equal(await frame.locator('[data-testid="tasks"]').count(), 1);
  assert.equal(await frame.locator('[data-testid="iclog"]').count(), 0, 'only the chosen panels');
  const full = await frame.locator('[data-testid="open-full"]').getAttribute('href');
  assert.ok(full.includes('preset=cil-throttle-32mb') && !full.includes('embed'), full);
  // The course page's button drives the lab through its API.
  await page.waitForFunction(() => document.getElementById('readout').textContent.includes('throttle waits'));
  await page.click('#jump');
  const inner = page.frames().find((f) => f.url().includes('/os/loglab/'));
  await inner.waitForFunction(() => document.querySelector('#lab').dataset.simNs === '400000000');
  const text = await page.textContent('#readout');
  const n = nativeRun('?preset=cil-throttle-32mb', '400ms');
  assert.equal(text, `t = 400.0 ms: ${n.cil_throttle_waits} throttle waits so far`);
  assert.equal(await inner.$eval('#lab', (e) => e.dataset.traceHash), n.trace_hash);
});

test('window.loglab: load, seek, step, now, hash, metrics, view, link, play, pause and on agree with the CLI', async () => {
  const { page } = browser;
  await page.goto(server.url);
  await ready(page);
  // load a scenario object, then seek by a duration: the hash is `loglab run --until`'s.
  await page.evaluate(() => window.loglab.load({ preset: 'fsmark-create', set: { writers: 4, log_size: '32MiB' } }));
  await page.waitForFunction(() => document.querySelector('#lab').dataset.preset === 'fsmark-create'
    && document.querySelector('header .sub').textContent.includes(' 4 writers'));
  assert.equal(await page.evaluate(() => window.loglab.seek('3ms')), 3_000_000);
  const n = nativeRun('?preset=fsmark-create&writers=4&log_size=32MiB', '3ms');
  assert.equal(await page.evaluate(() => window.loglab.hash()), n.trace_hash);
  assert.equal(await page.evaluate(() => window.loglab.now()), 3_000_000);
  // metrics() has run --json's keys and values.
  const m = await page.evaluate(() => window.loglab.metrics());
  assert.deepEqual(Object.keys(m).sort(), Object.keys(n).sort());
  assert.equal(m.transactions, n.transactions);
  assert.equal(m.trace_hash, n.trace_hash);
  // seek by nanoseconds, back in time.
  await page.evaluate(() => window.loglab.seek(1_000_000));
  assert.equal(await page.evaluate(() => window.loglab.hash()), nativeRun('?preset=fsmark-create&writers=4&log_size=32MiB', '1ms').trace_hash);
  // view() is the lab's view of the simulation, as plain data.
  const view = await page.evaluate(() => window.loglab.view());
  assert.equal(view.now_ns, 1_000_000);
  assert.ok(Array.isArray(view.iclogs) && view.iclogs.length > 0, Object.keys(view).join(','));
  // step(n) runs n events.
  const before = Number(await page.$eval('#lab', (e) => e.dataset.events));
  const after = await page.evaluate(() => window.loglab.step(25));
  assert.equal(after, before + 25);
  // link() is Copy link's: it reopens on the same hash.
  const link = await page.evaluate(() => window.loglab.link());
  assert.ok(link.startsWith(server.url) && link.includes('&h='), link);
  // on('frame') hears Play; pause stops it.
  await page.evaluate(() => { window.__frames = 0; window.loglab.on('frame', () => { window.__frames += 1; }); });
  await page.evaluate(() => window.loglab.play());
  await page.waitForFunction(() => window.__frames >= 5);
  await page.evaluate(() => window.loglab.pause());
  await page.waitForFunction(() => document.querySelector('[data-testid="play"]').getAttribute('aria-pressed') === 'false');
  // Bad input is an exception naming what is wrong; the lab goes on.
  const bad = await page.evaluate(() => {
    const out = [];
    for (const f of [() => window.loglab.seek('soon'), () => window.loglab.load({ preset: 'nope' }),
      () => window.loglab.load('?preset=small-crash&writers=lots'), () => window.loglab.on('explode', () => {})]) {
      try { f(); out.push('no error'); } catch (e) { out.push(String(e)); }
    }
    return out;
  });
  assert.match(bad[0], /t: 'soon' is not a duration/);
  assert.match(bad[1], /unknown preset 'nope'/);
  assert.match(bad[2], /writers: 'lots' is not a whole number/);
  assert.match(bad[3], /on: 'explode' is not an event/);
  assert.equal(await page.$eval('#lab', (e) => e.dataset.preset), 'fsmark-create');
  // A link string loads too, at its moment.
  await page.evaluate(() => window.loglab.load('?preset=small-crash&at=5ms'));
  await page.waitForFunction(() => document.querySelector('#lab').dataset.preset === 'small-crash');
  assert.equal(await page.evaluate(() => window.loglab.hash()), nativeRun('?preset=small-crash&at=5ms', '5ms').trace_hash);
  void loglab; void ORIGIN;
});
