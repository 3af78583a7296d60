// Trunk post_build hook: gives the built index.html a Content-Security-Policy that allows only
// what the lab needs: files from its own origin, the one inline loader Trunk writes (by its
// SHA-256, so no other inline script runs), WebAssembly compilation ('wasm-unsafe-eval'; no
// JavaScript eval), inline style attributes (Yew sets colours with style=), and nothing else.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('scripts/csp.mjs runs as a Trunk hook (TRUNK_STAGING_DIR is not set)');
const file = path.join(dir, 'index.html');
let html = fs.readFileSync(file, 'utf8');
const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
if (inline.length !== 1) throw new Error(`expected Trunk's one inline loader script, found ${inline.length}`);
const hash = crypto.createHash('sha256').update(inline[0], 'utf8').digest('base64');
const policy = [
  "default-src 'self'",
  `script-src 'self' 'sha256-${hash}' 'wasm-unsafe-eval'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
const meta = `<meta http-equiv="Content-Security-Policy" content="${policy}" />`;
if (!html.includes('<meta charset="utf-8" />')) throw new Error('index.html lost its charset meta');
html = html.replace('<meta charset="utf-8" />', `<meta charset="utf-8" />\n    ${meta}`);
fs.writeFileSync(file, html);
