// Each panel of the lab in a real headless Chromium: it renders, it says what kernel structure
// it shows, and it changes while the model plays. Screenshots of each go to e2e/artifacts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serveDist, openBrowser, ARTIFACTS } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); fs.mkdirSync(ARTIFACTS, { recursive: true }); });
after(async () => { await browser?.close(); await server?.close(); });

// Panel → (selector, the kernel structure its "what is this" line names).
const PANELS = {
  ring: ['.ring', /struct xlog_in_core/],
  logspace: ['[data-testid="logspace"]', /struct xlog\b/],
  devices: ['[data-testid="devices"]', /volatile cache/],
  timeline: ['[data-testid="timeline"]', /PREFLUSH/],
  plots: ['[data-testid="plots"]', /over time/i],
  journal: ['[data-testid="stats"]', /transactions/],
  cil: ['[data-testid="cil"]', /struct xfs_cil/],
  ail: ['[data-testid="ail"]', /struct xfs_ail/],
  tasks: ['[data-testid="tasks"]', /writer/],
};

// What a panel shows, as something comparable: its markup, and its canvas pixels if it has one.
const snapshot = (page, sel) => page.$eval(sel, (el) => {
  const c = el.querySelector('canvas');
  return el.innerHTML + (c ? c.toDataURL() : '');
});

test('each panel renders, names its kernel structure, and changes while playing', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=cil-throttle-32mb');
  await page.waitForSelector('#lab[data-ready="true"]');
  const ready = await page.evaluate(() => performance.getEntriesByName('lab-ready')[0]?.startTime);
  console.log(`first render (navigation start to the lab's first frame): ${ready?.toFixed(0)} ms`);
  assert.ok(ready > 0, 'the lab marks its first render');
  await page.selectOption('[data-testid="speed"]', { label: '1 ms / frame' });
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => BigInt(document.querySelector('#lab').dataset.simNs) > 20_000_000n, null, { timeout: 20000 });
  // Sample every panel while the run plays on: each must show more than one picture. (Two
  // fixed moments are not enough: on this preset every writer may be throttled at both.)
  const seen = {};
  for (const [name, [sel, what]] of Object.entries(PANELS)) {
    assert.match(await page.textContent(sel), what, `${name} says what it shows`);
    seen[name] = new Set([await snapshot(page, sel)]);
  }
  // To 400 ms: the first checkpoint completes at 307 ms, and only then has the AIL items.
  while (BigInt(await page.getAttribute('#lab', 'data-sim-ns')) < 400_000_000n) {
    for (const [name, [sel]] of Object.entries(PANELS)) seen[name].add(await snapshot(page, sel));
  }
  await page.click('[data-testid="play"]');
  for (const [name, [sel]] of Object.entries(PANELS)) {
    assert.ok(seen[name].size > 1, `${name} changed while playing`);
    await page.locator(sel).screenshot({ path: path.join(ARTIFACTS, `panel-${name}.png`) });
  }
  // The log-space zoom lays checkpoints out by LSN; the timeline groups records by checkpoint.
  assert.ok(Number(await page.getAttribute('[data-testid="logspace"]', 'data-checkpoints')) > 0);
  assert.ok(Number(await page.getAttribute('[data-testid="timeline"]', 'data-brackets')) > 0);
  assert.deepEqual(errors, []);
});

test('legacy flushes queue their iclog writes behind the block layer\'s one flush at a time', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=fsmark-create&flush=legacy&at=200ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const timeline = '[data-testid="timeline"]';
  assert.ok(Number(await page.getAttribute(timeline, 'data-flush-queued')) > 0, 'some iclog writes waited for another flush');
  assert.match(await page.textContent(timeline), /one\s+flush at a time/);
  // Hover the first row along its length until a bar names its queueing and its flush.
  const box = await page.locator(`${timeline} canvas`).boundingBox();
  let said = '';
  for (let x = box.x + box.width - 2; x > box.x + 2 && !/queued for the block layer/.test(said); x -= 4) {
    await page.mouse.move(x, box.y + box.height * 0.45);
    said = await page.textContent('[data-testid="timeline-hover"]');
  }
  assert.match(said, /write PREFLUSH\|FUA.*µs queued for the block layer's one flush at a time, [\d.]+ µs its flush/);
  await page.locator(timeline).screenshot({ path: path.join(ARTIFACTS, 'panel-timeline-flush-queue.png') });
  assert.deepEqual(errors, []);
});

test('a hidden panel is gone until shown again; the choice survives a change of scenario', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=fsync-heavy');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.check('[data-panel="plots"]'); // already shown: no change
  await page.uncheck('[data-panel="plots"]');
  assert.equal(await page.locator('[data-testid="plots"]').count(), 0);
  await page.selectOption('[data-testid="preset"]', 'sync-append');
  await page.waitForFunction(() => document.querySelector('#lab').dataset.preset === 'sync-append');
  assert.equal(await page.locator('[data-testid="plots"]').count(), 0, 'still hidden on the new scenario');
  await page.check('[data-panel="plots"]');
  assert.equal(await page.locator('[data-testid="plots"]').count(), 1);
  assert.deepEqual(errors, []);
});

test('keyboard only: ? opens the help, Escape closes it, Tab reaches every control', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=small-crash');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('?');
  await page.waitForSelector('[data-testid="help"]');
  assert.match(await page.textContent('[data-testid="help"]'), /to next flush/);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'help-close', 'focus moves into the help');
  await page.screenshot({ path: path.join(ARTIFACTS, 'help.png') });
  await page.keyboard.press('Escape');
  await page.waitForSelector('[data-testid="help"]', { state: 'detached' });
  // Tab from the top of the page to the play button, press it with Enter, and pause with Space.
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  let reached = false;
  const seen = new Set();
  for (let i = 0; i < 60 && !reached; i++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => document.activeElement?.dataset?.testid ?? document.activeElement?.tagName);
    seen.add(id);
    reached = id === 'play';
  }
  assert.ok(reached, `Tab reaches Play (visited ${[...seen].join(', ')})`);
  assert.ok(seen.has('preset'), 'the scenario picker is on the way');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="play"]').getAttribute('aria-pressed') === 'true');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="play"]').getAttribute('aria-pressed') === 'false');
  assert.deepEqual(errors, []);
});

test('with prefers-reduced-motion the page shows calm steps, not animation', async () => {
  const { page, errors } = browser;
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(server.url + '?preset=fsync-heavy');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.selectOption('[data-testid="speed"]', { label: '100 µs / frame' });
  const g0 = Number(await page.getAttribute('#lab', 'data-generation'));
  await page.click('[data-testid="play"]');
  await page.waitForTimeout(1500);
  await page.click('[data-testid="play"]');
  await page.waitForTimeout(100);
  const shown = Number(await page.getAttribute('#lab', 'data-generation')) - g0;
  const t = BigInt(await page.getAttribute('#lab', 'data-sim-ns'));
  console.log(`reduced motion: ${shown} frames shown in 1.5 s of play, ${Number(t) / 1e6} ms of virtual time`);
  assert.ok(t > 3_000_000n, 'the model still ran at the chosen speed');
  assert.ok(shown >= 2 && shown <= 12, `a few frames, not ~90 (${shown})`);
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  assert.deepEqual(errors, []);
});

test('on disks the devices panel says what a cache flush would wait for; flash has no such row', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=seed-log-size&at=1s');
  await page.waitForSelector('#lab[data-ready="true"]');
  const row = page.locator('[data-key="log-destage"]');
  await row.waitFor();
  assert.match(await row.textContent(), /cache flush|written out/);
  await page.locator('[data-testid="devices"]').screenshot({ path: path.join(ARTIFACTS, 'devices-hdd.png') });
  await page.goto(server.url + '?preset=fsync-heavy&at=5ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.locator('[data-key="log-cached"]').waitFor();
  assert.equal(await page.locator('[data-key="log-destage"]').count(), 0, 'flash pays at the flush instead');
  assert.deepEqual(errors, []);
});

test('the tasks legend counts the writers by what they wait for', async () => {
  const { page, errors } = browser;
  // 200 O_DSYNC appenders 40 ms in: most wait in flush_workqueue for the push in flight.
  await page.goto(server.url + '?preset=sync-append&at=40ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.waitForFunction(() => /earlier CIL pushes/.test(document.querySelector('[data-testid="task-legend"]')?.textContent ?? ''), null, { timeout: 20000 });
  const items = await page.locator('[data-testid="task-legend"] span').allTextContents();
  const total = items.reduce((sum, t) => sum + Number(t.split(' ')[0]), 0);
  assert.equal(total, await page.locator('[data-testid="task"]').count(), items.join(' | '));
  const counts = items.map((t) => Number(t.split(' ')[0]));
  assert.deepEqual(counts, [...counts].sort((a, b) => b - a), 'most writers first');
  await page.locator('[data-testid="tasks"]').screenshot({ path: path.join(ARTIFACTS, 'panel-tasks-sync-append.png') });
  assert.deepEqual(errors, []);
});

test('the CIL panel shows what the push check counts while the CPUs still hold their share (6.0+)', async () => {
  const { page, errors } = browser;
  const counted = '[data-testid="cil"] [data-key="cil-counted"]';
  // Creators and removers commit at different rates: the quiet CPUs' counts lag.
  await page.goto(server.url + '?preset=fsmark-create&workload=create-remove&tx_reads=2&at=120ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const m = (await page.textContent(counted)).match(/^(\d+) KiB of (\d+) KiB$/);
  assert.ok(m, `counted row: ${await page.textContent(counted)}`);
  assert.ok(Number(m[1]) < Number(m[2]), `the push check sees less than the context holds: ${m[0]}`);
  assert.match(await page.textContent('[data-testid="cil"]'), /folded past 512 KiB each/);
  // The bar shows the counted part inside what the context holds.
  const bar = (sel) => page.getAttribute(`[data-testid="cil"] ${sel}`, 'width').then(Number);
  assert.ok(await bar('[data-testid="cil-counted-bar"]') < await bar('rect:nth-of-type(2)'), 'counted is drawn inside used');
  await page.locator('[data-testid="cil"]').screenshot({ path: path.join(ARTIFACTS, 'panel-cil-counted.png') });
  // Before 6.0 one count serves: the row is not there.
  await page.goto(server.url + '?preset=fsmark-create&workload=create-remove&tx_reads=2&cil_space=global&at=120ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.locator(counted).count(), 0);
  assert.deepEqual(errors, []);
});

test('with a pool of CPUs the CIL panel shows the push worker waiting for one', async () => {
  const { page, errors } = browser;
  // Two CPUs for 16 creators: the woken push worker waits for a writer's create to end.
  await page.goto(server.url + '?preset=fsmark-create&cpus=2&at=288575us');
  await page.waitForSelector('#lab[data-ready="true"]');
  const workers = await page.locator('[data-testid="cil"] [data-key^="pusher-"]').allTextContents();
  assert.ok(workers.some((w) => /^waiting for a CPU \(runnable\), then /.test(w)), workers.join(' / '));
  assert.match(await page.textContent('[data-key="push-time"]'), /waiting for a CPU \d+%/);
  await page.locator('[data-testid="cil"]').screenshot({ path: path.join(ARTIFACTS, 'panel-cil-cpu-wait.png') });
  // A CPU per writer (no pool): the push worker never waits for one.
  await page.goto(server.url + '?preset=fsmark-create&at=288575us');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.doesNotMatch(await page.textContent('[data-testid="cil"]'), /waiting for a CPU/);
  assert.deepEqual(errors, []);
});

test('on this machine\'s disk the devices panel says when a host stall holds every request', async () => {
  const { page, errors } = browser;
  const stall = '[data-testid="devices"] [data-key="log-stall"]';
  const base = '?preset=cil-throttle-rhythm&device=vm-disk&cpus=2&ail_push=upstream&cil_pushers=4';
  // 353 ms: a stall under way (351.3-355.8 ms, found with the model; the Rust test checks
  // the requests and the moment).
  await page.goto(server.url + base + '&at=353ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.match(await page.textContent(stall), /^stalling now, [\d.]+ ms more: nothing completes until it ends.*\(about one per (54 ms|0\.65 s)/);
  await page.locator('[data-testid="devices"]').screenshot({ path: path.join(ARTIFACTS, 'panel-devices-stall.png') });
  // Devices modelled from parts have no host: no row.
  await page.goto(server.url + '?preset=cil-throttle-rhythm&at=100ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.locator(stall).count(), 0);
  assert.deepEqual(errors, []);
});

test('behind one hardware queue the devices panel says how many writes share the link', async () => {
  const { page, errors } = browser;
  const link = '[data-testid="devices"] [data-key="log-link"]';
  // 200 appenders' 128 KiB writes on this machine's disk fill its measured 1.2 GB/s link (the
  // Rust test the_device_view_shows_the_writes_sharing_a_one_queue_link checks the view).
  await page.goto(server.url + '?preset=seed-log-size&device=vm-disk&at=205ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const text = await page.textContent(link);
  const m = text.match(/^(\d+) writes moving their data, ([\d.]+) ms of it left at 1200 MB\/s: a write sent now shares the link with them \(one hardware queue\)$/);
  assert.ok(m && Number(m[1]) >= 2 && Number(m[2]) > 0, text);
  await page.locator('[data-testid="devices"]').screenshot({ path: path.join(ARTIFACTS, 'panel-devices-link.png') });
  // NVMe's queues are not one: no row.
  await page.goto(server.url + '?preset=fsync-heavy&at=100ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.locator(link).count(), 0);
  assert.deepEqual(errors, []);
});

test('on flash the devices panel says when a die is erasing a block', async () => {
  const { page, errors } = browser;
  const erase = '[data-testid="devices"] [data-key="log-erase"]';
  // 221.0 ms: the first block erase begins (found with the model; the Rust test
  // the_device_view_shows_a_flash_erase_under_way checks the view).
  await page.goto(server.url + '?preset=fsync-heavy&writers=32&at=222ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.match(await page.textContent(erase),
    /^1 die erasing, [\d.]+ ms more: a cache flush or FUA write whose pages need that die waits for it \(1 block of 24 MiB erased so far, one for every 24 MiB programmed, 3\.5 ms each on one of its 32 dies in turn\)$/);
  await page.locator('[data-testid="devices"]').screenshot({ path: path.join(ARTIFACTS, 'panel-devices-erase.png') });
  await page.goto(server.url + '?preset=fsync-heavy&writers=32&at=100ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.match(await page.textContent(erase), /^none under way; 0 blocks of 24 MiB erased so far/);
  // A measured device shows what its host's media did, erases included: no row.
  await page.goto(server.url + '?preset=fsync-heavy&device=vm-disk&at=100ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.locator(erase).count(), 0);
  assert.deepEqual(errors, []);
});

test('on disks the devices panel says how long each disk\'s heads are booked', async () => {
  const { page, errors } = browser;
  const act = '[data-testid="devices"] [data-key="log-actuator"]';
  // Source thread 000's 4 HDDs at 500 ms: reads and commit records queued on each disk's heads.
  await page.goto(server.url + '?preset=seed-log-size&at=500ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const text = await page.textContent(act);
  assert.match(text, /^disk 0 ([\d.]+ ms|idle), disk 1 ([\d.]+ ms|idle), disk 2 ([\d.]+ ms|idle), disk 3 ([\d.]+ ms|idle): still queued on each disk's heads/, text);
  assert.ok(/[\d.]+ ms/.test(text), `some disk is busy: ${text}`);
  await page.locator('[data-testid="devices"]').screenshot({ path: path.join(ARTIFACTS, 'panel-devices-actuators.png') });
  // One disk: one line; flash has no heads.
  await page.goto(server.url + '?preset=seed-log-size&device=hdd&at=500ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.match(await page.textContent(act), /^(busy for [\d.]+ ms more with the reads and write-through writes queued for it|idle: a read or write-through write starts at once)/);
  await page.goto(server.url + '?preset=fsync-heavy&at=100ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.locator(act).count(), 0);
  // SATA does not queue a cache flush: at 600 ms one destaging the disks' caches (from
  // 590.9 ms, 51.9 ms long; the Rust test the_device_view_shows_a_sata_flush_holding_the_queue)
  // holds every command back. NVMe queues flushes: no row.
  const hold = '[data-testid="devices"] [data-key="log-flush-hold"]';
  assert.equal(await page.locator(hold).count(), 0);
  await page.goto(server.url + '?preset=seed-log-size&at=600ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.match(await page.textContent(hold), /^a cache flush holds the queue for [\d.]+ ms more: no read or write reaches the drive until it is done \(SATA: FLUSH CACHE is not queued\)$/);
  await page.locator('[data-testid="devices"]').screenshot({ path: path.join(ARTIFACTS, 'panel-devices-flush-hold.png') });
  assert.deepEqual(errors, []);
});
