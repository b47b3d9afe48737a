#!/usr/bin/env node
// Token savings of the snapshot filter per level over every Playwright MCP corpus snapshot
// (the YAML inside `### Snapshot` of browser_* results). Prints a markdown table per page,
// medians, and ref retention (refs shown as nodes, written or implied).
//
//   node bench/playwright-levels.js [corpusDir]      (needs `npx napi build --platform` first)
'use strict'

const { requireCorpus } = require('./corpus.js')
const fs = require('node:fs')
const path = require('node:path')
const { filterSnapshot } = require('../index.js')
const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')

const corpusDir = requireCorpus('bench/playwright-levels.js', process.argv[2])
const pagesDir = path.join(corpusDir, 'playwright-mcp', 'pages')
const LEVELS = ['light', 'moderate', 'aggressive']
const FENCE = /(^|\n)(### Snapshot|- Page Snapshot:?)\n```yaml\n([\s\S]*?\n)```(\n|$)/

/** Every inline snapshot of the Playwright results under `pagesDir/<page>/*.json`. */
function snapshotBodies(pagesDir) {
  const out = []
  if (!fs.existsSync(pagesDir)) return out
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

// Roles an agent acts on (the legend's "link, button or control"): never an implied ref.
const CONTROLS = new Set('link button checkbox radio combobox listbox option textbox searchbox slider spinbutton switch tab menuitem menuitemcheckbox menuitemradio treeitem scrollbar'.split(' '))
const ACTIVE = /\[(cursor|checked|pressed|expanded|selected|active|disabled)[\]=]/
const ROLE_LINE = /^( *)- '?([A-Za-z][\w-]*)(?: "((?:[^"\\]|\\.)*)")?(.*)$/

/** Refs a filtered (or raw) YAML shows: `[ref=…]`, refs implied by the legend's rule, and the
 * refs of table rows (`[ref]` columns). */
function shownRefs(text) {
  const out = new Set()
  const lines = text.split('\n')
  const ours = lines[0].startsWith('# snapshot-filter')
  let prev = null
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const header = /^ *- '… table of (\d+) records, a line each: (.*)'$/.exec(line)
    if (header) {
      const cols = header[2].split(/; \d+ text cells each not written| \(uid /)[0].split(' | ')
      const refCols = cols.map((c) => / \[ref\]/.test(c))
      for (const row of lines.slice(i + 1, i + 1 + Number(header[1]))) {
        const cells = row.trim().replace(/^- '/, '').replace(/'$/, '').split(/(?<!\\)\|/)
        cells.forEach((cell, k) => { if (refCols[k]) out.add(cell.split(' ')[0]) })
      }
      i += Number(header[1])
      prev = null // no ref is implied after a table
      continue
    }
    const m = ROLE_LINE.exec(line)
    if (!m || m[2] === 'text') continue
    const ref = /\[ref=([^\]]+)\]/.exec(m[4])
    if (ref) {
      out.add(ref[1])
      prev = ref[1]
    } else if (ours && prev && !/\[noref\]/.test(m[4]) && !CONTROLS.has(m[2]) && !ACTIVE.test(m[4])) {
      const d = /^(.*?)(\d+)$/.exec(prev)
      if (d) {
        prev = `${d[1]}${Number(d[2]) + 1}`
        out.add(prev)
      }
    }
  }
  return out
}

/** Controls inside `main` of a raw snapshot, with the label text right before each (a
 * `- text:` sibling), by indentation. */
function controlsInMain(body) {
  const out = []
  let mainIndent = -1
  const prevAt = new Map()
  for (const line of body.split('\n')) {
    const indent = line.length - line.trimStart().length
    for (const k of [...prevAt.keys()]) if (k > indent) prevAt.delete(k)
    const text = /^ *- text: (.*)$/.exec(line)
    if (text) {
      prevAt.set(indent, text[1].replace(/^"|"$/g, ''))
      continue
    }
    const m = ROLE_LINE.exec(line)
    if (!m) continue
    if (mainIndent >= 0 && indent <= mainIndent) mainIndent = -1
    const ref = /\[ref=([^\]]+)\]/.exec(m[4])
    if (mainIndent >= 0 && ref && CONTROLS.has(m[2])) {
      const label = m[2] !== 'link' && /[\p{L}\p{N}]/u.test(prevAt.get(indent) ?? '') ? prevAt.get(indent) : null
      out.push({ ref: ref[1], label })
    }
    prevAt.set(indent, null)
    if (m[2] === 'main' && mainIndent < 0) mainIndent = indent
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
for (const { name, body } of snapshotBodies(pagesDir)) {
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

// Per page set: savings, controls inside main shown in place (read back from the output,
// table rows and implied refs included), and shown controls whose label text (the `- text:`
// right before it; its first 30 characters, a cut label showing its start) is in the output too.
const PAGE_SETS = [
  ['corpus Playwright pages', snapshotBodies(pagesDir)],
  ['own Playwright captures (__test__/fixtures/playwright-own)', snapshotBodies(path.join(__dirname, '..', '__test__', 'fixtures', 'playwright-own'))],
]
console.log('\n| page set | snapshots | level | tokens saved (median) | main controls in place (median) | shown controls with their label shown | snapshots with a table |')
console.log('|---|---:|---|---:|---:|---:|---:|')
for (const [setName, bodies] of PAGE_SETS) {
  if (!bodies.length) continue
  for (const level of ['moderate', 'aggressive']) {
    const saved = []
    const kept = []
    let labelled = 0
    let withLabel = 0
    let tables = 0
    for (const { body } of bodies) {
      const r = filterSnapshot(body, { level })
      saved.push(100 * (1 - encode(r.text).length / encode(body).length))
      if (r.text.includes("- '… table of ")) tables++
      const shown = shownRefs(r.text)
      const controls = controlsInMain(body)
      if (controls.length) kept.push(100 * controls.filter((c) => shown.has(c.ref)).length / controls.length)
      for (const c of controls) {
        if (!c.label || !shown.has(c.ref)) continue
        labelled++
        // A long label cut at the level still shows its start.
        if (r.text.includes(c.label.slice(0, 30))) withLabel++
      }
    }
    const share = labelled ? `${pct((100 * withLabel) / labelled)} (${withLabel}/${labelled})` : '–'
    console.log(`| ${setName} | ${bodies.length} | ${level} | ${pct(median(saved))} | ${kept.length ? pct(median(kept)) : '–'} | ${share} | ${tables} |`)
  }
}
