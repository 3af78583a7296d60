// The same simulator run natively and in Chromium's wasm: the same events and trace hash, and
// the speed ratio reported (measured, never asserted). Natively: the release `loglab bench`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { serveDist, openBrowser, LOGLAB_RELEASE as RELEASE } from './harness.mjs';

let server, browser;
before(async () => { server = await serveDist(); browser = await openBrowser(); });
after(async () => { await browser?.close(); await server?.close(); });

test('the bench run is the same run in wasm as natively; the speed ratio is reported', { timeout: 180000 }, async () => {
  assert.ok(fs.existsSync(RELEASE), `the release binary is missing: cargo build --release -p loglab`);
  // Best of three on each side: one 0.3 s run is at the mercy of whatever else the machine
  // does, and a first run also pays for first-touch memory. `bench` runs the scenario three
  // times and reports the fastest (and the first).
  const native = JSON.parse(execFileSync(RELEASE, ['bench', '--json']).toString());
  const nativeRate = native.events_per_sec;
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=small-crash');
  await page.waitForSelector('#lab[data-ready="true"]');
  const wasms = [];
  for (let i = 0; i < 3; i++) wasms.push(JSON.parse(await page.evaluate(() => window.wasmBindings.loglab_bench())));
  for (const wasm of wasms) {
    assert.equal(wasm.events, native.events, 'the same events');
    assert.equal(wasm.trace_hash, native.trace_hash, 'the same trace hash');
    assert.equal(wasm.crc_ok, true, "the browser's SIMD CRC32C equals the portable CRC");
  }
  const wasmRate = Math.max(...wasms.map((w) => w.events / w.secs));
  const firstRatio = native.events_per_sec_first_run / (wasms[0].events / wasms[0].secs);
  console.log(`bench (200-writer fsync-heavy, ${native.events} events), best of 3: native ${(nativeRate / 1e6).toFixed(2)} M events/s, `
    + `wasm in Chromium ${(wasmRate / 1e6).toFixed(2)} M events/s: wasm is ${(nativeRate / wasmRate).toFixed(2)}x slower `
    + `(first runs alone: ${firstRatio.toFixed(2)}x)`);
  assert.deepEqual(errors, []);
});
