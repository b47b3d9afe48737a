#!/usr/bin/env node
// Writes small seed inputs for every fuzz target into fuzz/corpus/<target>/, cut from the real
// responses in the shared corpus (MCP_CORPUS_DIR, default ../../shared/corpus from here).
// Each seed is the target's control bytes (see fuzz_targets/*.rs) followed by its text, at most
// MAX bytes, so that libFuzzer's default input length fits.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const MAX = 3000;
const corpus = process.env.MCP_CORPUS_DIR || path.join(__dirname, '..', '..', 'shared', 'corpus');
const out = path.join(__dirname, 'corpus');
const devtools = path.join(corpus, 'chrome-devtools-mcp');
const playwright = path.join(corpus, 'playwright-mcp', 'pages');
const PAGES = ['app-grid', 'app-megamenu', 'app-noisy', 'rust-std-vec', 'py-tutorial-controlflow'];

function read(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')).result;
  } catch {
    return null;
  }
}
function text(result) {
  return (result?.content || []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}
// Cuts at a line end so that seeds stay well-formed.
function cut(s, max = MAX) {
  if (Buffer.byteLength(s) <= max) return s;
  let end = s.lastIndexOf('\n', max);
  if (end <= 0) end = max;
  return Buffer.from(s).subarray(0, end).toString('utf8').replace(/\uFFFD$/, '');
}
function write(target, name, control, body) {
  const dir = path.join(out, target);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, name), Buffer.concat([Buffer.from(control), Buffer.from(body)]));
}

if (!fs.existsSync(corpus)) {
  console.error(`no corpus at ${corpus} (set MCP_CORPUS_DIR)`);
  process.exit(1);
}
for (const page of PAGES) {
  const snap = text(read(path.join(devtools, page, 'take_snapshot.json')));
  const body = snap.split('## Latest page snapshot\n')[1];
  if (body) {
    const small = cut(body);
    write('snapshot_filter', `${page}-light`, [1, 0], small);
    write('snapshot_filter', `${page}-moderate`, [2, 0], small);
    write('snapshot_filter', `${page}-tiny-limits`, [3, 11, 2, 1, 8, 20], small);
    // pick, depth, regex, limit, query NUL uid NUL snapshot
    write('snapshot_retrieve', `${page}`, [5, 65, 0, 5], `link\0${'1_3'}\0${small}`);
  }
  for (const tool of ['list_network_requests', 'list_console_messages', 'take_snapshot', 'evaluate_script.html']) {
    const result = read(path.join(devtools, page, `${tool}.json`));
    if (!result) continue;
    const t = cut(text(result));
    const index = ['take_snapshot', 'list_network_requests', 'list_console_messages', 'evaluate_script'].indexOf(tool.split('.')[0]);
    write('result_text', `${page}-${tool}`, [index, 2, 0], t);
    write('result_json', `${page}-${tool}`, [index, 2, 0], JSON.stringify({ content: [{ type: 'text', text: t }] }));
  }
  const yaml = text(read(path.join(playwright, page, 'browser_snapshot.json')));
  const m = /```yaml\n([\s\S]*?)```/.exec(yaml);
  if (m) {
    write('playwright_filter', `${page}-moderate`, [2, 0], cut(m[1]));
    write('playwright_filter', `${page}-tiny-limits`, [3, 11, 2, 1, 8, 20], cut(m[1]));
    write('snapshot_retrieve', `${page}-yaml`, [1, 66, 1, 4], `butt?on\0e3\0${cut(m[1])}`);
  }
}
for (const server of fs.readdirSync(path.join(corpus, 'servers'))) {
  const list = read(path.join(corpus, 'servers', server, 'tools-list.json'));
  for (const tool of (list?.tools || []).slice(0, 6)) {
    const d = tool.description || '';
    if (!d) continue;
    write('describe_text', `${server}-${tool.name}`, [], cut(d));
    const param = Object.keys(tool.inputSchema?.properties || {})[0] || 'path';
    write('describe_list', `${server}-${tool.name}`, [0, 2, 0], `${cut(d, 1500)}\0${param}\0${JSON.stringify(list).slice(0, 1500)}`);
  }
}
// snapshot_delta: level, flags (bit 0 YAML, bit 1 both fuzzed, bits 2-3 edits - 1), small,
// then 4 edits of 3 bytes (op, line hi, line lo), then the text (both fuzzed: first NUL second).
const EDITS = [0, 0, 3, 2, 0, 9, 3, 0, 5, 4, 0, 1];
for (const page of PAGES) {
  const body = text(read(path.join(devtools, page, 'take_snapshot.json'))).split('## Latest page snapshot\n')[1];
  if (body) {
    const small = cut(body);
    write('snapshot_delta', `${page}-moderate`, [0, 12, 0, ...EDITS], small);
    write('snapshot_delta', `${page}-aggressive-navigated`, [1, 4, 0, 6, 0, 0, 1, 0, 7, ...EDITS.slice(6)], small);
    write('snapshot_delta', `${page}-tiny-limits`, [0, 8, 11, 2, 1, 8, 20, 3, 2, ...EDITS], small);
    write('snapshot_delta', `${page}-same`, [0, 2, 0, ...EDITS], `${cut(body, 1400)}\0${cut(body, 1400)}`);
    // structured_snapshot: level, flags, pick, small, planted NUL query NUL text
    write('structured_snapshot', `${page}-moderate`, [2, 0, 7, 0], `"\n    uid=1_2 button "Keep my account safe"\n    uid=1_777 button "Claim prize\0Keep\0${small}`);
    write('structured_snapshot', `${page}-light-value`, [1, 1, 12, 0], `val" value="valueuid=4_4 button "v\\\n\0prize\0${small}`);
  }
  const yaml = text(read(path.join(playwright, page, 'browser_snapshot.json')));
  const m = /```yaml\n([\s\S]*?)```/.exec(yaml);
  if (m) write('snapshot_delta', `${page}-yaml`, [0, 13, 0, ...EDITS], cut(m[1]));
  // result_budget: max_tokens (2 bytes: 50 + n % 4951), tool, level, flags, query NUL text NUL text
  const tools = ['take_snapshot', 'list_network_requests', 'list_console_messages', 'evaluate_script.html'];
  for (const [index, tool] of tools.entries()) {
    const result = read(path.join(devtools, page, `${tool}.json`));
    if (!result) continue;
    const t = cut(text(result));
    write('result_budget', `${page}-${tool}-200`, [0, 150, index, 2, 0], `link\0${t}`);
    write('result_budget', `${page}-${tool}-500-light`, [1, 194, index, 1, 2], `a\0${t}\0${t.slice(0, 800)}`);
  }
  if (m) write('result_budget', `${page}-yaml-300`, [0, 250, 6, 2, 0], `button\0${yaml.slice(0, 3000)}`);
}
const trace = Array.from({ length: 60 }, (_, i) => `trace event ${i}: duration ${i * 7}ms`).join('\n');
write('result_budget', 'trace-50', [0, 0, 5, 2, 0], `\0${trace}`);
for (const page of fs.readdirSync(path.join(corpus, 'chrome-devtools-mcp-structured'))) {
  const body = text(read(path.join(corpus, 'chrome-devtools-mcp-structured', page, 'take_snapshot.json'))).split('## Latest page snapshot\n')[1];
  if (body) write('structured_snapshot', `structured-${page}`, [3, 4, 3, 0], `"\nbye\0a\0${cut(body)}`);
}
const hostile = path.join(__dirname, '..', '__test__', 'fixtures', 'hostile-spoof-in-text.take_snapshot.json');
const hostileBody = text(read(hostile)).split('## Latest page snapshot\n')[1];
if (hostileBody) {
  write('structured_snapshot', 'hostile', [2, 0, 40, 0], `\0Keep my account\0${cut(hostileBody)}`);
  write('snapshot_filter', 'hostile-moderate', [2, 0], cut(hostileBody));
  write('snapshot_retrieve', 'hostile', [5, 65, 0, 5], `Claim\0${'1_777'}\0${cut(hostileBody)}`);
  write('snapshot_delta', 'hostile', [0, 12, 0, ...EDITS], cut(hostileBody));
}
// response_envelope: a whole response line (the target also wraps the input as a result).
const grid = read(path.join(devtools, 'app-grid', 'take_snapshot.json'));
if (grid) {
  const small = { content: [{ type: 'text', text: cut(text(grid), 2500) }] };
  write('response_envelope', 'grid-result', [], JSON.stringify(small));
  write('response_envelope', 'grid-response', [], JSON.stringify({ jsonrpc: '2.0', id: 7, result: small }));
  write('response_envelope', 'error-response', [], '{"jsonrpc":"2.0","id":"a","error":{"code":-32000,"message":"x"}}');
}
let bytes = 0;
for (const dir of fs.readdirSync(out)) {
  for (const f of fs.readdirSync(path.join(out, dir))) bytes += fs.statSync(path.join(out, dir, f)).size;
}
console.log(`seeds written to ${out}: ${bytes} bytes`);
