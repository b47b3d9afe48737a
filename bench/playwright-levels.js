#!/usr/bin/env node
// Token savings of the snapshot filter per level over every Playwright MCP corpus snapshot
// (the YAML inside `### Snapshot` of browser_* results). Prints a markdown table per page,
// medians, and ref retention (refs shown as nodes, written or implied).
//
//   node bench/playwright-levels.js [corpusDir]      (needs `npx napi build --platform` first)
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const { filterSnapshot } = require('../index.js')
const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')

const corpusDir =
  process.argv[2] || process.env.MCP_CORPUS_DIR || path.join(__dirname, '..', '..', 'shared', 'corpus')
const pagesDir = path.join(corpusDir, 'playwright-mcp', 'pages')
const LEVELS = ['light', 'moderate', 'aggressive']
const FENCE = /(^|\n)(### Snapshot|- Page Snapshot:?)\n```yaml\n([\s\S]*?\n)```(\n|$)/

function snapshotBodies() {
  const out = []
  for (const page of fs.readdirSync(pagesDir).sort()) {
    const dir = path.join(pagesDir, page)
    if (!fs.statSync(dir).isDirectory()) continue
    for (const file of fs.readdirSync(dir).sort()) {
      if (!file.endsWith('.json')) continue
      const json = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))
      for (const block of json.result?.content ?? []) {
        if (block.type !== 'text') continue
        const m = FENCE.exec(block.text)
        if (m) out.push({ name: `${page}/${file.replace(/\.json$/, '')}`, body: m[3] })
      }
    }
  }
  return out
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}
const pct = (x) => `${x.toFixed(1)}%`

const rows = []
const savings = Object.fromEntries(LEVELS.map((l) => [l, []]))
for (const { name, body } of snapshotBodies()) {
  const tokens = encode(body).length
  const row = { name, tokens, cells: [] }
  for (const level of LEVELS) {
    const out = filterSnapshot(body, { level })
    const after = encode(out.text).length
    const saved = 100 * (1 - after / tokens)
    savings[level].push(saved)
    row.cells.push(`${after} (${pct(saved)}, refs ${out.uidsShown}/${out.uidsIn})`)
  }
  rows.push(row)
}

console.log('| page | o200k tokens | ' + LEVELS.join(' | ') + ' |')
console.log('| --- | ---: | ' + LEVELS.map(() => '---:').join(' | ') + ' |')
for (const r of rows) console.log(`| ${r.name} | ${r.tokens} | ${r.cells.join(' | ')} |`)
console.log(`| **median saving** | | ${LEVELS.map((l) => `**${pct(median(savings[l]))}**`).join(' | ')} |`)
const targets = { light: 20, moderate: 50, aggressive: 75 }
for (const l of LEVELS) {
  const m = median(savings[l])
  console.log(`${l}: median ${pct(m)} (target ≥ ${targets[l]}%) ${m >= targets[l] ? 'ok' : 'BELOW TARGET'}`)
}
