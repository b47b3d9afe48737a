#!/usr/bin/env node
'use strict'

const { requireCorpus } = require('./corpus.js')

// The token estimate (crates/core/src/tokens.rs, `estimateTokens`) against o200k_base on the corpus: every
// distinct text the proxy reads or writes (raw and filtered tool results at each level,
// structuredContent, list results raw and compressed). Prints the ratio estimate / o200k.
// With --adversarial it prints the same ratio on texts that cost o200k more per byte than prose
// (__test__/adversarial-texts.js at 20,000 characters: runs, base64, hex, digits, every plane).
// With --fit it also refits the model's weights (weighted least squares on the relative error,
// then scaled so that no text of 50 tokens or more is under-estimated) over features counted
// by a JS mirror of crates/core/src/tokens.rs, to paste into crates/core/src/tokens.rs.
//
//   node bench/tokens.js [--fit] [--adversarial]   (MCP_CORPUS_DIR, else ../shared/corpus)
// The floors of crates/core/src/tokens.rs (long letter runs, DIGIT ≥ 334, BACKSLASH ≥ 650, controls,
// non-ASCII by UTF-8 length) are not refitted: they hold the adversarial texts.

const fs = require('node:fs')
const path = require('node:path')

const native = require('../index.js')
const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')

// Only the corpus run needs it (--adversarial runs on the repository's own texts).
const corpus = process.argv.includes('--adversarial') ? null : requireCorpus('bench/tokens.js')
const LEVELS = ['light', 'moderate', 'aggressive']
const SAFE_FROM_TOKENS = 50

function jsonFiles(dir) {
  const out = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const f = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...jsonFiles(f))
    else if (e.name.endsWith('.json')) out.push(f)
  }
  return out.sort()
}

const textOf = (result) => result.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n')

/** Every distinct non-empty text: [{ file, kind, text }]. */
function corpusTexts() {
  const texts = []
  for (const server of ['chrome-devtools-mcp', 'chrome-devtools-mcp-structured', 'playwright-mcp', 'servers']) {
    for (const file of jsonFiles(path.join(corpus, server))) {
      let doc
      try {
        doc = JSON.parse(fs.readFileSync(file, 'utf8'))
      } catch {
        continue
      }
      const result = doc.result
      if (!result || typeof result !== 'object') continue
      const rel = path.relative(corpus, file)
      if (Array.isArray(result.content)) {
        const tool = doc.request?.params?.name
        texts.push({ file: rel, kind: 'raw', text: textOf(result) })
        if (result.structuredContent) texts.push({ file: rel, kind: 'structuredContent', text: JSON.stringify(result.structuredContent) })
        for (const level of LEVELS) {
          const session = new native.FilterSession({ filter: { level }, stats: 'off' })
          const out = session.filterToolResult(tool, JSON.stringify(result), JSON.stringify(doc.request?.params?.arguments ?? {}))
          if (out) texts.push({ file: rel, kind: level, text: textOf(JSON.parse(out)) })
        }
      } else if (typeof doc.request?.method === 'string' && doc.request.method.endsWith('/list')) {
        const json = JSON.stringify(result)
        texts.push({ file: rel, kind: 'list', text: json })
        for (const level of ['moderate', 'aggressive']) {
          const out = native.compressListResult(doc.request.method, json, { level })
          if (out) texts.push({ file: rel, kind: `list ${level}`, text: out })
        }
      }
    }
  }
  const seen = new Set()
  return texts.filter((t) => t.text !== '' && !seen.has(t.text) && seen.add(t.text))
}

const FEATURES = ['WORD', 'LETTER', 'CAMEL', 'DIGIT_RUN', 'DIGIT', 'PUNCT', 'NEWLINE', 'EXTRA_SPACE', 'NON_ASCII', 'PUNCT_RUN', 'BACKSLASH']

/** The counts crates/core/src/tokens.rs weighs, in FEATURES order (a mirror of its model: each byte's
 * weight depends on the byte and on the class of the byte before it, nothing else). */
function features(text) {
  const f = new Array(FEATURES.length).fill(0)
  const cls = (b) => {
    if (b >= 0x61 && b <= 0x7a) return 'lower'
    if (b >= 0x41 && b <= 0x5a) return 'upper'
    if (b >= 0x30 && b <= 0x39) return 'digit'
    if (b === 0x20) return 'space'
    if (b >= 0x21 && b <= 0x7e) return 'punct'
    return 'other'
  }
  let prev = 'other'
  for (const b of Buffer.from(text)) {
    const c = cls(b)
    if (c === 'lower' || c === 'upper') {
      f[1]++
      const inWord = prev === 'lower' || prev === 'upper'
      if (!inWord) f[0]++
      else if (c === 'upper' && prev === 'lower') f[2]++
    } else if (c === 'digit') {
      f[4]++
      if (prev !== 'digit') f[3]++
    } else if (c === 'space') {
      if (prev === 'space') f[7]++
    } else if (c === 'punct') {
      f[5]++
      if (b === 0x5c) f[10]++
      if (prev !== 'punct') f[9]++
    } else if (b === 0x0a) f[6]++
    else if (b >= 0xc0) f[8]++
    prev = c
  }
  return f
}

/** Least squares minimising the relative error, by normal equations (few features). */
function fit(rows) {
  const n = FEATURES.length
  const a = Array.from({ length: n }, () => new Array(n + 1).fill(0))
  for (const { x, y } of rows) {
    const w = 1 / (y * y)
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) a[i][j] += w * x[i] * x[j]
      a[i][n] += w * x[i] * y
    }
  }
  for (let i = 0; i < n; i++) {
    let p = i
    for (let k = i + 1; k < n; k++) if (Math.abs(a[k][i]) > Math.abs(a[p][i])) p = k
    ;[a[i], a[p]] = [a[p], a[i]]
    for (let k = 0; k < n; k++) {
      if (k === i) continue
      const factor = a[k][i] / a[i][i]
      for (let j = i; j <= n; j++) a[k][j] -= factor * a[i][j]
    }
  }
  const coef = a.map((row, i) => row[n] / row[i])
  const ratios = rows.filter((r) => r.y >= SAFE_FROM_TOKENS).map((r) => r.x.reduce((s, v, i) => s + v * coef[i], 0) / r.y)
  const scale = 1 / Math.min(...ratios)
  return coef.map((c) => Math.ceil(c * scale * 1000))
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

function adversarial() {
  const { adversarialTexts } = require('../__test__/adversarial-texts.js')
  const rows = Object.entries(adversarialTexts(20000)).map(([name, text]) => {
    const o200k = encode(text).length
    const est = native.estimateTokens(text)
    return { name, chars: text.length, o200k, est, r: est / o200k }
  })
  rows.sort((a, b) => a.r - b.r)
  console.log('| text | characters | o200k | estimate | estimate / o200k |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const x of rows) console.log(`| ${x.name} | ${x.chars} | ${x.o200k} | ${x.est} | ${x.r.toFixed(2)} |`)
  const under = rows.filter((x) => x.r < 1)
  console.log(`\nunder-estimated: ${under.length} of ${rows.length}${under.length ? ` (${under.map((x) => x.name).join(', ')})` : ''}`)
}

function main() {
  if (process.argv.includes('--adversarial')) {
    adversarial()
    return
  }
  const texts = corpusTexts()
  let tokens = 0
  let estimated = 0
  let bytes = 0
  let under = 0
  const ratios = []
  const byBytes = []
  const rows = []
  for (const t of texts) {
    const o200k = encode(t.text).length
    const est = native.estimateTokens(t.text)
    const b = Buffer.byteLength(t.text)
    tokens += o200k
    estimated += est
    bytes += b
    if (est < o200k) under++
    ratios.push({ r: est / o200k, t, o200k, est })
    byBytes.push(b / 3.4 / o200k)
    rows.push({ x: features(t.text), y: o200k })
  }
  ratios.sort((a, b) => a.r - b.r)
  byBytes.sort((a, b) => a - b)
  const r = ratios.map((x) => x.r)
  const f = (x) => x.toFixed(3)
  console.log(`corpus: ${corpus}`)
  console.log(`${texts.length} distinct texts, ${bytes.toLocaleString('en-US')} bytes, ${tokens.toLocaleString('en-US')} o200k tokens, ${estimated.toLocaleString('en-US')} estimated (${f(estimated / tokens)}x overall)`)
  console.log(`estimate / o200k per text: min ${f(r[0])}, p5 ${f(quantile(r, 0.05))}, median ${f(quantile(r, 0.5))}, p95 ${f(quantile(r, 0.95))}, max ${f(r.at(-1))}; under-estimated: ${under} of ${texts.length}`)
  console.log(`(bytes / 3.4 for comparison: min ${f(byBytes[0])}, median ${f(quantile(byBytes, 0.5))}, max ${f(byBytes.at(-1))})`)
  console.log('lowest ratios:')
  for (const x of ratios.slice(0, 5)) console.log(`  ${f(x.r)}  ${x.est} vs ${x.o200k}  ${x.t.kind}  ${x.t.file}`)
  if (process.argv.includes('--fit')) {
    const weights = fit(rows)
    console.log('\nrefitted weights (thousandths of a token) for crates/core/src/tokens.rs:')
    for (let i = 0; i < FEATURES.length; i++) console.log(`const ${FEATURES[i]}: u64 = ${weights[i]};`)
  }
}

main()
