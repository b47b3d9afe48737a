#!/usr/bin/env node
// Reduction per tool and level across the corpus: UTF-8 bytes and o200k tokens of what the
// client receives (text blocks, plus structuredContent where present), before and after
// FilterSession.filterToolResult (stats off, so the figures exclude the stats line).
//
//   node bench/results-levels.js            (needs `npx napi build --platform` first)
//   MCP_CORPUS_DIR=/path/to/corpus node bench/results-levels.js
//
// Part 1: chrome-devtools-mcp/ (plain text results). Part 2: chrome-devtools-mcp-structured/,
// where Claude Code shows structuredContent instead of the text: "shown before" is the
// structuredContent, "shown after" the filtered text (structuredContent is dropped when the text
// was filtered and the tool has no outputSchema), beside what keeping it would have shown.
'use strict';

const { requireCorpus } = require('./corpus.js')

const fs = require('fs');
const path = require('path');
const { FilterSession } = require('../index.js');
const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base');

const corpus = requireCorpus('bench/results-levels.js');
const LEVELS = ['light', 'moderate', 'aggressive'];

function captures(server) {
  const root = path.join(corpus, server);
  const out = [];
  for (const page of fs.readdirSync(root).sort()) {
    const dir = path.join(root, page);
    if (!fs.statSync(dir).isDirectory()) continue;
    for (const file of fs.readdirSync(dir).sort()) {
      if (!file.endsWith('.json')) continue;
      const json = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
      const params = json.request && json.request.params;
      if (!params || !params.name || !json.result || !json.result.content) continue;
      out.push({ page, file, tool: params.name, args: params.arguments || {}, result: json.result });
    }
  }
  return out;
}

const textOf = (result) =>
  result.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
const scOf = (result) =>
  result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent);
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const tokenCache = new Map();
const tokens = (s) => {
  if (!tokenCache.has(s)) tokenCache.set(s, encode(s).length);
  return tokenCache.get(s);
};

function run(capture, level) {
  const session = new FilterSession({ filter: { level }, stats: 'off' });
  const out = session.filterToolResult(
    capture.tool,
    JSON.stringify(capture.result),
    JSON.stringify(capture.args),
  );
  return out === null ? capture.result : JSON.parse(out);
}

const pct = (a, b) => (a === 0 ? '   0%' : `${(((a - b) * 100) / a).toFixed(0).padStart(4)}%`);
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

function plain() {
  const rows = new Map();
  for (const capture of captures('chrome-devtools-mcp')) {
    const before = textOf(capture.result) + scOf(capture.result);
    const row = rows.get(capture.tool) || { n: 0, b: 0, t: 0, levels: {} };
    row.n += 1;
    row.b += bytes(before);
    row.t += tokens(before);
    for (const level of LEVELS) {
      const after = run(capture, level);
      const shown = textOf(after) + scOf(after);
      const l = row.levels[level] || { b: 0, t: 0 };
      l.b += bytes(shown);
      l.t += tokens(shown);
      row.levels[level] = l;
    }
    rows.set(capture.tool, row);
  }
  console.log('## chrome-devtools-mcp: bytes and o200k tokens received, before -> after');
  console.log(
    `${pad('tool', 22)} ${lpad('n', 3)} ${lpad('before', 11)} ${lpad('tokens', 8)}  ` +
      LEVELS.map((l) => pad(`${l} bytes / tokens`, 27)).join(' '),
  );
  const total = { n: 0, b: 0, t: 0, levels: {} };
  const sorted = [...rows.entries()].sort((a, b) => b[1].b - a[1].b);
  for (const [tool, row] of [...sorted, ['ALL', total]]) {
    if (tool !== 'ALL') {
      total.n += row.n;
      total.b += row.b;
      total.t += row.t;
      for (const level of LEVELS) {
        const t = total.levels[level] || { b: 0, t: 0 };
        t.b += row.levels[level].b;
        t.t += row.levels[level].t;
        total.levels[level] = t;
      }
    }
    const cells = LEVELS.map((level) => {
      const l = row.levels[level];
      return pad(`${lpad(kb(l.b), 10)} ${pct(row.b, l.b)} / ${pct(row.t, l.t)}`, 27);
    });
    console.log(
      `${pad(tool, 22)} ${lpad(row.n, 3)} ${lpad(kb(row.b), 11)} ${lpad(row.t, 8)}  ${cells.join(' ')}`,
    );
  }
}

function structured() {
  console.log('\n## chrome-devtools-mcp-structured at moderate: what Claude Code shows (tokens)');
  console.log(
    `${pad('tool', 22)} ${lpad('n', 3)} ${lpad('sc before', 10)} ${lpad('text before', 12)} ` +
      `${lpad('kept sc', 10)} ${lpad('dropped sc', 11)}`,
  );
  const rows = new Map();
  for (const capture of captures('chrome-devtools-mcp-structured')) {
    if (capture.result.structuredContent === undefined) continue;
    const after = run(capture, 'moderate');
    const filtered = after !== capture.result;
    const sc = scOf(capture.result);
    const row = rows.get(capture.tool) || { n: 0, sc: 0, text: 0, kept: 0, dropped: 0 };
    row.n += 1;
    row.sc += tokens(sc);
    row.text += tokens(textOf(capture.result));
    // Keeping structuredContent: Claude Code shows it, unchanged, whatever the text became.
    row.kept += tokens(sc);
    // Dropping it when the text was filtered: Claude Code shows the filtered text.
    row.dropped += filtered ? tokens(textOf(after)) : tokens(sc);
    rows.set(capture.tool, row);
  }
  const total = { n: 0, sc: 0, text: 0, kept: 0, dropped: 0 };
  for (const [tool, row] of [...rows.entries(), ['ALL', total]]) {
    if (tool !== 'ALL') for (const k of Object.keys(total)) total[k] += row[k];
    console.log(
      `${pad(tool, 22)} ${lpad(row.n, 3)} ${lpad(row.sc, 10)} ${lpad(row.text, 12)} ` +
        `${lpad(row.kept, 10)} ${lpad(row.dropped, 11)} (${pct(row.sc, row.dropped).trim()})`,
    );
  }
}

plain();
structured();
