#!/usr/bin/env node
'use strict'

// The cap of a closed select's options (docs/notation.md, "A closed select"): every closed
// combobox or listbox with options in the raw chrome-devtools-mcp snapshots of the recorded
// sessions (../shared/corpus/sessions, __test__/fixtures/sessions, /work/captured when present,
// or the directories given) and of the corpus pages (../shared/corpus/chrome-devtools-mcp),
// each counted once per page and name: how many options it has, and what writing all of them
// on its line costs (estimated o200k tokens of the ` > …` part of its `light` line). Then, per
// candidate cap, how many selects show whole and what the largest one under it costs.
//
//   node bench/select-cap.js [DIR …]

const fs = require('node:fs')
const path = require('node:path')

const { estimateTokens, filterSnapshot } = require('../index.js')
const { ROOT, sessionSets, readSession, snapshotBody, defaultDirs } = require('./replay.js')

/** Raw snapshot bodies: { source, body }. */
function bodies(dirs, corpus) {
  const out = []
  for (const { files } of sessionSets(dirs)) {
    for (const file of files) {
      for (const step of readSession(file)) {
        const body = snapshotBody(step.result)
        if (body) out.push({ source: path.basename(file), body })
      }
    }
  }
  const pages = path.join(corpus, 'chrome-devtools-mcp')
  for (const page of fs.existsSync(pages) ? fs.readdirSync(pages) : []) {
    const dir = path.join(pages, page)
    if (!fs.statSync(dir).isDirectory()) continue
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const json = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))
      const body = snapshotBody(json.result ?? json)
      if (body) out.push({ source: page, body })
    }
  }
  return out
}

/** The closed selects of one raw body: { key, options, tokens }. */
function selects(source, body) {
  const lines = body.split('\n')
  const light = filterSnapshot(body, { level: 'light' }).text
  const out = []
  lines.forEach((line, i) => {
    const m = /^( *)uid=(\S+) (combobox|listbox)( "(?:[^"\\]|\\.)*")?(.*)$/.exec(line)
    if (!m || / expanded\b/.test(m[5])) return
    let options = 0
    for (const next of lines.slice(i + 1)) {
      const indent = next.length - next.trimStart().length
      if (indent <= m[1].length) break
      if (indent === m[1].length + 2 && / option "/.test(next)) options++
    }
    if (options === 0) return
    const own = light.split('\n').find((l) => l.trimStart().startsWith(`${m[2]} ${m[3]}`)) ?? ''
    const after = own.indexOf(' > ')
    out.push({ key: `${source} ${m[3]}${m[4] ?? ''}`, options, tokens: after < 0 ? null : estimateTokens(own.slice(after + 3)) })
  })
  return out
}

function main() {
  const given = process.argv.slice(2)
  const corpus = process.env.MCP_CORPUS_DIR ?? path.join(ROOT, '..', 'shared', 'corpus')
  const [shared, captured] = defaultDirs(corpus)
  const dirs = given.length > 0 ? given.map((d) => ({ set: d, dir: d })) : [shared, { set: 'own', dir: path.join(ROOT, '__test__', 'fixtures', 'sessions') }, captured]
  const seen = new Map()
  for (const { source, body } of bodies(dirs, corpus)) {
    for (const s of selects(source, body)) if (!seen.has(s.key)) seen.set(s.key, s)
  }
  const all = [...seen.values()].sort((a, b) => b.options - a.options)
  const counts = new Map()
  for (const s of all) counts.set(s.options, (counts.get(s.options) ?? 0) + 1)
  process.stdout.write(`${all.length} closed selects (one per page and name); options: ${[...counts].sort((a, b) => a[0] - b[0]).map(([n, c]) => `${n}×${c}`).join(', ')}\n`)
  process.stdout.write('largest:\n')
  for (const s of all.slice(0, 6)) process.stdout.write(`- ${s.key}: ${s.options} options, ${s.tokens ?? '?'} tokens on its line at light (${s.tokens ? (s.tokens / s.options).toFixed(1) : '?'} per option)\n`)
  const measured = all.filter((s) => s.tokens !== null)
  const perOption = measured.reduce((a, s) => a + s.tokens, 0) / Math.max(1, measured.reduce((a, s) => a + s.options, 0))
  process.stdout.write(`tokens per option written (all measured selects): ${perOption.toFixed(1)}\n\n| cap | selects shown whole | the largest shown whole | its options' tokens |\n| ---: | ---: | --- | ---: |\n`)
  for (const cap of [4, 10, 25, 50, 100, 200]) {
    const whole = all.filter((s) => s.options <= cap)
    const top = whole[0]
    process.stdout.write(`| ${cap} | ${whole.length}/${all.length} | ${top ? `${top.key} (${top.options})` : '—'} | ${top?.tokens ?? '—'} |\n`)
  }
}

main()
