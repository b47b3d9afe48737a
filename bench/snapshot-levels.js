#!/usr/bin/env node
// Token savings of the snapshot filter per level over every chrome-devtools-mcp corpus
// snapshot (take_snapshot*, and click/fill/hover/wait_for/... results carrying one).
// Prints a markdown table per page, medians, uid and word retention, and at moderate the share
// of interactive uids inside `main` kept in place.
//
//   node bench/snapshot-levels.js [corpusDir]      (needs `npx napi build --platform` first)
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const { filterSnapshot } = require('../index.js')
const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')

const corpusDir =
  process.argv[2] || process.env.MCP_CORPUS_DIR || path.join(__dirname, '..', '..', 'shared', 'corpus')
const cdpDir = path.join(corpusDir, 'chrome-devtools-mcp')
const HEADER = '## Latest page snapshot\n'
const LEVELS = ['light', 'moderate', 'aggressive']
const INTERACTIVE = new Set(
  'button checkbox combobox DisclosureTriangle link listbox menuitem menuitemcheckbox menuitemradio option radio scrollbar searchbox slider spinbutton switch tab textbox treeitem Video Audio'.split(' ')
)
const UID = /^\d+_\d+$/

function snapshotBodies() {
  const out = []
  for (const page of fs.readdirSync(cdpDir).sort()) {
    const dir = path.join(cdpDir, page)
    if (page.startsWith('_') || !fs.statSync(dir).isDirectory()) continue
    for (const file of fs.readdirSync(dir).sort()) {
      if (!file.endsWith('.json')) continue
      const json = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))
      for (const block of json.result?.content ?? []) {
        if (block.type !== 'text') continue
        const at = block.text.indexOf(HEADER)
        if (at < 0) continue
        let body = block.text.slice(at + HEADER.length)
        const next = body.search(/^## /m)
        if (next >= 0) body = body.slice(0, next)
        out.push({ name: `${page}/${file.replace(/\.json$/, '')}`, body })
      }
    }
  }
  return out
}

// Uids written as nodes in our notation: tokens (split at spaces and at the sibling separator
// `|`) outside quoted names, link texts `[…]` and link urls `(…)`, that look like uids.
function shownUids(text) {
  const uids = []
  for (const line of text.split('\n')) {
    const t = line.trimStart()
    if (t.startsWith('…') || t.startsWith('#snapshot-filter') || t.startsWith('\\')) continue
    if (t.startsWith('uid=')) { uids.push(t.slice(4).split(' ')[0]); continue }
    let token = ''
    for (let i = 0; i <= t.length; i++) {
      const c = t[i]
      if (c === '"' || c === '[') {
        const close = c === '"' ? '"' : ']'
        for (i++; i < t.length && t[i] !== close; i++) if (t[i] === '\\') i++
        if (close === ']' && t[i + 1] === '(') {
          let open = 0
          for (i++; i < t.length; i++) {
            if (t[i] === '(') open++
            else if (t[i] === ')' && --open === 0) break
          }
        }
        token = ''
        continue
      }
      if (c === ' ' || c === '|' || c === undefined) {
        if (UID.test(token)) uids.push(token)
        token = ''
      } else token += c
    }
  }
  return uids
}

function malformedLines(text) {
  let n = 0
  const lines = text.split('\n')
  if (!lines[0].startsWith('#snapshot-filter')) return 0 // raw text returned unchanged
  for (const line of lines.slice(1)) {
    const t = line.trimStart()
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

// Interactive uids inside `main` in the raw input (indentation gives the nesting).
function interactiveInMain(body) {
  const out = []
  let mainIndent = -1
  for (const line of body.split('\n')) {
    const m = /^( *)uid=(\S+)(?: ([A-Za-z][\w-]*))?/.exec(line)
    if (!m) continue
    const indent = m[1].length
    if (mainIndent >= 0 && indent <= mainIndent) mainIndent = -1
    if (mainIndent >= 0 && (INTERACTIVE.has(m[3]) || /\b(focusable|expandable)\b/.test(line))) out.push(m[2])
    if (m[3] === 'main' && mainIndent < 0) mainIndent = indent
  }
  return out
}

// Controls with a label in the raw input: an interactive node other than a link whose previous
// sibling (same indentation, same parent) is a text node (`uid=… "text"`) with a letter or digit. Returns [control uid, label uid].
function labelledControls(body) {
  const out = []
  const lastAt = new Map() // indent -> { uid, text } of the previous line at that indent
  for (const line of body.split('\n')) {
    const m = /^( *)uid=(\S+)(?: ([A-Za-z][\w-]*))?/.exec(line)
    if (!m) continue
    const indent = m[1].length
    for (const k of [...lastAt.keys()]) if (k > indent) lastAt.delete(k)
    // A label says something: a separator (" · ") is decoration. Links carry their own name.
    const isText = m[3] === undefined && /^ *uid=\S+ "[^"]*[\p{L}\p{N}]/u.test(line)
    const prev = lastAt.get(indent)
    const control = m[3] !== 'link' && (INTERACTIVE.has(m[3]) || /\b(focusable|expandable)\b/.test(line))
    if (prev?.text && control) out.push([m[2], prev.uid])
    lastAt.set(indent, { uid: m[2], text: isText })
  }
  return out
}

// Snapshot bodies of recorded sessions (jsonl steps whose result carries a snapshot).
function sessionBodies(dirOrFile) {
  const files = fs.existsSync(dirOrFile) && fs.statSync(dirOrFile).isDirectory()
    ? fs.readdirSync(dirOrFile).filter((f) => f.endsWith('.jsonl')).map((f) => path.join(dirOrFile, f))
    : fs.existsSync(dirOrFile) ? [dirOrFile] : []
  const out = []
  for (const file of files.sort()) {
    for (const [n, line] of fs.readFileSync(file, 'utf8').split('\n').entries()) {
      if (!line) continue
      const step = JSON.parse(line)
      for (const block of step.result?.content ?? []) {
        if (block.type !== 'text' || !block.text.includes(HEADER)) continue
        let body = block.text.slice(block.text.indexOf(HEADER) + HEADER.length)
        const next = body.search(/^## /m)
        if (next >= 0) body = body.slice(0, next)
        out.push({ name: `${path.basename(file, '.jsonl')}:${n + 1}`, body })
      }
    }
  }
  return out
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  if (!s.length) return NaN
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
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
for (const { name, body } of snapshotBodies()) {
  const before = encode(body).length
  const row = { name, before }
  for (const level of LEVELS) {
    const r = filterSnapshot(body, { level })
    const after = encode(r.text).length
    row[level] = after
    saved[level].push(1 - after / before)
    const shown = new Set(shownUids(r.text))
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
const PAGE_SETS = [
  ['corpus (chrome-devtools-mcp pages)', snapshotBodies()],
  ['corpus sessions', sessionBodies(path.join(corpusDir, 'sessions'))],
  ['captured docs (MCP_CAPTURED_DIR)', process.env.MCP_CAPTURED_DIR ? sessionBodies(process.env.MCP_CAPTURED_DIR) : []],
  ['own app pages (__test__/fixtures/sessions)', sessionBodies(path.join(__dirname, '..', '__test__', 'fixtures', 'sessions'))],
]
console.log('\n| page set | snapshots | level | tokens saved (median) | main controls kept in place (median) | controls shown with their label shown |')
console.log('|---|---:|---|---:|---:|---:|')
for (const [setName, bodies] of PAGE_SETS) {
  if (!bodies.length) continue
  for (const level of ['moderate', 'aggressive']) {
    const savedSet = []
    const keptSet = []
    let labelled = 0
    let withLabel = 0
    for (const { body } of bodies) {
      const r = filterSnapshot(body, { level })
      savedSet.push(1 - encode(r.text).length / encode(body).length)
      const shown = new Set(shownUids(r.text))
      const inMain = interactiveInMain(body)
      if (inMain.length) keptSet.push(inMain.filter((u) => shown.has(u)).length / inMain.length)
      for (const [control, label] of labelledControls(body)) {
        if (!shown.has(control)) continue
        labelled++
        if (shown.has(label)) withLabel++
      }
    }
    console.log(`| ${setName} | ${bodies.length} | ${level} | ${pct(median(savedSet))} | ${keptSet.length ? pct(median(keptSet)) : '–'} | ${labelled ? `${pct(withLabel / labelled)} (${withLabel}/${labelled})` : '–'} |`)
  }
}

console.log(
  `\nInteractive uids inside main kept in place at moderate: median ${pct(median(mainKept))} over ${mainKept.length} snapshots with a main (min ${pct(Math.min(...mainKept))}), ${mainShown}/${mainTotal} overall.`
)
