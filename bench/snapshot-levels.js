#!/usr/bin/env node
// Token savings of the snapshot filter per level over every chrome-devtools-mcp corpus
// snapshot (take_snapshot*, and click/fill/hover/wait_for/... results carrying one).
// Prints a markdown table per page, medians, uid and word retention, and at moderate the share
// of interactive uids inside `main` kept in place.
//
//   node bench/snapshot-levels.js [corpusDir]      (needs `npx napi build --platform` first)
'use strict'

const { requireCorpus } = require('./corpus.js')
const path = require('node:path')
const { filterSnapshot } = require('../index.js')
const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')
const { UID, snapshotBodies, shownUids, interactiveInMain, controlFloor, labelledControls, tableRowUids, tableOptionUids, namedIn, uidSegments, rawNames, labelShown, sharedControlNames, pageSets, median } = require('./snapshot-measures.js')

const corpusDir = requireCorpus('bench/snapshot-levels.js', process.argv[2])
const LEVELS = ['light', 'moderate', 'aggressive']

function malformedLines(text) {
  let n = 0
  const lines = text.split('\n')
  if (!lines[0].startsWith('#snapshot-filter')) return 0 // raw text returned unchanged
  let tableRows = 0
  for (const line of lines.slice(1)) {
    const t = line.trimStart()
    // A table's rows may start with a text cell.
    const header = /^… table of (\d+) records/.exec(t)
    if (header) {
      tableRows = Number(header[1])
      continue
    }
    if (tableRows > 0) {
      tableRows--
      continue
    }
    if (t === '' && line === lines[lines.length - 1]) continue
    if (t.startsWith('…') || t.startsWith('\\')) continue
    if (!UID.test(t.split(/[ |]/)[0])) n++
  }
  return n
}

// Words of page text: everything but uids, urls, our legend/marker lines and dropped words.
const DROPPED_WORDS = new Set(['disableable', 'focusable', 'selectable', 'uid'])
function words(text) {
  const counts = new Map()
  const cleaned = text
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('…') && !l.startsWith('#snapshot-filter'))
    .join('\n')
    .replace(/uid=\S+/g, ' ')
    .replace(/url="[^"\n]*"/g, ' ')
    .replace(/\b\d+_\d+\b/g, ' ')
    .replace(/\\n/g, ' ')
    // A markdown link `[name](url)` stands for the role word `link`.
    .replace(/\]\(/g, '] link (')
  for (const w of cleaned.match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (DROPPED_WORDS.has(w)) continue
    counts.set(w, (counts.get(w) ?? 0) + 1)
  }
  return counts
}
function wordRetention(input, output) {
  const a = words(input)
  const b = words(output)
  let total = 0
  let kept = 0
  for (const [w, n] of a) {
    total += n
    kept += Math.min(n, b.get(w) ?? 0)
  }
  return total ? kept / total : 1
}

const pct = (x) => `${(100 * x).toFixed(1)}%`

const rows = []
const saved = Object.fromEntries(LEVELS.map((l) => [l, []]))
const uidKept = Object.fromEntries(LEVELS.map((l) => [l, []]))
const uidAccounted = Object.fromEntries(LEVELS.map((l) => [l, []]))
const wordKept = Object.fromEntries(LEVELS.map((l) => [l, []]))
const malformed = Object.fromEntries(LEVELS.map((l) => [l, 0]))
const mainKept = []
let mainTotal = 0
let mainShown = 0
for (const { name, body } of snapshotBodies(corpusDir)) {
  const before = encode(body).length
  const row = { name, before }
  for (const level of LEVELS) {
    const r = filterSnapshot(body, { level })
    const after = encode(r.text).length
    row[level] = after
    saved[level].push(1 - after / before)
    const shown = new Set([...shownUids(r.text), ...tableOptionUids(r.text)])
    uidKept[level].push(r.uidsIn ? shown.size / r.uidsIn : 1)
    uidAccounted[level].push(r.uidsIn ? Math.min(1, (r.uidsShown + r.uidsHidden) / r.uidsIn) : 1)
    wordKept[level].push(wordRetention(body, r.text))
    malformed[level] += malformedLines(r.text)
    if (level === 'moderate') {
      const inMain = interactiveInMain(body)
      if (inMain.length) {
        const kept = inMain.filter((u) => shown.has(u)).length
        mainKept.push(kept / inMain.length)
        mainTotal += inMain.length
        mainShown += kept
        row.main = `${kept}/${inMain.length}`
      }
    }
  }
  rows.push(row)
}

console.log('| snapshot | tokens | light | moderate | aggressive | main controls kept (moderate) |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const r of rows) {
  const cell = (l) => `${r[l]} (−${pct(1 - r[l] / r.before)})`
  console.log(`| ${r.name} | ${r.before} | ${cell('light')} | ${cell('moderate')} | ${cell('aggressive')} | ${r.main ?? '–'} |`)
}
console.log(`\n${rows.length} snapshots. Medians over snapshots (o200k tokens):\n`)
console.log('| level | tokens saved | uids shown | uids shown or named by a marker | text words kept | malformed lines |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const l of LEVELS) {
  console.log(
    `| ${l} | ${pct(median(saved[l]))} | ${pct(median(uidKept[l]))} (min ${pct(Math.min(...uidKept[l]))}) | ${pct(median(uidAccounted[l]))} (min ${pct(Math.min(...uidAccounted[l]))}) | ${pct(median(wordKept[l]))} (min ${pct(Math.min(...wordKept[l]))}) | ${malformed[l]} |`
  )
}
// What a lossy level keeps where it must choose, per page set: interactive uids inside main kept
// in place, controls shown whose label is shown too, savings (o200k).
const PAGE_SETS = pageSets(corpusDir, path.join(__dirname, '..'))
console.log('\n| page set | snapshots | level | tokens saved (median) | main controls kept in place (median) | controls shown with their label node shown | controls labelled (a name of its own shown uncut; else the label node, the name holding its words, or its table row writing them) | former count (a named control in a table row counted labelled) |')
console.log('|---|---:|---|---:|---:|---:|---:|---:|')
for (const [setName, bodies] of PAGE_SETS) {
  if (!bodies.length) continue
  // The last row: moderate with every record inside main condensed (its controls and labels
  // shown, the rest behind one marker per run), the measured alternative to the default.
  const configs = [
    ['moderate', { level: 'moderate' }],
    ['aggressive', { level: 'aggressive' }],
    ['moderate, maxCondensedRecords (no tables)', { level: 'moderate', maxCondensedRecords: 100000, maxTableText: 0 }],
  ]
  for (const [level, options] of configs) {
    const savedSet = []
    const keptSet = []
    let labelled = 0
    let withLabel = 0
    let byName = 0
    let readable = 0
    for (const { body } of bodies) {
      const r = filterSnapshot(body, options)
      savedSet.push(1 - encode(r.text).length / encode(body).length)
      const shown = new Set([...shownUids(r.text), ...tableOptionUids(r.text)])
      const inMain = interactiveInMain(body)
      if (inMain.length) keptSet.push(inMain.filter((u) => shown.has(u)).length / inMain.length)
      const inTables = tableRowUids(r.text)
      const seg = uidSegments(r.text)
      const names = rawNames(body)
      const sharedNames = sharedControlNames(body)
      for (const [control, label] of labelledControls(body)) {
        if (!shown.has(control)) continue
        labelled++
        if (labelShown(control, label, shown, seg, names, sharedNames)) readable++
        if (shown.has(label)) withLabel++
        else if (inTables.has(control) && namedIn(body, control)) byName++
      }
    }
    const share = (n) => (labelled ? `${pct(n / labelled)} (${n}/${labelled})` : '–')
    console.log(`| ${setName} | ${bodies.length} | ${level} | ${pct(median(savedSet))} | ${keptSet.length ? pct(median(keptSet)) : '–'} | ${share(withLabel)} | ${share(readable)} | ${share(withLabel + byName)} |`)
  }
}

// The floor under the decisions (every control inside `main` in place, its uid written out):
// each such control once as `uid role "name"`, nothing else, as a share of the raw page. A
// level cannot save more than 1 − floor on a page without hiding one of them.
console.log('\n| page set | snapshots | floor: main controls once, uid role "name" (median share of raw) | savings the floor allows (median) |')
console.log('|---|---:|---:|---:|')
for (const [setName, bodies] of PAGE_SETS) {
  if (!bodies.length) continue
  const shares = bodies.map(({ body }) => encode(controlFloor(body)).length / encode(body).length)
  console.log(`| ${setName} | ${bodies.length} | ${pct(median(shares))} | ${pct(1 - median(shares))} |`)
}

// The grid page of the corpus' grid-triage session: every row's controls in place, and its tokens.
{
  const { sessionBodies } = require('./snapshot-measures.js')
  const grid = sessionBodies(path.join(corpusDir, 'sessions', 'grid-triage.jsonl'))[0]
  if (grid) {
    const r = filterSnapshot(grid.body, { level: 'moderate' })
    const shown = new Set([...shownUids(r.text), ...tableOptionUids(r.text)])
    const rowControls = interactiveInMain(grid.body)
    console.log(
      `\nGrid page (${grid.name}): raw ${encode(grid.body).length}, moderate ${encode(r.text).length} o200k tokens; main controls in place ${rowControls.filter((u) => shown.has(u)).length}/${rowControls.length}.`
    )
  }
}
console.log(
  `\nInteractive uids inside main kept in place at moderate: median ${pct(median(mainKept))} over ${mainKept.length} snapshots with a main (min ${pct(Math.min(...mainKept))}), ${mainShown}/${mainTotal} overall.`
)
