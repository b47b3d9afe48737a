#!/usr/bin/env node
'use strict'

// Where a session's snapshot tokens go with deltas on (a benchmark, never a test):
//
//   node bench/identity-breakdown.js [--level moderate] [--lines N] SESSION.jsonl ...
//
// Replays each session through the real bin (moderate, deltas on; bench/replay.js) and prints,
// per snapshot, how it was sent (the header line), its o200k tokens, and its written lines
// (run lines and comments aside) split by what the agent already holds of that page from
// earlier outputs: the same line with the same uids ("held"), the same line but for its uids
// ("renumbered": what identity could have kept), or a line it was never shown ("new"). With
// --lines N, the first N "renumbered" lines of each snapshot are printed too.

const { readSession, snapshotBody, snapshotSection, replay } = require('./replay.js')

const UID = /\b\d+_\d+\b/g
// A `… N unchanged …`/`… removed …`/table header line, or a comment: not a node the page wrote.
const NOT_A_NODE = /^\s*(…|#)/

function signature(line) {
  return line.replace(UID, '#').trim()
}

async function main() {
  const args = process.argv.slice(2)
  let level = 'moderate'
  let showLines = 0
  const files = []
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--level') level = args[++i]
    else if (args[i] === '--lines') showLines = Number(args[++i])
    else files.push(args[i])
  }
  const { countTokens } = require('gpt-tokenizer/encoding/o200k_base')
  const sum = { all: 0, held: 0, renumbered: 0, new: 0, whole: 0 }
  for (const file of files) {
    const steps = readSession(file)
    const got = await replay(steps, [`--filter-level=${level}`, '--snapshot-deltas=on', '--stats=off'])
    process.stdout.write(`\n## ${file}\n\n| step | tool | tokens | held | renumbered | new | how it was sent |\n| ---: | --- | ---: | ---: | ---: | ---: | --- |\n`)
    // Per page: every line the agent was shown (exact), and their signatures.
    const heldOf = new Map()
    for (const { step, text } of got) {
      if (snapshotBody(step.result) === null) continue
      const section = snapshotSection(text)
      if (section === null) continue
      const page = JSON.stringify(step.args?.pageId ?? null)
      if (!heldOf.has(page)) heldOf.set(page, { exact: new Set(), sigs: new Set() })
      const held = heldOf.get(page)
      const lines = section.split('\n')
      const header = lines.find((l) => l.includes('snapshot-filter snapshot')) ?? '(as it came)'
      const t = { held: 0, renumbered: 0, new: 0 }
      const renumberedLines = []
      for (const line of lines) {
        if (line.trim() === '' || NOT_A_NODE.test(line)) continue
        const tokens = countTokens(line + '\n')
        const sig = signature(line)
        if (held.exact.has(line.trim())) t.held += tokens
        else if (held.sigs.has(sig)) {
          t.renumbered += tokens
          renumberedLines.push(line)
        } else t.new += tokens
      }
      for (const line of lines) {
        if (line.trim() === '' || NOT_A_NODE.test(line)) continue
        held.exact.add(line.trim())
        held.sigs.add(signature(line))
      }
      const all = countTokens(section)
      sum.all += all
      sum.held += t.held
      sum.renumbered += t.renumbered
      sum.new += t.new
      if (header.includes(', full:')) sum.whole += all
      const how = header.replace(/^.*snapshot-filter /, '').slice(0, 110)
      process.stdout.write(`| ${step.step} | ${step.tool} | ${all} | ${t.held} | ${t.renumbered} | ${t.new} | ${how} |\n`)
      for (const line of renumberedLines.slice(0, showLines)) process.stdout.write(`|  |  |  |  |  |  | \`${line.trim().slice(0, 100)}\` |\n`)
    }
  }
  process.stdout.write(`\nAll snapshot sections: ${sum.all} o200k tokens, ${sum.whole} of them in whole snapshots; node lines already held: ${sum.held}, held but for their uids: ${sum.renumbered}, new: ${sum.new}.\n`)
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`)
  process.exit(1)
})
