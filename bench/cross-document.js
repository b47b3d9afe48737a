#!/usr/bin/env node
'use strict'
// Issue 42 item 5, measured before built (a benchmark, never a test):
//   node bench/cross-document.js SESSION.jsonl ...
// Upper bound of item 5: in each snapshot of a new document (root uid changed), the share of raw
// lines inside top-level subtrees (children of the root) equal, but for uids, to one of the
// previous document's (banner, navigation, sidebar, footer).
const { readSession, snapshotBody } = require('./replay.js')
const strip = (l) => l.replace(/uid=\S+ /, '')
function subtrees(body) {
  const lines = body.split('\n').filter((l) => l.trim())
  const out = []
  let cur = null
  for (const l of lines.slice(1)) {
    const depth = l.length - l.trimStart().length
    if (depth === 2) { cur = []; out.push(cur) }
    if (cur) cur.push(strip(l))
  }
  return { root: lines[0]?.match(/uid=(\S+)/)?.[1], trees: out.map((t) => t.join('\n')), total: lines.length }
}
let all = 0, same = 0, docs = 0
for (const f of process.argv.slice(2)) {
  let prev = null
  let fAll = 0, fSame = 0
  for (const s of readSession(f)) {
    const b = snapshotBody(s.result)
    if (b === null) continue
    const now = subtrees(b)
    if (prev && now.root !== prev.root) {
      const held = new Set(prev.trees)
      const eq = now.trees.filter((t) => held.has(t)).reduce((a, t) => a + t.split('\n').length, 0)
      fAll += now.total; fSame += eq; docs++
    }
    prev = now
  }
  all += fAll; same += fSame
  console.log(`${f.split('/').pop()}: ${fSame}/${fAll} lines of new documents in a top-level subtree equal to the previous document's`)
}
console.log(`all: ${same}/${all} (${(100 * same / all).toFixed(1)}%) over ${docs} new documents`)
