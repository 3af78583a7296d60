// The lab page in a real headless Chromium: it loads, runs the model, and plays.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serveDist, openBrowser, ARTIFACTS, nativeRun } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const simNs = async (page) => BigInt(await page.getAttribute('#lab', 'data-sim-ns'));

test('the lab loads with the wasm model running and no console errors', async () => {
  const { page, errors } = browser;
  await page.goto(server.url);
  await page.waitForSelector('#lab[data-ready="true"]', { timeout: 30000 });
  assert.equal(await page.title(), 'Log Lab — the XFS journal, live');
  assert.match(await page.getAttribute('#lab', 'data-trace-hash'), /^[0-9a-f]{16}$/);
  assert.deepEqual(errors, []);
});

test('the ring shows the configured number of iclogs, one of them the head', async () => {
  const { page } = browser;
  const configured = Number(await page.getAttribute('#lab', 'data-iclogs'));
  assert.equal(configured, 8, 'the default preset has 8 iclogs');
  assert.equal(await page.locator('[data-testid="iclog"]').count(), configured);
  assert.equal(await page.locator('[data-testid="iclog"][data-head="true"]').count(), 1);
  assert.ok(await page.locator('[data-testid="logbar"]').isVisible(), 'the on-disk log bar is shown');
  const states = await page.locator('[data-testid="iclog"]').evaluateAll((els) => els.map((e) => e.dataset.state));
  assert.ok(states.every((s) => ['ACTIVE', 'WANT_SYNC', 'SYNCING', 'DONE_SYNC', 'CALLBACK', 'DIRTY'].includes(s)), states.join());
});

test('play advances simulated time and the journal commits transactions; pause stops it', async () => {
  const { page, errors } = browser;
  const t0 = await simNs(page);
  await page.selectOption('[data-testid="speed"]', { label: '1 ms / frame' });
  await page.click('[data-testid="play"]');
  await page.waitForFunction((t) => BigInt(document.querySelector('#lab').dataset.simNs) > BigInt(t) + 20_000_000n, t0.toString(), { timeout: 20000 });
  await page.click('[data-testid="play"]'); // pause
  const paused = await simNs(page);
  await page.waitForTimeout(300);
  assert.equal(await simNs(page), paused, 'time stands still while paused');
  const tx = Number(await page.textContent('[data-key="transactions"]'));
  assert.ok(tx > 0, `transactions committed: ${tx}`);
  assert.ok(Number(await page.textContent('[data-key="iclog writes"]')) > 0);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'lab.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

test('step advances by exactly one slice', async () => {
  const { page } = browser;
  await page.selectOption('[data-testid="speed"]', { label: '100 µs / frame' });
  const t0 = await simNs(page);
  await page.click('[data-testid="step"]');
  await page.waitForFunction((t) => document.querySelector('#lab').dataset.simNs !== t, t0.toString());
  assert.equal(await simNs(page), t0 + 100_000n);
});

test('the keyboard alone plays, pauses, steps and changes speed', async () => {
  const { page, errors } = browser;
  await page.goto(server.url);
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  const t0 = await simNs(page);
  await page.keyboard.press('n');
  await page.waitForFunction((t) => document.querySelector('#lab').dataset.simNs !== t, t0.toString());
  assert.equal(await simNs(page), t0 + 10_000n, 'n steps by one speed step (10 µs at the default speed)');
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  assert.equal(await page.$eval('[data-testid="speed"]', (s) => s.selectedOptions[0].textContent), '1 ms / frame');
  await page.keyboard.press(' ');
  await page.waitForFunction(() => document.querySelector('[data-testid="play"]').getAttribute('aria-pressed') === 'true');
  const t1 = await simNs(page);
  await page.waitForFunction((t) => BigInt(document.querySelector('#lab').dataset.simNs) > BigInt(t) + 5_000_000n, t1.toString(), { timeout: 20000 });
  await page.keyboard.press(' ');
  await page.waitForFunction(() => document.querySelector('[data-testid="play"]').getAttribute('aria-pressed') === 'false');
  const paused = await simNs(page);
  await page.waitForTimeout(200);
  assert.equal(await simNs(page), paused, 'paused by the keyboard');
  assert.deepEqual(errors, []);
});

test('frames are drawn per animation frame with an event budget (frame times reported)', async () => {
  const { page } = browser;
  await page.goto(server.url + '?preset=sync-append&writers=200');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.selectOption('[data-testid="speed"]', { label: '1 ms / frame' });
  await page.click('[data-testid="play"]');
  // Chromium's own frame timing: script time per animation frame, measured over 3 s of play.
  const stats = await page.evaluate(() => new Promise((resolve) => {
    const gaps = [];
    let last = performance.now();
    const gens = [];
    function f(now) {
      gaps.push(now - last); last = now;
      gens.push(Number(document.querySelector('#lab').dataset.generation));
      if (gaps.length < 180) requestAnimationFrame(f); else resolve({ gaps, gens });
    }
    requestAnimationFrame(f);
  }));
  await page.click('[data-testid="play"]');
  const sorted = [...stats.gaps.slice(5)].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length * 0.5)], p95 = sorted[Math.floor(sorted.length * 0.95)];
  console.log(`frame interval with 200 writers at 1 ms/frame: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms over ${sorted.length} frames`);
  const scriptP95 = await page.getAttribute('#lab', 'data-frame-ms-p95');
  console.log(`model step + frame build per animation frame, 200 writers at 1 ms/frame: p95 ${scriptP95} ms (the 8 ms goal includes rendering, not measured here)`);
  const advanced = stats.gens[stats.gens.length - 1] - stats.gens[0];
  assert.ok(advanced > 100, `the lab published a frame on most animation frames (${advanced} of 180)`);
});

test('the AIL panel shows xfsaild writing inodes back with their cluster', async () => {
  const { page, errors } = browser;
  // The first checkpoint completes at 307 ms (the seed kernel's SATA SSD flushes after every
  // FUA write), xfsaild's first writes are done by 872 ms.
  await page.goto(server.url + '?preset=cil-throttle-32mb&at=1000ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const [, items, writes] = (await page.textContent('[data-key="ail-written"]')).match(/^(\d+) items in (\d+) writes$/);
  assert.ok(Number(writes) > 0 && Number(items) >= 8 * Number(writes), `${items} items in ${writes} writes`);
  assert.match(await page.textContent('[data-key="ail-pass"]'), /upstream \(6\.11\+\)/);
  assert.match(await page.textContent('[data-testid="ail"]'), /items per write: an inode is written with the other dirty inodes/);
  await page.locator('[data-testid="ail"]').screenshot({ path: path.join(ARTIFACTS, 'panel-ail-cluster.png') });
  assert.deepEqual(errors, []);
});

test('the AIL panel says who sets the push target, how much of the log the AIL spans, and when a wakeup was lost', async () => {
  const { page, errors } = browser;
  // Source thread 003's kernel (5.7): reservations push the AIL.
  await page.goto(server.url + '?preset=cil-throttle-32mb&at=300ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.match(await page.textContent('[data-key="ail-push"]'), /^reservations \(before 6\.11\)/);
  // On NVMe, a new target came at 271.8 ms while xfsaild ran a pass (to 272.7 ms): that
  // wakeup is lost, and the target waits out xfsaild's sleep to the next pass (321.8 ms; the
  // Rust test the_ail_view_shows_a_lost_wakeup_until_the_next_pass).
  await page.goto(server.url + '?preset=cil-throttle-32mb&device=nvme&at=273ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const state = await page.textContent('[data-key="ail-state"]');
  assert.match(state, /^asleep after its pass: next pass in 48\.8 ms\. A wakeup came during its last pass and was lost/, state);
  await page.locator('[data-testid="ail"]').screenshot({ path: path.join(ARTIFACTS, 'panel-ail-lost-wake.png') });
  // 6.11+: xfsaild pushes only once the AIL spans three quarters of the log, but the
  // reservations of the writers at work take the rest first: at 0.855 s the AIL spans half
  // of it as the grant head runs out, and at 0.9 s, after the writers slept and pushed
  // everything, far less.
  const span = async (at) => {
    await page.goto(server.url + `?preset=cil-throttle-rhythm&cpus=2&ail_push=upstream&at=${at}`);
    await page.waitForSelector('#lab[data-ready="true"]');
    assert.match(await page.textContent('[data-key="ail-push"]'), /^xfsaild \(6\.11\+\)/);
    return Number((await page.textContent('[data-key="ail-span"]')).match(/^([\d.]+)% of the log/)[1]);
  };
  const full = await span('855ms');
  await page.locator('[data-testid="ail"]').screenshot({ path: path.join(ARTIFACTS, 'panel-ail-span.png') });
  const after = await span('900ms');
  assert.ok(full > 45 && after < full - 25, `AIL span ${full}% before the writers slept, ${after}% after`);
  // What fills the rest: the 16 creators on 2 CPUs each hold their reservation while they
  // work or wait for a CPU (tx_work=inside), and the log-space panel says how much.
  await page.goto(server.url + '?preset=cil-throttle-rhythm&cpus=2&ail_push=upstream&at=500ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const held = await page.textContent('[data-key="grant-in-tx"]');
  assert.match(held, /^16 writers inside their transactions hold \d+ KiB of the reserve grant head: xfs_trans_alloc reserves/, held);
  assert.ok(Number(held.match(/hold (\d+) KiB/)[1]) > 16 * 400, held);
  await page.locator('[data-testid="logspace"]').screenshot({ path: path.join(ARTIFACTS, 'panel-logspace-in-tx.png') });
  // The tasks panel shows who holds each of the 2 CPUs and who waits: with cpu_model=kernel,
  // xfsaild and the push worker among them.
  await page.goto(server.url + '?preset=cil-throttle-rhythm&cpus=2&cpu_model=kernel&at=500ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const cpus = await page.locator('[data-testid="cpu"]').allTextContents();
  assert.equal(cpus.length, 2, cpus.join(' / '));
  // Each CPU has its own run queue with cpu_model=kernel: each chip says how many wait on it,
  // and together they are the runnable line's count.
  assert.ok(cpus.every((c) => /^CPU [01]: (writer \d+|push worker \d+ \(kernel thread\)|xfsaild \(kernel thread\)) · \d+ queued$/.test(c)), cpus.join(' / '));
  const runnable = await page.textContent('[data-testid="runnable"]');
  assert.match(runnable, /^runnable \(\d+ waiting, queue by queue\): (writer \d+|push worker \d+|xfsaild)/);
  const queued = cpus.map((c) => Number(c.match(/(\d+) queued$/)[1])).reduce((a, b) => a + b, 0);
  assert.equal(queued, Number(runnable.match(/^runnable \((\d+) waiting/)[1]), `${cpus.join(' / ')} | ${runnable}`);
  await page.locator('[data-testid="tasks"]').screenshot({ path: path.join(ARTIFACTS, 'panel-tasks-cpus.png') });
  // agi_lock=on: creates asleep on their AG's AGI buffer lock, and who holds it.
  await page.goto(server.url + '?preset=cil-throttle-rhythm&cpus=2&cpu_model=kernel&agi_lock=on&at=300ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const asleep = page.locator('[data-testid="task"][aria-label$="AGI buffer lock"]');
  assert.ok(await asleep.count() > 0, 'some create sleeps on its AGI at 300 ms');
  await asleep.first().click();
  assert.match(await page.textContent('[data-testid="why"]'), /xfs_buf_lock on AG \d+'s AGI \(xfs_dialloc\): held by writer \d+/);
  await page.locator('[data-testid="tasks"]').screenshot({ path: path.join(ARTIFACTS, 'panel-tasks-agi.png') });
  assert.deepEqual(errors, []);
});

test('the CIL, log space and device panels show the throttle at work', async () => {
  const { page, errors } = browser;
  // 400 ms: past the first checkpoint (307 ms), the second being pushed.
  await page.goto(server.url + '?preset=cil-throttle-32mb&at=400ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const cil = page.locator('[data-testid="cil"]');
  assert.match(await cil.textContent(), /struct xfs_cil/);
  assert.ok(Number(await page.textContent('[data-key="throttle-depth"]')) > 0, 'writers wait on xc_push_wait at 150 ms');
  // Why they wait: the next push is queued behind the one still running (source thread 003's delayed
  // push), and the longest waits so far are shown.
  assert.match(await page.textContent('[data-key="push-queued"]'), /^waiting \d+\.\d ms$/);
  assert.match(await cil.textContent(), /push worker 0.*running \d+\.\d ms/);
  const [dispatch, run] = (await page.textContent('[data-key="push-longest"]')).match(/[\d.]+/g).map(Number);
  assert.ok(dispatch > 10 && run >= dispatch, `a push waited for the running one: ${dispatch} ms, ${run} ms`);
  // And the running push itself waits: nearly all its time is spent waiting for free iclogs.
  const spent = await page.textContent('[data-key="push-time"]');
  assert.match(spent, /^[\d.]+ ms in all: waiting for a free iclog (9\d|100)%, on a CPU \d+%/, spent);
  assert.match(await page.textContent('[data-testid="devices"]'), /PREFLUSH\|FUA/);
  assert.match(await page.textContent('[data-testid="ail"]'), /struct xfs_ail/);
  assert.match(await page.textContent('[data-key="ail-tail"]'), /^\d+:\d+$/, 'the AIL holds the tail');
  assert.match(await page.textContent('[data-testid="noiclogs"]'), /\d+ waiting for a free iclog \(noiclogs\)/);
  // Upstream fsyncs: forced iclogs carry FLUSH|FUA and name the checkpoints they commit.
  await page.goto(server.url + '?preset=fsync-heavy&at=3ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.equal(await page.locator('[data-key="push-queued"]').count(), 0, 'four idle workers take every push at once');
  const marks = await page.locator('[data-testid="iclog-marks"]').evaluateAll((els) => els.map((e) => e.dataset.marks));
  assert.ok(marks.some((m) => /^FLUSH FUA commits \d+(–\d+)?$/.test(m)), marks.join(' / '));
  assert.match(await page.locator('[data-testid="logbar"]').locator('..').textContent(), /reserve grant head: cycle 1/);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'panels.png'), fullPage: true });
  assert.deepEqual(errors, []);
});

test('the flush timeline tells legacy from upstream at a glance and names what a bar carries', async () => {
  const { page, errors } = browser;
  const counts = {};
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  for (const flush of ['legacy', 'upstream']) {
    await page.goto(server.url + `?preset=fsmark-create&flush=${flush}&at=40ms&speed=10us`);
    await page.waitForSelector('#lab[data-ready="true"]');
    const tl = page.locator('[data-testid="timeline"]');
    counts[flush] = [Number(await tl.getAttribute('data-log-writes')), Number(await tl.getAttribute('data-preflush'))];
    await tl.screenshot({ path: path.join(ARTIFACTS, `timeline-${flush}.png`) });
  }
  const [lw, lp] = counts.legacy, [uw, up] = counts.upstream;
  assert.ok(lw > 0 && lp === lw, `legacy: every log write carries PREFLUSH (${lp} of ${lw})`);
  assert.ok(uw > lw && up < uw / 4, `upstream: more, smaller-cost writes, few flushed (${up} of ${uw})`);
  const box = await page.locator('[data-testid="timeline"] canvas').boundingBox();
  await page.mouse.move(box.x + box.width * 0.8, box.y + 18);
  await page.waitForFunction(() => /log record from iclog \d+ at LSN \d+:\d+/.test(document.querySelector('[data-testid="timeline-hover"]').textContent));
  assert.deepEqual(errors, []);
});

test('selecting a blocked writer explains its wait as a chain of kernel objects', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=cil-throttle-32mb&at=150ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const tasks = page.locator('[data-testid="task"]');
  assert.equal(await tasks.count(), 16);
  await tasks.first().focus();
  await page.keyboard.press('Enter'); // keyboard-only selection
  const why = await page.textContent('[data-testid="why"]');
  assert.match(why, /writer 0 is blocked/);
  assert.match(why, /xc_push_wait: the CIL holds \d+ KiB/);
  assert.match(why, /push worker 0|l_flush_wait/);
  await page.locator('[data-testid="tasks"]').screenshot({ path: path.join(ARTIFACTS, 'tasks.png') });
  await tasks.first().click();
  assert.equal(await page.locator('[data-testid="why"]').count(), 0, 'a second press deselects');
  assert.deepEqual(errors, []);
});

test('step to the next flush, throttle wait or checkpoint stops on that moment', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=cil-throttle-32mb');
  await page.waitForSelector('#lab[data-ready="true"]');
  const ns = async () => BigInt(await page.getAttribute('#lab', 'data-sim-ns'));
  await page.click('[data-testid="step-to-flush"]');
  await page.waitForFunction(() => document.querySelector('#lab').dataset.simNs !== '0');
  const t1 = await ns();
  await page.click('[data-testid="step-to-throttlewait"]');
  await page.waitForFunction((t) => BigInt(document.querySelector('#lab').dataset.simNs) > BigInt(t), t1.toString());
  assert.ok(Number(await page.textContent('[data-key="throttle-depth"]')) >= 1, 'a committer now waits on xc_push_wait');
  const t2 = await ns();
  await page.keyboard.press('c');
  await page.waitForFunction((t) => BigInt(document.querySelector('#lab').dataset.simNs) > BigInt(t), t2.toString());
  assert.ok(Number(await page.textContent('[data-key="checkpoints"]')) >= 1, 'a checkpoint completed');
  assert.deepEqual(errors, []);
});

test('step back and the scrubber land on the same state as a straight run', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=small-crash');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.selectOption('[data-testid="speed"]', { label: '1 ms / frame' });
  const hash = () => page.getAttribute('#lab', 'data-trace-hash');
  const ns = async () => BigInt(await page.getAttribute('#lab', 'data-sim-ns'));
  const seen = {};
  for (let i = 1; i <= 6; i++) {
    await page.click('[data-testid="step"]');
    await page.waitForFunction((t) => document.querySelector('#lab').dataset.simNs === t, String(i * 1_000_000));
    seen[i] = await hash();
  }
  await page.click('[data-testid="step-back"]');
  await page.waitForFunction(() => document.querySelector('#lab').dataset.simNs === '5000000');
  assert.equal(await hash(), seen[5], 'one step back is the state after five steps');
  await page.keyboard.press('b');
  await page.waitForFunction(() => document.querySelector('#lab').dataset.simNs === '4000000');
  assert.equal(await hash(), seen[4]);
  // Scrub to 2.5 ms: the same hash as the native run to that instant.
  await page.$eval('[data-testid="scrub"]', (el) => { el.value = '2500'; el.dispatchEvent(new Event('change', { bubbles: true })); });
  await page.waitForFunction(() => document.querySelector('#lab').dataset.simNs === '2500000');
  assert.equal(await ns(), 2_500_000n);
  const target = process.env.CARGO_TARGET_DIR ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', 'target');
  const bin = ['debug', 'release'].map((p) => path.join(target, p, 'loglab')).find((f) => fs.existsSync(f));
  const native = JSON.parse(execFileSync(bin, ['run', '--preset', 'small-crash', '--until', '2500us', '--json']).toString());
  assert.equal(await hash(), native.trace_hash, 'scrubbed back to the straight run\'s state');
  // And forward again past where it was.
  await page.click('[data-testid="step"]');
  await page.waitForFunction(() => document.querySelector('#lab').dataset.simNs === '3500000');
  assert.deepEqual(errors, []);
});

test('a watchpoint pauses the run on the event that makes it true', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=cil-throttle-32mb');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.selectOption('[data-testid="watch-kind"]', 'throttle');
  await page.fill('[data-testid="watch-number"]', '2');
  await page.press('[data-testid="watch-number"]', 'Tab');
  await page.click('[data-testid="watch-add"]');
  await page.selectOption('[data-testid="speed"]', { label: '10 ms / frame' });
  await page.click('[data-testid="play"]');
  await page.waitForSelector('[data-testid="watch-hit"]', { timeout: 30000 });
  assert.match(await page.textContent('[data-testid="watch-hit"]'), /throttle queue depth 3 > 2/);
  assert.equal(await page.getAttribute('[data-testid="play"]', 'aria-pressed'), 'false', 'paused');
  assert.equal(await page.textContent('[data-key="throttle-depth"]'), '3', 'stopped on the third sleeper');
  assert.deepEqual(errors, []);
});

test('a live region narrates state changes when stepping, and the lab works at 390 px', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=small-crash');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('f');
  await page.waitForFunction(() => /iclog \d+ → SYNCING, FLUSH\|FUA/.test(document.querySelector('[data-testid="narration"]').textContent));
  assert.equal(await page.getAttribute('[data-testid="narration"]', 'aria-live'), 'polite');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(server.url + '?preset=small-crash');
  await page.waitForSelector('#lab[data-ready="true"]');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no sideways scrolling at 390 px (${overflow} px too wide)`);
  const t0 = await simNs(page);
  await page.click('[data-testid="step"]');
  await page.waitForFunction((t) => document.querySelector('#lab').dataset.simNs !== t, t0.toString());
  await page.screenshot({ path: path.join(ARTIFACTS, 'narrow.png'), fullPage: false });
  await page.setViewportSize({ width: 1280, height: 800 });
  assert.deepEqual(errors, []);
});

test('what if: branching to the legacy flush policy mid-run changes what the timeline shows', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=fsmark-create&at=30ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.selectOption('[data-testid="whatif-key"]', 'flush');
  await page.fill('[data-testid="whatif-value"]', 'legacy');
  await page.press('[data-testid="whatif-value"]', 'Tab');
  await page.click('[data-testid="whatif-go"]');
  assert.match(await page.textContent('[data-testid="whatif-branches"]'), /flush=legacy from t = 30\.000 ms/);
  await page.click('[data-testid="step-to-flush"]');
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="timeline"]').dataset.preflush) > 0);
  // A knob fixed at build time is refused with the reason.
  await page.selectOption('[data-testid="whatif-key"]', 'throttle');
  await page.fill('[data-testid="whatif-value"]', 'sometimes');
  await page.press('[data-testid="whatif-value"]', 'Tab');
  await page.click('[data-testid="whatif-go"]');
  assert.match(await page.textContent('[data-testid="whatif"] .field-error'), /throttle: 'sometimes' is not allowed/);
  assert.deepEqual(errors, []);
});

test('plots draw a metric over the run so far and switch metrics', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=cil-throttle-32mb');
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.selectOption('[data-testid="speed"]', { label: '1 ms / frame' });
  await page.click('[data-testid="play"]');
  await page.waitForFunction(() => BigInt(document.querySelector('#lab').dataset.simNs) > 120_000_000n, null, { timeout: 30000 });
  await page.click('[data-testid="play"]');
  await page.selectOption('[data-testid="plot-metric"]', { label: 'throttle depth' });
  await page.waitForFunction(() => /tasks on xc_push_wait/.test(document.querySelector('[data-testid="plot-about"]').textContent));
  // The line was drawn: the canvas has pixels in the plot's teal.
  const teal = await page.$eval('[data-testid="plots"] canvas', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    // Anti-aliased teal: clearly more green than red (the grid is grey, the text black).
    for (let i = 0; i < d.length; i += 4) if (d[i + 1] > d[i] + 40 && d[i + 1] > 90) n++;
    return n;
  });
  assert.ok(teal > 50, `the series is drawn (${teal} pixels)`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.locator('[data-testid="plots"]').screenshot({ path: path.join(ARTIFACTS, 'plots.png') });
  assert.deepEqual(errors, []);
});

test('a link opens on the run that led to it: the plot starts at 0 and time travel goes back before it', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=cil-throttle-32mb&at=150ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const plots = await page.$eval('[data-testid="plots"]', (e) => ({ ...e.dataset }));
  assert.equal(Number(plots.fromMs), 0, 'the plot begins at the run\'s start');
  assert.equal(Number(plots.toMs), 150, 'and ends where the link opens');
  assert.ok(Number(plots.points) >= 200, `the way there is sampled (${plots.points} points)`);
  assert.equal(await page.locator('[data-testid="plot-empty"]').count(), 0);
  assert.equal(await page.getAttribute('[data-testid="scrub"]', 'min'), '0', 'the scrubber reaches back to the start');
  // Snapshots every 20,000 events were taken on the way (the run has ~70,700 by 150 ms).
  assert.ok(Number(await page.getAttribute('#lab', 'data-keyframes')) >= 3, 'snapshots taken while opening');
  // Scrub back to 60 ms (~42,600 events: past the snapshots at 20,000 and 40,000, so the seek
  // restores one taken while opening): the state of the straight run there.
  await page.$eval('[data-testid="scrub"]', (el) => { el.value = '60000'; el.dispatchEvent(new Event('change', { bubbles: true })); });
  await page.waitForFunction(() => document.querySelector('#lab').dataset.simNs === '60000000');
  const native = nativeRun('?preset=cil-throttle-32mb', '60ms');
  assert.equal(await page.getAttribute('#lab', 'data-trace-hash'), native.trace_hash, 'back in the run that led to the link');
  // Stepping on from there reads each event (milestones): the next throttle wait is found
  // within the second, so the run stops on it, well before the link's 150 ms.
  await page.click('[data-testid="step-to-throttlewait"]');
  await page.waitForFunction(() => BigInt(document.querySelector('#lab').dataset.simNs) > 60_000_000n);
  assert.equal(await page.locator('[data-testid="step-to-note"]').count(), 0, 'a throttle wait was found');
  assert.ok(Number(await page.textContent('[data-key="throttle-depth"]')) >= 1, 'a committer now waits on xc_push_wait');
  assert.deepEqual(errors, []);
});
