#!/usr/bin/env node
'use strict'

// What the protocol era and per-client state (crates/core/src/era.rs) cost per result, against the filter
// they go with, measured in the same run on the same session (release build: `npm run build`).
// useClient runs before every filtered tools/call result; learnEra on initialize,
// server/discover and list results only.
//   node bench/era.js [--calls N]

const fs = require('node:fs')
const path = require('node:path')

const { FilterSession } = require('../index.js')

const calls = Number(process.argv[process.argv.indexOf('--calls') + 1]) || 400
const grid = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '__test__', 'fixtures', 'snapshots', 'grid.json'), 'utf8')).result
const line = JSON.stringify({ jsonrpc: '2.0', id: 1, result: grid })
const meta = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.0' },
})
const list = JSON.stringify({ tools: [{ name: 'take_snapshot', inputSchema: { type: 'object' } }], resultType: 'complete', ttlMs: 0, cacheScope: 'private' })
const session = new FilterSession({ filter: { level: 'moderate' }, stats: 'off', snapshotDeltas: false })

/** Mean ns of one call of `f`. */
function time(f) {
  const start = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) f()
  return Number(process.hrtime.bigint() - start) / calls
}

for (let i = 0; i < 50; i++) {
  session.useClient(meta)
  session.filterToolResponse('take_snapshot', line, '{"pageId":1}')
}
const filter = time(() => session.filterToolResponse('take_snapshot', line, '{"pageId":1}'))
const use = time(() => session.useClient(meta))
const learn = time(() => session.learnEra('tools/list', list))
const us = (ns) => `${(ns / 1000).toFixed(2)} µs`
console.log(`| call (mean of ${calls}) | time | share of filterToolResponse |`)
console.log('|---|---|---|')
console.log(`| filterToolResponse(take_snapshot, ${(line.length / 1024).toFixed(1)} KB, moderate) | ${us(filter)} | 100% |`)
console.log(`| useClient (same client) | ${us(use)} | ${((100 * use) / filter).toFixed(2)}% |`)
console.log(`| learnEra (small tools/list) | ${us(learn)} | ${((100 * learn) / filter).toFixed(2)}% |`)
