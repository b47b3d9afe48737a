#!/usr/bin/env node
// Side by side with the seed: the TypeScript filters this project succeeds (compiled, in
// ../shared/seed-filter/, README there), timed on the same inputs in one process, in alternating
// rounds. Per level: the bare snapshot (`filterSnapshot` against the seed's `filterSnapshot`);
// the whole result (`filterToolResult` with the default token budget, and with none, against
// the seed proxy's path: JSON.parse, each text block of a non-error result through
// `filterResponseText` or `filterEvaluateScript`, JSON.stringify). Inputs: every
// chrome-devtools-mcp tools/call result of the corpus of a tool the seed's proxy filtered.
//
//   node bench/seed.js [corpusDir] [--ms N] [--max-chars N]   (needs a release build: npm run build)
// (--max-chars: the budget path's character bound instead of the default 50,000; 0: none)
//
// Ratios are seed time ÷ ours (> 1: ours is faster), from sums of per-input medians; "median
// paired" is the median over inputs of the per-input ratio. Skipped, saying so, when the seed
// or the corpus is absent. The bare snapshot also races a floor in the same rounds: JSON.parse
// of the same bodies as JSON strings (the row `JSON.parse ÷ filterSnapshot`; target ≥ 0.35 at
// moderate).
'use strict'

const { findCorpus, BESIDE } = require('./corpus.js')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const { toolCallResults } = require('./corpus-results.js')

const ROOT = path.resolve(__dirname, '..')
const LEVELS = ['light', 'moderate', 'aggressive']
// The tools the seed's proxy filtered, and how (its README).
const RESPONSE_TOOLS = new Set(['take_snapshot', 'click', 'fill', 'fill_form', 'hover', 'press_key', 'type_text', 'navigate_page', 'list_network_requests', 'list_console_messages', 'drag', 'upload_file', 'select_page', 'wait_for'])
const EVALUATE_TOOLS = new Set(['evaluate_script', 'take_memory_snapshot'])

function args(argv) {
  const out = { corpus: null, ms: 40, maxChars: undefined }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--ms') out.ms = Number(argv[++i])
    else if (argv[i] === '--max-chars') out.maxChars = Number(argv[++i])
    else out.corpus = argv[i]
  }
  out.corpus = findCorpus(out.corpus) ?? BESIDE
  return out
}

function inputs(corpus) {
  return toolCallResults(corpus, (_, tool) => RESPONSE_TOOLS.has(tool) || EVALUATE_TOOLS.has(tool))
}

/** The snapshot section body of a result (JSON), as the native filter reads it. */
function snapshotBody(native, json) {
  for (const block of JSON.parse(json).content ?? []) {
    const body = typeof block?.text === 'string' ? native.snapshotBody(block.text) : null
    if (body !== null) return body
  }
  return null
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** Alternating rounds of each function in `fns` on one input until `ms` is spent (≥ 7 rounds). */
function race(fns, ms) {
  for (const f of fns) f() // warm-up
  const times = fns.map(() => [])
  const start = process.hrtime.bigint()
  const budget = BigInt(Math.round(ms * 1e6))
  while (times[0].length < 7 || (process.hrtime.bigint() - start < budget && times[0].length < 2000)) {
    fns.forEach((f, i) => {
      const t0 = process.hrtime.bigint()
      f()
      times[i].push(Number(process.hrtime.bigint() - t0))
    })
  }
  return times.map(median)
}

function fmt(x) {
  return Number.isFinite(x) ? x.toFixed(2) : '–'
}

async function main() {
  const opts = args(process.argv.slice(2))
  // Beside the corpus (../shared holds both), else beside the repository.
  const seedDir = [path.join(opts.corpus, '..', 'seed-filter'), path.join(ROOT, '..', 'shared', 'seed-filter')].find((d) => fs.existsSync(path.join(d, 'filters', 'index.js'))) || path.join(ROOT, '..', 'shared', 'seed-filter')
  if (!fs.existsSync(path.join(seedDir, 'filters', 'index.js')) || !fs.existsSync(opts.corpus)) {
    console.log(`SKIPPED: the seed filter (${seedDir}) or the corpus (${opts.corpus}) is absent; nothing compared.`)
    return
  }
  const native = require(path.join(ROOT, 'index.js'))
  const seedUrl = (f) => pathToFileURL(path.join(seedDir, f)).href
  const { filterResponseText } = await import(seedUrl('filters/index.js'))
  const { filterSnapshot } = await import(seedUrl('filters/snapshot-filter.js'))
  const { filterEvaluateScript } = await import(seedUrl('filters/evaluate-filter.js'))
  const { PRESETS } = await import(seedUrl('config.js'))
  const seedResult = (tool, json, config) => {
    const result = JSON.parse(json)
    if (result.isError) return json
    const filter = EVALUATE_TOOLS.has(tool) ? filterEvaluateScript : filterResponseText
    for (const block of result.content) if (block.type === 'text' && typeof block.text === 'string') block.text = filter(block.text, config)
    return JSON.stringify(result)
  }
  const all = inputs(opts.corpus)
  if (all.length === 0) {
    console.log(`SKIPPED: no chrome-devtools-mcp results under ${opts.corpus}; nothing compared.`)
    return
  }
  const bodies = all.map((c) => snapshotBody(native, c.json)).filter((b) => b !== null)
  const encodedBodies = bodies.map((b) => JSON.stringify(b))
  const mb = all.reduce((n, c) => n + Buffer.byteLength(c.json), 0) / 1e6
  const chars = opts.maxChars === undefined ? 'the default character bound' : `a character bound of ${opts.maxChars}`
  console.log(`${all.length} results (${fmt(mb)} MB), ${bodies.length} snapshot bodies; ${opts.ms} ms of alternating rounds per input and level; default budget: 25,000 tokens, ${chars}.\n`)
  console.log('| path | level | seed ms | ours ms | seed ÷ ours (sums) | median paired | target |')
  console.log('| --- | --- | ---: | ---: | ---: | ---: | --- |')
  for (const level of LEVELS) {
    const config = PRESETS[level]
    let seedMs = 0
    let oursMs = 0
    let parseMs = 0
    const paired = []
    const pairedParse = []
    for (const [k, body] of bodies.entries()) {
      // The floor: JSON.parse of the body as a JSON string, work every client does anyway.
      const encoded = encodedBodies[k]
      const [s, o, p] = race([() => filterSnapshot(body, config), () => native.filterSnapshot(body, { level }), () => JSON.parse(encoded)], opts.ms)
      seedMs += s / 1e6
      oursMs += o / 1e6
      parseMs += p / 1e6
      paired.push(s / o)
      pairedParse.push(p / o)
    }
    console.log(`| bare snapshot, filterSnapshot | ${level} | ${fmt(seedMs)} | ${fmt(oursMs)} | ${fmt(seedMs / oursMs)} | ${fmt(median(paired))} | |`)
    const floorTarget = level === 'moderate' ? `≥ 0.35: ${parseMs / oursMs >= 0.35 ? 'met' : 'NOT met'}` : ''
    console.log(`| bare snapshot, JSON.parse of the same bodies ÷ filterSnapshot (JSON.parse ms in the seed column) | ${level} | ${fmt(parseMs)} | ${fmt(oursMs)} | ${fmt(parseMs / oursMs)} | ${fmt(median(pairedParse))} | ${floorTarget} |`)
    const sum = [0, 0, 0]
    const pairedBudget = []
    const pairedNone = []
    const pairedOwn = []
    for (const c of all) {
      const [s, b, n] = race([() => seedResult(c.tool, c.json, config), () => native.filterToolResult(c.tool, c.json, { level, maxChars: opts.maxChars }), () => native.filterToolResult(c.tool, c.json, { level, maxTokens: 0 })], opts.ms)
      sum[0] += s / 1e6
      sum[1] += b / 1e6
      sum[2] += n / 1e6
      pairedBudget.push(s / b)
      pairedNone.push(s / n)
      pairedOwn.push(n / b)
    }
    const met = (x, t) => `≥ ${t}: ${x >= t ? 'met' : 'NOT met'}`
    console.log(`| whole result, filterToolResult, default budget | ${level} | ${fmt(sum[0])} | ${fmt(sum[1])} | ${fmt(sum[0] / sum[1])} | ${fmt(median(pairedBudget))} | ${met(sum[0] / sum[1], 2)} |`)
    console.log(`| whole result, filterToolResult, no budget | ${level} | ${fmt(sum[0])} | ${fmt(sum[2])} | ${fmt(sum[0] / sum[2])} | ${fmt(median(pairedNone))} | |`)
    console.log(`| default budget ÷ no budget (no-budget ms ÷ budget ms) | ${level} | | | ${fmt(sum[2] / sum[1])} | ${fmt(median(pairedOwn))} | ${met(sum[2] / sum[1], 0.8)} |`)
  }
  console.log('\nSeed: `../shared/seed-filter` (PRESETS per level); its light caps at 1,000 nodes, ours is lossless, so light compares unlike work. Sums of per-input medians; the same inputs, alternating rounds, one process.')
}

main().catch((err) => {
  console.error(err.stack ?? err)
  process.exit(1)
})
