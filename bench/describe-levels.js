#!/usr/bin/env node
// Description compression per server and level: o200k tokens of the description text and of
// the whole list result, before and after compressListResult. Medians across servers.
//
//   node bench/describe-levels.js [--compact] [--corpus DIR] [--json]
'use strict'

const { requireCorpus } = require('./corpus.js')

const fs = require('node:fs')
const { compressListResult } = require('..')
const { ITEMS, listServers } = require('./corpus-lists.js')

const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')
const tokens = (text) => encode(text).length

const args = process.argv.slice(2)
const corpusArg = args.indexOf('--corpus')
const corpus = requireCorpus('bench/describe-levels.js', corpusArg >= 0 ? args[corpusArg + 1] : undefined)
const compact = args.includes('--compact')
const asJson = args.includes('--json')

const SCHEMA_ONE = ['items', 'additionalProperties', 'additionalItems', 'unevaluatedProperties', 'unevaluatedItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else', 'contentSchema']
const SCHEMA_ARRAY = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']

// The prose descriptions of a list result, in the same places the Rust walker looks.
function descriptions(method, result) {
  const texts = []
  const schema = (root) => {
    const stack = [root]
    while (stack.length) {
      const node = stack.pop()
      if (!node || typeof node !== 'object' || Array.isArray(node)) continue
      for (const [k, v] of Object.entries(node)) {
        if (k === 'description' && typeof v === 'string') texts.push(v)
        else if (SCHEMA_ONE.includes(k) && v && typeof v === 'object' && !Array.isArray(v)) stack.push(v)
        if (SCHEMA_ARRAY.includes(k) && Array.isArray(v)) stack.push(...v)
        if (SCHEMA_MAP.includes(k) && v && typeof v === 'object') stack.push(...Object.values(v))
      }
    }
  }
  for (const item of result[ITEMS[method]] || []) {
    if (typeof item.description === 'string') texts.push(item.description)
    schema(item.inputSchema)
    schema(item.outputSchema)
    for (const arg of item.arguments || []) if (typeof arg.description === 'string') texts.push(arg.description)
  }
  return texts
}

const LEVELS = ['light', 'moderate', 'aggressive']
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const pct = (before, after) => (before ? (100 * (before - after)) / before : 0)

const rows = []
for (const server of listServers(corpus)) {
  const row = { server: server.name, descTokens: 0, listTokens: 0, levels: {} }
  const parsed = server.lists.map((l) => ({ ...l, result: JSON.parse(fs.readFileSync(l.file, 'utf8')).result }))
  for (const l of parsed) {
    const json = JSON.stringify(l.result)
    row.descTokens += descriptions(l.method, l.result).reduce((n, t) => n + tokens(t), 0)
    row.listTokens += tokens(json)
  }
  for (const level of LEVELS) {
    let desc = 0
    let list = 0
    for (const l of parsed) {
      const json = JSON.stringify(l.result)
      const out = compressListResult(l.method, json, { level, compactSchemas: compact }) ?? json
      desc += descriptions(l.method, JSON.parse(out)).reduce((n, t) => n + tokens(t), 0)
      list += tokens(out)
    }
    row.levels[level] = { desc: pct(row.descTokens, desc), list: pct(row.listTokens, list) }
  }
  rows.push(row)
}

if (asJson) {
  console.log(JSON.stringify(rows, null, 2))
} else {
  console.log(`description compression (o200k tokens saved; compactSchemas=${compact})`)
  const head = ['server'.padEnd(38), 'desc tok', 'list tok', ...LEVELS.map((l) => `${l} desc/list`.padStart(22))]
  console.log(head.join(' '))
  for (const r of rows) {
    const cells = LEVELS.map((l) => `${r.levels[l].desc.toFixed(1)}% / ${r.levels[l].list.toFixed(1)}%`.padStart(22))
    console.log([r.server.padEnd(38), String(r.descTokens).padStart(8), String(r.listTokens).padStart(8), ...cells].join(' '))
  }
  const med = LEVELS.map((l) => {
    const d = median(rows.map((r) => r.levels[l].desc))
    const w = median(rows.map((r) => r.levels[l].list))
    return `${d.toFixed(1)}% / ${w.toFixed(1)}%`.padStart(22)
  })
  console.log(['median'.padEnd(38), ''.padStart(8), ''.padStart(8), ...med].join(' '))
}
