#!/usr/bin/env node
'use strict'

const { requireCorpus } = require('./corpus.js')

// Two builds of the native filter side by side (A before a change, B after it), in one process:
// every chrome-devtools-mcp tools/call result of the corpus through `filterToolResult` at a level,
// with the default token budget or none, the two builds alternating call by call. Prints the sums
// of per-input medians and A ÷ B (> 1: B is faster), and any result the two builds write
// differently (a change meant to keep outputs must print none). A measuring aid for a change's
// description, not a test; a loaded machine slows both builds alike, call by call.
//
//   node bench/ab.js A/index.js B/index.js [--level L] [--no-budget] [--only SUBSTRING]
//                    [--corpus DIR]
//
// (Build the tree before a change in a worktree: `git worktree add --detach /tmp/before REV`,
// then `npm install` or a symlinked node_modules, and `npm run build` there.)

const path = require('node:path')

const { toolCallResults } = require('./corpus-results.js')


function args(argv) {
  const out = { builds: [], level: 'light', budget: true, only: '', corpus: null }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--level') out.level = argv[++i]
    else if (a === '--no-budget') out.budget = false
    else if (a === '--only') out.only = argv[++i]
    else if (a === '--corpus') out.corpus = argv[++i]
    else if (a === '--help' || a === '-h') out.help = true
    else out.builds.push(path.resolve(a))
  }
  out.corpus = requireCorpus('bench/ab.js', out.corpus)
  return out
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

function main() {
  const opts = args(process.argv.slice(2))
  if (opts.help || opts.builds.length !== 2) {
    console.log('usage: node bench/ab.js A/index.js B/index.js [--level L] [--no-budget] [--only SUBSTRING] [--corpus DIR]')
    process.exitCode = opts.help ? 0 : 2
    return
  }
  const all = toolCallResults(opts.corpus, (file) => file.includes(opts.only))
  if (all.length === 0) {
    console.log(`SKIPPED: no chrome-devtools-mcp tools/call result under ${opts.corpus}; nothing compared.`)
    return
  }
  const [a, b] = opts.builds.map((p) => require(p))
  const options = { level: opts.level, ...(opts.budget ? {} : { maxTokens: 0 }) }
  let sumA = 0
  let sumB = 0
  let differ = 0
  for (const input of all) {
    const call = (lib) => lib.filterToolResult(input.tool, input.json, options)
    if (call(a) !== call(b)) {
      differ++
      console.log(`differs: ${input.file}`)
    }
    // About 20 MB through each build per input, 5 to 200 calls.
    const calls = Math.max(5, Math.min(200, Math.round(2e7 / input.json.length)))
    const ta = []
    const tb = []
    for (let i = 0; i < calls; i++) {
      // Alternating which goes first, so neither always runs on the other's warm cache.
      const order = i % 2 === 0 ? [[a, ta], [b, tb]] : [[b, tb], [a, ta]]
      for (const [lib, times] of order) {
        const t0 = process.hrtime.bigint()
        call(lib)
        times.push(Number(process.hrtime.bigint() - t0))
      }
    }
    sumA += median(ta) / 1e6
    sumB += median(tb) / 1e6
  }
  const budget = opts.budget ? 'default budget' : 'no budget'
  console.log(`${all.length} results at ${opts.level}, ${budget}: A ${sumA.toFixed(2)} ms, B ${sumB.toFixed(2)} ms (sums of per-input medians), A ÷ B ${(sumA / sumB).toFixed(3)}; ${differ} written differently`)
}

main()
