// Exports: the metrics JSON and the dm-log-writes stream equal the CLI's for the same link and
// moment; the series CSV and the charts' PNGs are what they say.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { downloaded, loglab, openBrowser, serveDist } from './harness.mjs';

const LINK = 'http://127.0.0.1:8080/?preset=small-crash';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

test('metrics JSON and dm-log-writes equal the CLI’s at the same moment; CSV and PNGs are well formed', async () => {
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=small-crash&at=5ms');
  await page.waitForSelector('#lab[data-ready="true"]');
  const metrics = JSON.parse((await downloaded(page, 'export-metrics')).toString());
  const cli = JSON.parse(loglab(['run', '--url', LINK, '--until', '5ms', '--json']).toString());
  for (const [k, v] of Object.entries(metrics)) {
    if (typeof v === 'number' && !Number.isInteger(v)) assert.ok(Math.abs(cli[k] - v) <= 1e-9 * Math.max(1, Math.abs(v)), k);
    else assert.deepEqual(v, cli[k], k);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglab-lw-'));
  const out = path.join(dir, 'run.logwrites');
  let expected;
  try {
    loglab(['export-logwrites', '--url', LINK, '--until', '5ms', '--out', out]);
    expected = fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const lw = await downloaded(page, 'export-logwrites');
  assert.ok(lw.length > 0);
  assert.ok(lw.equals(expected), 'byte for byte the stream loglab export-logwrites --until writes');
  const png = await downloaded(page, 'export-timeline-png');
  assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
  // Play a little so the plots have points, then take the series.
  await page.click('[data-testid="play"]');
  await page.waitForTimeout(500);
  await page.click('[data-testid="play"]');
  const csv = (await downloaded(page, 'export-series')).toString().trim().split('\n');
  assert.equal(csv[0], 'plot,t_ms,value');
  assert.ok(csv.length > 2 && csv.slice(1).every((l) => /^[^,]+,[\d.]+,[\d.eE+-]+$/.test(l)), csv.slice(0, 3).join(' / '));
  assert.deepEqual(errors, []);
});
