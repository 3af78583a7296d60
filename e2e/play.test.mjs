// Play shows something at once: every preset opens at its own speed (loglab presets --json),
// and from Play its headline event (a metric that becomes nonzero) appears within 10 s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveDist, openBrowser, loglab } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const presets = JSON.parse(loglab(['presets', '--json']));
const SPEED_NS = { '1us': 1e3, '10us': 1e4, '100us': 1e5, '1ms': 1e6, '10ms': 1e7, '100ms': 1e8 };

test('every preset has a speed and a headline event', () => {
  assert.ok(presets.length >= 20);
  for (const p of presets) {
    assert.ok(p.speed in SPEED_NS, `${p.name}: ${p.speed}`);
    assert.ok(p.headline && p.headline_metric, p.name);
  }
});

for (const p of presets) {
  test(`${p.name}: from Play, ${p.headline} within 10 s`, async () => {
    const { page } = browser;
    await page.goto(`${server.url}?preset=${p.name}`);
    await page.waitForSelector('#lab[data-ready="true"]', { timeout: 30000 });
    await page.waitForFunction(() => typeof window.loglab?.metrics === 'function');
    assert.equal(await page.inputValue('[data-testid="speed"]'), String(SPEED_NS[p.speed]), 'opens at its own speed');
    const started = Date.now();
    await page.click('[data-testid="play"]');
    await page.waitForFunction((k) => { const v = window.loglab.metrics()[k]; return v === true || v > 0; },
      p.headline_metric, { timeout: 10000, polling: 50 });
    const secs = (Date.now() - started) / 1000;
    await page.click('[data-testid="play"]');
    console.log(`${p.name}: ${p.headline_metric} after ${secs.toFixed(1)} s of Play at ${p.speed} per frame`);
  });
}
