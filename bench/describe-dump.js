#!/usr/bin/env node
// Dumps every description of the corpus lists before and after compression at one level, so
// the rules' output can be read side by side (and diffed between builds).
//
//   node bench/describe-dump.js [--level moderate] [--corpus DIR] [--server NAME]
//
// --server keeps the servers whose name (as in bench/describe-levels.js) contains NAME.
'use strict'

const { requireCorpus } = require('./corpus.js')

const fs = require('node:fs')
const { compressListResult } = require('..')
const { ITEMS, listServers } = require('./corpus-lists.js')

const args = process.argv.slice(2)
const opt = (name, dflt) => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : dflt)
const level = opt('--level', 'moderate')
const only = opt('--server', null)
const corpus = requireCorpus('bench/describe-dump.js', opt('--corpus', undefined))

// Descriptions keyed by where they sit, so before and after line up even when one is dropped.
function described(method, result) {
  const out = new Map()
  const walk = (node, where) => {
    const stack = [[node, where]]
    while (stack.length) {
      const [n, w] = stack.pop()
      if (!n || typeof n !== 'object') continue
      if (Array.isArray(n)) {
        n.forEach((v, i) => stack.push([v, `${w}[${i}]`]))
        continue
      }
      for (const [k, v] of Object.entries(n)) {
        if (k === 'description' && typeof v === 'string') out.set(w, v)
        else if (v && typeof v === 'object' && !['enum', 'default', 'const', 'examples', '_meta'].includes(k)) stack.push([v, `${w}.${k}`])
      }
    }
  }
  for (const item of result[ITEMS[method]] || []) walk(item, item.name || item.uri || item.uriTemplate)
  return out
}

const lists = listServers(corpus)
  .filter((server) => !only || server.name.includes(only))
  .flatMap((server) => server.lists.map((l) => ({ ...l, server: server.name })))
for (const l of lists) {
  const json = JSON.stringify(JSON.parse(fs.readFileSync(l.file, 'utf8')).result)
  const out = compressListResult(l.method, json, { level }) ?? json
  const before = described(l.method, JSON.parse(json))
  const after = described(l.method, JSON.parse(out))
  for (const [where, text] of before) {
    console.log(`## ${l.server} ${where}`)
    console.log(`- ${text}`)
    console.log(`+ ${after.has(where) ? after.get(where) : '(dropped)'}`)
  }
}
