// Links open their scenario: a preset link with overrides and `at=` lands on the very state
// `loglab run --until` computes natively (same trace hash); a bad link says what is wrong.
// The native side is the debug binary `cargo test` has just built.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveDist, openBrowser, nativeRun } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

/** The native run of `query` stopped at `at`, as `loglab run --url … --until … --json`. */
const native = nativeRun;

async function open(query) {
  const { page } = browser;
  await page.goto(server.url + query);
  await page.waitForSelector('#lab[data-ready="true"]', { timeout: 30000 });
  const lab = await page.$eval('#lab', (e) => ({ ...e.dataset }));
  return { page, lab };
}

const cases = [
  ['?preset=small-crash&at=5ms', 'small-crash', '5ms', 5_000_000n],
  ['?preset=fsmark-create&writers=4&log_size=32MiB&at=3ms', 'fsmark-create', '3ms', 3_000_000n],
  ['?preset=throttle-v5.9-hang&at=2ms', 'throttle-v5.9-hang', '2ms', 2_000_000n],
  ['?preset=series-v1-external-log&flush=upstream&at=4ms', 'series-v1-external-log', '4ms', 4_000_000n],
];

for (const [query, preset, at, ns] of cases) {
  test(`${query} opens ${preset} paused at ${at} on the native run's trace hash`, async () => {
    const { lab } = await open(query);
    assert.equal(lab.preset, preset);
    assert.equal(BigInt(lab.simNs), ns);
    const n = native(query, at);
    assert.equal(lab.traceHash, n.trace_hash, 'browser and native ran the same events');
    assert.equal(Number(lab.events), n.events);
    assert.equal(await browser.page.locator('[data-testid="error"]').count(), 0);
  });
}

test('a bad link names the key and value and opens the default scenario', async () => {
  const { page, lab } = await open('?preset=fsmark-create&writers=lots');
  const msg = await page.textContent('[data-testid="error"]');
  assert.match(msg, /writers/);
  assert.match(msg, /'lots'/);
  assert.equal(lab.preset, 'fsync-heavy');
  assert.ok(await page.locator('[data-testid="iclog"]').count() > 0, 'the default scenario is on screen');
});

test('link text is shown as text and never runs', async () => {
  const img = '<img src=x onerror=window.__pwned=1>';
  const script = '<script>window.__pwned=2</script>';
  for (const [query, shown] of [
    [`?writers=${encodeURIComponent(img)}`, img],
    [`?${encodeURIComponent(script)}=1`, script],
  ]) {
    const { page } = await open(query);
    const msg = await page.textContent('[data-testid="error"]');
    assert.ok(msg.includes(shown), msg);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.locator('[data-testid="error"] *').count(), 0, 'the message is one text node');
  }
});

test('the picker and the settings editor change the scenario and the address follows', async () => {
  const { page } = await open('');
  await page.selectOption('[data-testid="preset"]', 'cil-throttle-32mb');
  await page.waitForFunction(() => document.querySelector('#lab').dataset.preset === 'cil-throttle-32mb');
  await page.waitForFunction(() => location.search === '?preset=cil-throttle-32mb');
  assert.match(await page.textContent('[data-testid="preset-about"]'), /source thread 003/);
  // A bug preset offers its fix; the fix is a setting in the link.
  await page.selectOption('[data-testid="preset"]', 'series-v1-external-log');
  await page.waitForSelector('[data-testid="fixed"]');
  await page.check('[data-testid="fixed"]');
  await page.waitForFunction(() => location.search === '?preset=series-v1-external-log&flush=upstream');
  assert.equal(await page.isChecked('[data-testid="fixed"]'), true);
  // The editor validates as the CLI does, says why beside the field and keeps the text.
  await page.click('[data-testid="settings"] summary');
  await page.fill('[data-testid="set-writers"]', 'lots');
  await page.press('[data-testid="set-writers"]', 'Enter');
  const err = await page.textContent('[data-testid="field-error"]');
  assert.match(err, /writers: 'lots' is not a whole number/);
  assert.equal(await page.inputValue('[data-testid="set-writers"]'), 'lots');
  assert.equal(await page.evaluate(() => location.search), '?preset=series-v1-external-log&flush=upstream');
  await page.fill('[data-testid="set-log_size"]', '1MiB');
  await page.press('[data-testid="set-log_size"]', 'Enter');
  assert.match(await page.locator('.field.bad').last().textContent(), /log_size: 1048576 is out of range/);
  await page.fill('[data-testid="set-log_size"]', '16MiB');
  await page.press('[data-testid="set-log_size"]', 'Enter');
  await page.waitForFunction(() => location.search.includes('log_size=16MiB'));
  assert.match(await page.textContent('header .sub'), /16 MiB log/);
  // The address it wrote reopens the same scenario.
  const url = await page.evaluate(() => location.href);
  await page.goto(url);
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.match(await page.textContent('header .sub'), /preset series-v1-external-log: .*16 MiB log/);
});

test('the page runs under its Content-Security-Policy: nothing of its own is refused, injected script is', async () => {
  const { page, errors } = browser;
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const { lab } = await open('?preset=fsmark-create&at=44500us');
  assert.equal(lab.preset, 'fsmark-create', 'the wasm app started under the policy');
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+' 'wasm-unsafe-eval'/);
  assert.doesNotMatch(csp, /unsafe-eval'(?<!wasm-unsafe-eval')|script-src[^;]*unsafe-inline/);
  await page.click('[data-testid="play"]');
  await page.waitForTimeout(300);
  await page.click('[data-testid="play"]');
  // An inline script injected now is refused.
  const ran = await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__injected = 1';
    document.body.appendChild(s);
    return window.__injected;
  });
  assert.equal(ran, undefined, 'the policy blocks inline script');
  const violations = await page.evaluate(() => window.__cspViolations);
  assert.ok(violations.length === 1 && violations[0].startsWith('script-src'), `only the injected script was refused: ${violations}`);
  assert.ok(errors.every((e) => /Content Security Policy/.test(e)), `no other errors: ${errors}`);
  errors.length = 0;
});
