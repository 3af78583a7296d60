// The browser soak (not part of `lab.sh test`): a busy preset played for many virtual minutes
// at 100 ms per frame, sampling memory along the way. Prints CSV.
//   node e2e/soak.mjs [virtual-seconds=600] [preset=fsync-heavy] [sample-every-wall-seconds=10]
// Needs dist/ built (trunk build --release) and Debian's chromium.
import fs from 'node:fs';
import { serveDist, openBrowser } from './harness.mjs';

const [secs = '600', preset = 'fsync-heavy', every = '10'] = process.argv.slice(2);
/** Resident memory (KiB) of every Chromium renderer process: the page's tab and its workers. */
function renderersRssKib() {
  let kib = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('chromium') || !cmd.includes('--type=renderer')) continue;
      const rss = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
      kib += rss ? Number(rss[1]) : 0;
    } catch { /* the process ended */ }
  }
  return kib;
}

const server = await serveDist();
const browser = await openBrowser();
const { page, errors } = browser;
try {
  await page.goto(`${server.url}?preset=${preset}&duration=${secs}s`);
  await page.waitForSelector('#lab[data-ready="true"]');
  await page.selectOption('[data-testid="speed"]', { label: '100 ms / frame' });
  await page.click('[data-testid="play"]');
  console.log('wall_s,virtual_s,events,keyframes,js_heap_mib,wasm_memory_mib,renderers_rss_mib');
  const t0 = Date.now();
  for (;;) {
    await page.waitForTimeout(Number(every) * 1000);
    const s = await page.evaluate(() => {
      const lab = document.querySelector('#lab');
      return {
        ns: Number(lab.dataset.simNs), events: Number(lab.dataset.events), keyframes: Number(lab.dataset.keyframes),
        heap: performance.memory?.usedJSHeapSize ?? 0, wasm: window.wasmBindings.loglab_memory_bytes(),
        playing: document.querySelector('[data-testid="play"]').getAttribute('aria-pressed') === 'true',
      };
    });
    const mib = (b) => (b / 1048576).toFixed(1);
    console.log([((Date.now() - t0) / 1000).toFixed(0), (s.ns / 1e9).toFixed(1), s.events, s.keyframes,
      mib(s.heap), mib(s.wasm), (renderersRssKib() / 1024).toFixed(0)].join(','));
    if (!s.playing || s.ns >= Number(secs) * 1e9) break;
  }
  if (errors.length) console.error('page errors:', errors);
} finally {
  await browser.close();
  await server.close();
}
