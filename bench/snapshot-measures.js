'use strict'
// What the snapshot benches measure on chrome-devtools-mcp snapshots, shared by
// snapshot-levels.js (the figures) and snapshot-audit.js (the cases behind them): the uids a
// filtered text shows, the interactive uids inside `main`, the controls with a label, and the
// snapshot bodies of the corpus and of recorded sessions.

const fs = require('node:fs')
const path = require('node:path')

const HEADER = '## Latest page snapshot\n'
const INTERACTIVE = new Set(
  'button checkbox combobox DisclosureTriangle link listbox menuitem menuitemcheckbox menuitemradio option radio scrollbar searchbox slider spinbutton switch tab textbox treeitem Video Audio'.split(' ')
)
const UID = /^\d+_\d+$/

function bodyOf(text) {
  const at = text.indexOf(HEADER)
  if (at < 0) return null
  let body = text.slice(at + HEADER.length)
  const next = body.search(/^## /m)
  if (next >= 0) body = body.slice(0, next)
  return body
}

/** Every snapshot of the corpus' chrome-devtools-mcp pages (take_snapshot and results carrying one). */
function snapshotBodies(corpusDir) {
  const cdpDir = path.join(corpusDir, 'chrome-devtools-mcp')
  const out = []
  if (!fs.existsSync(cdpDir)) return out
  for (const page of fs.readdirSync(cdpDir).sort()) {
    const dir = path.join(cdpDir, page)
    if (page.startsWith('_') || !fs.statSync(dir).isDirectory()) continue
    for (const file of fs.readdirSync(dir).sort()) {
      if (!file.endsWith('.json')) continue
      const json = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))
      for (const block of json.result?.content ?? []) {
        if (block.type !== 'text') continue
        const body = bodyOf(block.text)
        if (body !== null) out.push({ name: `${page}/${file.replace(/\.json$/, '')}`, body })
      }
    }
  }
  return out
}

/** Snapshot bodies of recorded sessions (jsonl steps whose result carries a snapshot). */
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
        if (block.type !== 'text') continue
        const body = bodyOf(block.text)
        if (body !== null) out.push({ name: `${path.basename(file, '.jsonl')}:${n + 1}`, body })
      }
    }
  }
  return out
}

// The index of the end of the quoted name or `[link text](url)` opening at `t[i]` (its closing
// quote or parenthesis; backslashes escape).
function skipQuoted(t, i) {
  const close = t[i] === '"' ? '"' : ']'
  for (i++; i < t.length && t[i] !== close; i++) if (t[i] === '\\') i++
  if (close === ']' && t[i + 1] === '(') {
    let open = 0
    for (i++; i < t.length; i++) {
      if (t[i] === '(') open++
      else if (t[i] === ')' && --open === 0) break
    }
  }
  return i
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
        i = skipQuoted(t, i)
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

// The floor of a notation under the decisions of issue 26 (every control inside `main` in
// place with its uid written out): each such control once, as `uid role "name"`, nothing else.
function controlFloor(body) {
  const out = []
  let mainIndent = -1
  for (const line of body.split('\n')) {
    const m = /^( *)uid=(\S+)(?: ([A-Za-z][\w-]*))?(?: ("(?:[^"\\]|\\.)*"))?/.exec(line)
    if (!m) continue
    const indent = m[1].length
    if (mainIndent >= 0 && indent <= mainIndent) mainIndent = -1
    if (mainIndent >= 0 && (INTERACTIVE.has(m[3]) || /\b(focusable|expandable)\b/.test(line))) {
      out.push([m[2], m[3] ?? '', m[4] ?? ''].filter(Boolean).join(' '))
    }
    if (m[3] === 'main' && mainIndent < 0) mainIndent = indent
  }
  return out.join('\n')
}

// Controls with a label in the raw input: an interactive node other than a link whose previous
// sibling (same indentation, same parent) is a text node (`uid=… "text"`) with a letter or
// digit. Returns [control uid, label uid].
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

// Uids written in the table rows of a filtered text (`… table of N records, …` then N lines,
// cells split by `|`): a control there is labelled by its name and its column.
function tableRowUids(text) {
  const out = new Set()
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = /^ *… table of (\d+) records, /.exec(lines[i])
    if (!m) continue
    for (const row of lines.slice(i + 1, i + 1 + Number(m[1]))) {
      for (const cell of row.trimStart().split('|')) {
        const first = cell.split(' ')[0]
        if (UID.test(first)) out.add(first)
      }
    }
  }
  return out
}

// The option uids a table's header states by its rule (`[options "A" "B": its next 2 uids]`:
// the uids right after the combobox cell's own), for every row: in place without being written.
function tableOptionUids(text) {
  const out = new Set()
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = /^ *… table of (\d+) records, a line each: (.*)$/.exec(lines[i])
    if (!m) continue
    // Written columns, in order (hidden text columns are not in the rows either).
    const cols = m[2].split(/; \d+ text cells each not written| \(uid /)[0].split(' | ')
    const counts = cols.map((c) => Number(/: its next (\d+) uids\]/.exec(c)?.[1] ?? 0))
    for (const row of lines.slice(i + 1, i + 1 + Number(m[1]))) {
      const cells = row.trimStart().split(/(?<!\\)\|/)
      cells.forEach((cell, k) => {
        const uid = cell.split(' ')[0]
        if (!counts[k] || !UID.test(uid)) return
        const [prefix, n] = uid.split('_')
        for (let j = 1; j <= counts[k]; j++) out.add(`${prefix}_${Number(n) + j}`)
      })
    }
  }
  return out
}

// The nodes of one line of our notation (indentation removed): its segments between `|`, ` > `
// and the line's ends, outside quotes and brackets, each with `child` true after the ` > `
// (the children of the node before it).
function nodeSegments(t) {
  const parts = []
  let start = 0
  let child = false
  for (let i = 0; i < t.length; i++) {
    const c = t[i]
    if (c === '\\') i++ // an escaped `|` inside a table row's text cell
    else if (c === '"' || c === '[') {
      i = skipQuoted(t, i)
    } else if (c === '|' || (c === '>' && t[i - 1] === ' ' && t[i + 1] === ' ')) {
      parts.push({ text: t.slice(start, i), child })
      if (c === '>') child = true
      start = i + 1
    }
  }
  parts.push({ text: t.slice(start), child })
  return parts
}

// The text of each uid's own segment in a filtered text (a node between `|`, `>` and the line's
// ends, outside quotes and brackets; a table row's cell), and the row line of each uid written
// in a table row.
function uidSegments(text) {
  const segments = new Map()
  const rows = new Map()
  const lines = text.split('\n')
  let tableRows = 0
  for (const line of lines) {
    const t = line.trimStart()
    const header = /^… table of (\d+) records, /.exec(t)
    if (header) { tableRows = Number(header[1]); continue }
    const inRow = tableRows > 0
    if (inRow) tableRows--
    if (t.startsWith('…') || t.startsWith('#snapshot-filter') || t.startsWith('\\')) continue
    for (const { text: part } of nodeSegments(t)) {
      const uid = part.trim().split(' ')[0]
      if (!UID.test(uid)) continue
      segments.set(uid, part.trim())
      if (inRow) rows.set(uid, t)
    }
  }
  return { segments, rows }
}

// The raw name of every uid of a snapshot body.
function rawNames(body) {
  const names = new Map()
  for (const line of body.split('\n')) {
    const m = /^ *uid=(\S+)(?: [A-Za-z][\w-]*)? "((?:[^"\\]|\\.)*)"/.exec(line)
    if (m) names.set(m[1], m[2])
  }
  return names
}

const fold = (s) => s.replace(/\s+/g, ' ').trim().toLowerCase()

// Whether a shown control is labelled in the filtered text, `label` being the text before it in
// the raw snapshot. A control whose name is its own (no other control of the page has it) names
// itself: labelled when that name is shown uncut (in its line, or by its table's header). A
// control without a name, or with one many share (`button "Edit"`, `checkbox "Select"`), needs
// its label: shown as a node, held by its uncut name, or written in its table row (a checkbox
// named only by its row counts only when its row writes the words that name it, or when its
// row's cells tell it apart from every other row's control of that name).
function labelShown(control, label, shown, seg, names, sharedNames) {
  if (shown.has(label)) return true
  if (!shown.has(control)) return false
  const words = fold(names.get(label) ?? '')
  const name = fold(names.get(control) ?? '')
  const own = seg.segments.get(control) ?? ''
  if (name && !/ cut=\d/.test(own) && (!sharedNames.has(name) || (words && name.includes(words)))) return true
  const row = seg.rows.get(control)
  if (row === undefined) return false
  if (Boolean(words) && fold(row).includes(words)) return true
  // In a table row, the text before a control is the previous column's cell (a date before
  // `button "Edit Ada Lovelace"`), not its label: the row tells the control apart when no other
  // row holding a control of the same name writes the same cells (two users named alike, one
  // an Owner, one a Guest).
  if (!name || / cut=\d/.test(own)) return false
  return (seg.rowTwins ??= rowTwins(seg, names)).get(`${name}\n${rowCells(row)}`) === 1
}

// A table row's written cells without their uids (folded).
const rowCells = (row) => fold(row.replace(/(^|\|)\d+_\d+ ?/g, '$1'))

// How many table rows hold a control of each name with each row's cells (`name\ncells`).
function rowTwins(seg, names) {
  const counts = new Map()
  for (const [uid, row] of seg.rows) {
    const key = `${fold(names.get(uid) ?? '')}\n${rowCells(row)}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return counts
}

// The names (folded) that several interactive nodes of a snapshot body share.
function sharedControlNames(body) {
  const seen = new Set()
  const shared = new Set()
  for (const line of body.split('\n')) {
    const m = /^ *uid=\S+ ([A-Za-z][\w-]*) "((?:[^"\\]|\\.)*)"/.exec(line)
    if (!m || !(INTERACTIVE.has(m[1]) || /\b(focusable|expandable)\b/.test(line))) continue
    const name = fold(m[2])
    if (seen.has(name)) shared.add(name)
    seen.add(name)
  }
  return shared
}

// Whether the raw line of `uid` gives the node a non-empty name.
function namedIn(body, uid) {
  const line = body.split('\n').find((l) => l.trimStart().startsWith(`uid=${uid} `))
  return line !== undefined && /^ *uid=\S+(?: [A-Za-z][\w-]*)? "[^"]*\S/.test(line)
}

/** The page sets the README reports, in its order; `root` is the repository. */
function pageSets(corpusDir, root) {
  return [
    ['corpus pages', snapshotBodies(corpusDir)],
    ['corpus sessions', sessionBodies(path.join(corpusDir, 'sessions'))],
    ['captured docs (MCP_CAPTURED_DIR)', process.env.MCP_CAPTURED_DIR ? sessionBodies(process.env.MCP_CAPTURED_DIR) : []],
    ['own app pages (__test__/fixtures/sessions)', sessionBodies(path.join(root, '__test__', 'fixtures', 'sessions'))],
  ]
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  if (!s.length) return NaN
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

module.exports = { HEADER, INTERACTIVE, UID, snapshotBodies, sessionBodies, shownUids, nodeSegments, interactiveInMain, controlFloor, labelledControls, tableRowUids, tableOptionUids, namedIn, uidSegments, rawNames, labelShown, sharedControlNames, pageSets, median }
