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
  // Three rounds, each a native best of three then three wasm runs, and the best of each side
  // over all of them: one 0.15 s run is at the mercy of whatever else this (virtual) machine
  // does, and alternating the sides lets neither catch a quiet or a busy stretch alone. A
  // first run also pays for first-touch memory, so it is reported apart.
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=small-crash');
  await page.waitForSelector('#lab[data-ready="true"]');
  const natives = [], wasms = [];
  for (let round = 0; round < 3; round++) {
    natives.push(JSON.parse(execFileSync(RELEASE, ['bench', '--events-only', '--json']).toString()));
    for (let i = 0; i < 3; i++) wasms.push(JSON.parse(await page.evaluate(() => window.wasmBindings.loglab_bench())));
  }
  const native = natives[0];
  for (const wasm of wasms) {
    assert.equal(wasm.events, native.events, 'the same events');
    assert.equal(wasm.trace_hash, native.trace_hash, 'the same trace hash');
    assert.equal(wasm.crc_ok, true, "the browser's SIMD CRC32C equals the portable CRC");
  }
  const rate = (w) => w.events / w.secs;
  const nativeRate = Math.max(...natives.map((n) => n.events_per_sec));
  const wasmRate = Math.max(...wasms.map(rate));
  const firstRatio = native.events_per_sec_first_run / rate(wasms[0]);
  const rounds = natives.map((n, r) => (n.events_per_sec / Math.max(...wasms.slice(3 * r, 3 * r + 3).map(rate))).toFixed(2));
  console.log(`bench (200-writer fsync-heavy, ${native.events} events), best of 9 runs a side: native ${(nativeRate / 1e6).toFixed(2)} M events/s, `
    + `wasm in Chromium ${(wasmRate / 1e6).toFixed(2)} M events/s: wasm is ${(nativeRate / wasmRate).toFixed(2)}x slower `
    + `(rounds ${rounds.join(', ')}; first runs alone: ${firstRatio.toFixed(2)}x)`);
  assert.deepEqual(errors, []);
});
