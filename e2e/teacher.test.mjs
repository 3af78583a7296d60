// Teacher mode without a server: the teacher builds an assignment link; a student opens it,
// gets a seed from their name, solves a lesson and copies a result code; the teacher pastes
// the codes and reads the class table.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveDist, openBrowser, loglab } from './harness.mjs';

let server;
before(async () => { server = await serveDist(); });
after(async () => { await server?.close(); });

async function ready(page, url) {
  await page.goto(url);
  await page.waitForSelector('#lab[data-ready="true"]', { timeout: 60000 });
}

test('an assignment link, a student\'s result code and the class table', async () => {
  const teacher = await openBrowser();
  const ada = await openBrowser();
  const grace = await openBrowser();
  try {
    // The teacher picks two lessons and a seed range.
    await ready(teacher.page, `${server.url}?teacher=1`);
    for (const id of ['iclog-life', 'volatile-cache']) await teacher.page.check(`[data-testid="teacher-lesson"][data-lesson="${id}"]`);
    await teacher.page.fill('[data-testid="teacher-seed-lo"]', '100');
    await teacher.page.fill('[data-testid="teacher-seed-hi"]', '140');
    const link = await teacher.page.inputValue('[data-testid="assignment-link"]');
    assert.equal(link, `${server.url}?assign=iclog-life,volatile-cache&seeds=100-140`);
    // Ada opens it in her own browser, enters her name and gets her seed and lessons.
    await ready(ada.page, link);
    await ada.page.fill('[data-testid="student-name"]', 'Ada');
    const seed = Number(await ada.page.textContent('[data-testid="student-seed"]'));
    assert.ok(seed >= 100 && seed <= 140, String(seed));
    assert.equal(await ada.page.locator('[data-testid="assignment"] li').count(), 2);
    // She solves the first lesson with her seed.
    await ada.page.click('[data-testid="assignment"] li[data-lesson="volatile-cache"] a');
    await ada.page.waitForSelector('[data-testid="lesson"][data-lesson="volatile-cache"]');
    assert.equal(await ada.page.getAttribute('[data-testid="lesson"]', 'data-seed'), String(seed));
    await ada.page.fill('[data-testid="lesson-answer"]', loglab(['lessons', 'solve', 'volatile-cache', '--seed', String(seed)]).trim());
    await ada.page.click('[data-testid="lesson-check"]');
    await ada.page.waitForSelector('[data-testid="lesson-verdict"][data-correct="true"]', { timeout: 60000 });
    // Back on the assignment: it remembers her name and gives her code.
    await ready(ada.page, link);
    assert.equal(await ada.page.inputValue('[data-testid="student-name"]'), 'Ada');
    assert.equal(await ada.page.getAttribute('[data-testid="assignment"] li[data-lesson="volatile-cache"]', 'data-done'), 'true');
    const adaCode = await ada.page.inputValue('[data-testid="result-code"]');
    // Grace opens the same link and hands in nothing passed.
    await ready(grace.page, link);
    await grace.page.fill('[data-testid="student-name"]', 'Grace');
    const graceCode = await grace.page.inputValue('[data-testid="result-code"]');
    // The teacher pastes both codes (and a damaged one).
    await teacher.page.fill('[data-testid="class-codes"]', `${adaCode}\n${graceCode}\n${adaCode.slice(0, 30)}x-00000000`);
    const row = (name) => teacher.page.locator(`[data-testid="class-table"] tr[data-student="${name}"] td[data-cell]`);
    assert.deepEqual(await row('Ada').evaluateAll((tds) => tds.map((t) => t.dataset.cell)), ['no', 'passed']);
    assert.deepEqual(await row('Grace').evaluateAll((tds) => tds.map((t) => t.dataset.cell)), ['no', 'no']);
    assert.match(await teacher.page.textContent('[data-testid="class-code-error"]'), /damaged/);
    assert.equal(await teacher.page.textContent(`[data-testid="class-table"] tr[data-student="Ada"] td:nth-child(2)`), String(seed));
  } finally {
    await teacher.close(); await ada.close(); await grace.close();
  }
});
