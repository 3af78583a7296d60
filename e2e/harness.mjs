// Shared e2e harness: a static server for dist/ and Debian's Chromium via playwright-core.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DIST = path.resolve(here, '..', 'dist');
export const ARTIFACTS = path.resolve(here, 'artifacts');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };

/** Serves dist/ on a free loopback port under `prefix` (a sub-path such as '/os/loglab/', as a
 * course hosts the lab), and `extra` files at their own paths; resolves to { url, close }. */
export function serveDist(prefix = '/', extra = {}) {
  if (!fs.existsSync(path.join(DIST, 'index.html'))) {
    throw new Error(`dist/index.html is missing: build the lab first (trunk build --release)`);
  }
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (extra[url.pathname]) {
      res.writeHead(200, { 'content-type': TYPES[path.extname(extra[url.pathname])] ?? 'text/plain' });
      fs.createReadStream(extra[url.pathname]).pipe(res);
      return;
    }
    if (!url.pathname.startsWith(prefix)) { res.writeHead(404).end('not found'); return; }
    let file = path.join(DIST, decodeURIComponent(url.pathname.slice(prefix.length - 1)));
    if (!file.startsWith(DIST)) { res.writeHead(403).end(); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    if (!fs.existsSync(file)) { res.writeHead(404).end('not found'); return; }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}${prefix}`, origin: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

const CHROMIUM = fs.existsSync('/usr/lib/chromium/chromium') ? '/usr/lib/chromium/chromium' : '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Launches Chromium with a fresh profile; resolves to { context, page, errors, close }. */
export async function openBrowser() {
  if (!fs.existsSync(CHROMIUM)) throw new Error('chromium is missing: apt-get install -y chromium');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'loglab-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  return {
    context, page, errors,
    close: async () => { await context.close(); fs.rmSync(profile, { recursive: true, force: true }); },
  };
}

const TARGET = process.env.CARGO_TARGET_DIR ?? path.resolve(here, '..', 'target');
/** The loglab binary `cargo test` built (debug; release when only that exists). */
export const LOGLAB = ['debug', 'release'].map((p) => path.join(TARGET, p, 'loglab')).find((f) => fs.existsSync(f));
/** The release loglab (for speed comparisons). */
export const LOGLAB_RELEASE = path.join(TARGET, 'release', 'loglab');
/** The origin the CLI puts in front of every link it prints. */
export const ORIGIN = 'http://127.0.0.1:8080/';

/** Runs loglab with `args`; returns its stdout as text. */
export function loglab(args) {
  if (!LOGLAB) throw new Error(`the loglab binary is missing under ${TARGET}: cargo build -p loglab`);
  return execFileSync(LOGLAB, args).toString();
}

/** `loglab run --url <query> --until <until> --json`, parsed. */
export const nativeRun = (query, until) => JSON.parse(loglab(['run', '--url', `${ORIGIN}${query}`, '--until', until, '--json']));

/** Clicks the `data-testid` button and returns the file it downloads. */
export async function downloaded(page, testid) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`[data-testid="${testid}"]`)]);
  return fs.readFileSync(await dl.path());
}
