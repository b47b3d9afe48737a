#!/usr/bin/env node
// The token budget over every corpus result and every step of the recorded sessions: per level,
// budget and character bound (0: none), how many results the budget acted on, the step each of
// them ended at (the order of the steps is the README's), the largest result handed back
// (estimate, and o200k counted; characters), how many were over the budget or the bound (must
// be 0), and how many over 50,000 characters (what Claude Code would write to a file).
//
//   node bench/budget.js [corpusDir] [moreSessionDirs...]   (needs `npx napi build --platform`)
'use strict'

const { requireCorpus } = require('./corpus.js')
const fs = require('node:fs')
const path = require('node:path')
const { FilterSession, estimateTokens } = require('../index.js')
const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')

const corpusDir = requireCorpus('bench/budget.js', process.argv[2])
const extraDirs = process.argv.slice(3).concat(process.env.MCP_CAPTURED_DIR ? [process.env.MCP_CAPTURED_DIR] : [])
const LEVELS = ['light', 'moderate', 'aggressive']
// [tokens, characters]: the defaults, the defaults without the character bound, tighter token
// budgets, and the bounds of clients that cut results at 10 KB and 30 KB.
const BUDGETS = [
  [25000, 50000],
  [25000, 0],
  [10000, 50000],
  [2000, 50000],
  [25000, 30000],
  [25000, 10000],
]
const CLAUDE_CODE_CHARS = 50000
const STEPS = ['moderate', 'lean', 'aggressive', 'coarser', 'coarsest', 'cut']

function calls(dir, out = []) {
  if (!fs.existsSync(dir)) return out
  for (const name of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, name)
    if (fs.statSync(file).isDirectory()) {
      calls(file, out)
    } else if (name.endsWith('.json')) {
      let json
      try {
        json = JSON.parse(fs.readFileSync(file, 'utf8'))
      } catch {
        continue
      }
      const params = json.request?.params
      if (params?.name && json.result?.content) out.push({ tool: params.name, args: JSON.stringify(params.arguments ?? {}), result: json.result })
    } else if (name.endsWith('.jsonl')) {
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        if (!line) continue
        const step = JSON.parse(line)
        if (step.tool && step.result?.content) out.push({ tool: step.tool, args: JSON.stringify(step.args ?? {}), result: step.result })
      }
    }
  }
  return out
}

const textOf = (result) => (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n')
const tokensOf = (result) => (result.content ?? []).filter((b) => b.type === 'text').reduce((n, b) => n + estimateTokens(b.text), 0)

const all = calls(corpusDir)
for (const dir of extraDirs) calls(dir, all)
console.log(`${all.length} results (corpus ${corpusDir}${extraDirs.length ? `, and ${extraDirs.join(', ')}` : ''})\n`)
const charsOf = (result) => (result.content ?? []).filter((b) => b.type === 'text').reduce((n, b) => n + b.text.length, 0)
console.log('| level | budget (tokens / characters) | over it raw | budget acted | ended at: ' + STEPS.join(' / ') + ' | largest out (estimate / o200k) | most characters out | over the budget | over 50,000 characters |')
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const [budget, maxChars] of BUDGETS) {
  for (const level of LEVELS) {
    const session = new FilterSession({ filter: { level, maxTokens: budget, maxChars }, stats: 'inline', proxyTools: true })
    let overRaw = 0
    let acted = 0
    let over = 0
    let overClaude = 0
    let mostChars = 0
    let largest = { estimate: 0, text: '' }
    const ended = Object.fromEntries(STEPS.map((s) => [s, 0]))
    for (const call of all) {
      const raw = tokensOf(call.result)
      if (raw > budget || (maxChars > 0 && charsOf(call.result) > maxChars)) overRaw++
      const json = session.filterToolResult(call.tool, JSON.stringify(call.result), call.args)
      const out = json === null ? call.result : JSON.parse(json)
      const text = textOf(out)
      const estimate = tokensOf(out)
      const chars = charsOf(out)
      if (estimate > budget || (maxChars > 0 && chars > maxChars)) over++
      if (chars > CLAUDE_CODE_CHARS) overClaude++
      mostChars = Math.max(mostChars, chars)
      if (estimate > largest.estimate) largest = { estimate, text }
      const m = /\| token budget [^:]+: (\w+)\]/.exec(text)
      if (m) {
        acted++
        ended[m[1]]++
      }
    }
    const o200k = encode(largest.text).length
    const n = (x) => x.toLocaleString('en-US')
    console.log(`| ${level} | ${n(budget)} / ${maxChars ? n(maxChars) : 'none'} | ${overRaw} | ${acted} | ${STEPS.map((s) => ended[s]).join(' / ')} | ${n(largest.estimate)} / ${n(o200k)} | ${n(mostChars)} | ${over} | ${overClaude} |`)
  }
}
