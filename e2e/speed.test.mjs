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
  const native = JSON.parse(execFileSync(RELEASE, ['bench', '--json']).toString());
  const { page, errors } = browser;
  await page.goto(server.url + '?preset=small-crash');
  await page.waitForSelector('#lab[data-ready="true"]');
  const wasm = JSON.parse(await page.evaluate(() => window.wasmBindings.loglab_bench()));
  assert.equal(wasm.events, native.events, 'the same events');
  assert.equal(wasm.trace_hash, native.trace_hash, 'the same trace hash');
  const wasmRate = wasm.events / wasm.secs;
  console.log(`bench (200-writer fsync-heavy, ${native.events} events): native ${(native.events_per_sec / 1e6).toFixed(2)} M events/s, `
    + `wasm in Chromium ${(wasmRate / 1e6).toFixed(2)} M events/s: wasm is ${(native.events_per_sec / wasmRate).toFixed(2)}x slower`);
  assert.deepEqual(errors, []);
});
