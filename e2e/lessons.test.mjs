// A scripted student works through every lesson in Chromium: opens it from the lesson list,
// reads the task, gives a wrong answer (marked wrong), then the model's answer for its own
// variant (from `loglab lessons solve`, the teacher's tool), which the lab's check marks right;
// progress shows in the list. The scripted student uses a seed other than the default, so the
// variant machinery is exercised too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveDist, openBrowser, loglab } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

const lessons = JSON.parse(loglab(['lessons', '--json']));
const SEED = 5;

/** A wrong answer of the lesson's kind (never the model's). */
function wrong(id, right) {
  const n = Number(right);
  if (Number.isFinite(n) && right !== '') return String(n * 3 + 1000);
  if (id === 'iclog-life') return right === 'DIRTY' ? 'SYNCING' : 'DIRTY';
  if (id === 'brians-race') return '3';
  return { 'stripe-roundoff': '1x', 'external-log': 'series-v1', 'throttle-hang': 'v5.9', capstone: 'series-v1' }[id] ?? 'nonsense';
}

test('loglab lessons lists at least 14 lessons, one per mechanism of the source threads', () => {
  assert.ok(lessons.length >= 14, `${lessons.length} lessons`);
  const threads = new Set(lessons.map((l) => l.thread));
  for (const t of ['000', '001', '002', '003', '004']) assert.ok(threads.has(t), `a lesson from source thread ${t}`);
  for (const l of lessons) assert.ok(l.id && l.title && l.kernel_function && l.link.includes(`lesson=${l.id}`), JSON.stringify(l));
});

for (const l of lessons) {
  test(`the scripted student solves lesson ${l.id}, and a wrong answer is marked wrong`, async () => {
    const { page, errors } = browser;
    await page.goto(`${server.url}?lesson=${l.id}&seed=${SEED}`);
    await page.waitForSelector('#lab[data-ready="true"]', { timeout: 60000 });
    const card = page.locator('[data-testid="lesson"]');
    assert.equal(await card.getAttribute('data-lesson'), l.id);
    assert.equal(await card.getAttribute('data-step'), '1');
    const task = await page.textContent('[data-testid="lesson-task"]');
    assert.ok(!task.includes('{'), task);
    const right = loglab(['lessons', 'solve', l.id, '--seed', await card.getAttribute('data-seed')]).trim();
    let attempt = 0;
    for (const [answer, correct] of [[wrong(l.id, right), 'false'], [right, 'true']]) {
      await page.fill('[data-testid="lesson-answer"]', answer);
      await page.click('[data-testid="lesson-check"]');
      attempt += 1;
      const verdict = page.locator(`[data-testid="lesson-verdict"][data-attempt="${attempt}"]`);
      await verdict.waitFor({ timeout: 60000 });
      assert.equal(await verdict.getAttribute('data-correct'), correct, `${l.id}: '${answer}': ${await verdict.textContent()}`);
    }
    // The hint and the reveal; the reveal names the kernel function.
    await page.click('[data-testid="lesson-hint"]');
    assert.ok((await page.textContent('[data-testid="lesson-hint-text"]')).length > 20);
    await page.click('[data-testid="lesson-reveal"]');
    assert.ok((await page.textContent('[data-testid="lesson-reveal-text"]')).includes(l.kernel_function));
    // Progress: the list marks it done.
    assert.equal(await page.getAttribute(`[data-testid="lesson-list"] li[data-lesson="${l.id}"]`, 'data-done'), 'true');
    assert.deepEqual(errors.filter((e) => !/Content Security Policy/.test(e)), []);
  });
}

test('progress survives a reload and travels in the lesson links; a bad lesson id is named', async () => {
  const { page } = browser;
  await page.goto(`${server.url}?lesson=bigger-log&seed=${SEED}`);
  await page.waitForSelector('#lab[data-ready="true"]');
  const summary = await page.textContent('[data-testid="lesson-list"] summary');
  assert.match(summary, new RegExp(`Lessons \\(${lessons.length} of ${lessons.length} done\\)`));
  const href = await page.getAttribute('[data-testid="lesson-list"] li[data-lesson="capstone"] a', 'href');
  assert.match(href, /lesson=capstone/);
  assert.match(href, /done=[a-z0-9,-]*bigger-log/);
  await page.goto(`${server.url}?lesson=no-such-lesson`);
  await page.waitForSelector('#lab[data-ready="true"]');
  assert.match(await page.textContent('[data-testid="error"]'), /unknown lesson 'no-such-lesson'/);
});
