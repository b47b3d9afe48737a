#!/usr/bin/env node
// The cases behind snapshot-levels.js' per-page-set figures: for each snapshot of each page set,
// the saving, the interactive uids inside `main` not kept in place (by role), and every control
// shown that is not labelled (snapshot-measures.js' labelShown: a name of its own shown uncut,
// else the text right before it in the raw snapshot shown as a node, held by its uncut name or
// written in its table row), with both raw lines and the marker line that hides the label.
//
//   node bench/snapshot-audit.js [--level moderate|aggressive] [--set SUBSTRING] [--all] [--condensed]
//   (needs `npx napi build --platform` first; MCP_CORPUS_DIR, MCP_CAPTURED_DIR as for snapshot-levels.js)
//   --all lists every snapshot, not only those with a control hidden in main or a label hidden;
//   --condensed sets maxCondensedRecords (every record inside main shows its controls and labels).
'use strict'

const { requireCorpus } = require('./corpus.js')
const path = require('node:path')
const { filterSnapshot } = require('../index.js')
const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')
const { shownUids, tableOptionUids, interactiveInMain, labelledControls, uidSegments, rawNames, labelShown, sharedControlNames, pageSets } = require('./snapshot-measures.js')

const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : fallback
}
const level = opt('--level', 'moderate')
const only = opt('--set', '')
const all = args.includes('--all')
const options = { level, ...(args.includes('--condensed') ? { maxCondensedRecords: 100000 } : {}) }
const corpusDir = requireCorpus('bench/snapshot-audit.js')

function rawLines(body) {
  const byUid = new Map()
  const roleOf = new Map()
  for (const line of body.split('\n')) {
    const m = /^ *uid=(\S+)(?: ([A-Za-z][\w-]*))?/.exec(line)
    if (!m || byUid.has(m[1])) continue
    byUid.set(m[1], line.trim().slice(0, 120))
    roleOf.set(m[1], m[2] ?? 'text')
  }
  return { byUid, roleOf }
}

/** The marker line of `out` that names `uid` (listed, or in a range by raw document order). */
function markerFor(out, uid, order) {
  const at = order.get(uid)
  for (const line of out.split('\n')) {
    const t = line.trim()
    if (!t.startsWith('…') && !t.includes("'…")) continue
    const m = /uid ([^)]*)\)/.exec(t)
    if (!m) continue
    const [a, b] = m[1].split('…')
    if (b === undefined ? m[1].split(', ').includes(uid) : order.get(a) <= at && at <= order.get(b)) return t.slice(0, 160)
  }
  return '(no marker)'
}

for (const [setName, bodies] of pageSets(corpusDir, path.join(__dirname, '..'))) {
  if (!bodies.length || !setName.includes(only)) continue
  console.log(`\n## ${setName} (${bodies.length} snapshots, ${level})\n`)
  let labelled = 0
  let missingLabels = 0
  for (const { name, body } of bodies) {
    const r = filterSnapshot(body, options)
    const saved = 1 - encode(r.text).length / encode(body).length
    const shown = new Set([...shownUids(r.text), ...tableOptionUids(r.text)])
    const seg = uidSegments(r.text)
    const names = rawNames(body)
    const sharedNames = sharedControlNames(body)
    const { byUid, roleOf } = rawLines(body)
    const order = new Map([...byUid.keys()].map((u, i) => [u, i]))
    const inMain = interactiveInMain(body)
    const lost = inMain.filter((u) => !shown.has(u))
    const lostRoles = {}
    for (const u of lost) lostRoles[roleOf.get(u)] = (lostRoles[roleOf.get(u)] ?? 0) + 1
    const unlabelled = []
    for (const [control, label] of labelledControls(body)) {
      if (!shown.has(control)) continue
      labelled++
      if (!labelShown(control, label, shown, seg, names, sharedNames)) unlabelled.push([control, label])
    }
    missingLabels += unlabelled.length
    if (!all && !lost.length && !unlabelled.length) continue
    const main = inMain.length ? `${inMain.length - lost.length}/${inMain.length} main controls in place` : 'no main'
    const roles = Object.entries(lostRoles).map(([k, v]) => `${k} ${v}`).join(', ')
    console.log(`- ${name}: saved ${(100 * saved).toFixed(1)}%, ${main}${roles ? ` (hidden: ${roles})` : ''}, ${unlabelled.length} control(s) not labelled`)
    for (const [control, label] of unlabelled) {
      console.log(`    control ${byUid.get(control)}`)
      console.log(`    label   ${byUid.get(label)}`)
      console.log(`    hidden by ${markerFor(r.text, label, order)}`)
    }
  }
  console.log(`\n${labelled - missingLabels}/${labelled} controls shown are labelled`)
}
