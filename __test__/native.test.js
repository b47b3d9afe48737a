'use strict'

// The package's JS API, loaded and called exactly as a user of require('mcp-snapshot-filter') would.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const native = require('..')
const { FIXTURES } = require('./helpers.js')

const SNAPSHOT = `uid=1_0 RootWebArea "Example" url="http://127.0.0.1/"
  uid=1_1 heading "Hello" level="1"
  uid=1_2 button "Go"
`

test('exports the documented functions and class', () => {
  for (const name of ['filterToolResult', 'compressListResult', 'compressText', 'filterSnapshot']) {
    assert.equal(typeof native[name], 'function', name)
  }
  assert.equal(typeof native.FilterSession, 'function')
})

test('level off changes nothing', () => {
  const result = { content: [{ type: 'text', text: `## Latest page snapshot\n${SNAPSHOT}` }] }
  assert.equal(native.filterToolResult('take_snapshot', JSON.stringify(result), { level: 'off' }), null)
  assert.equal(native.filterSnapshot(SNAPSHOT, { level: 'off' }).text, SNAPSHOT)
  const list = fs.readFileSync(path.join(FIXTURES, 'lists', 'chrome-devtools-mcp.tools-list.json'), 'utf8')
  assert.equal(native.compressListResult('tools/list', JSON.stringify(JSON.parse(list).result), { level: 'off' }), null)
})

test('bad arguments are errors with a status code, not crashes', () => {
  assert.throws(() => native.filterSnapshot(SNAPSHOT, { level: 'extreme' }), (err) => err.code === 'InvalidArg' && /extreme/.test(err.message))
  assert.throws(() => native.filterToolResult('take_snapshot', '{not json'), (err) => err.code === 'InvalidArg')
  assert.throws(() => native.compressListResult('tools/call', '{}'), (err) => err.code === 'InvalidArg')
  assert.throws(() => native.filterSnapshot(42), (err) => err.code === 'StringExpected')
  assert.throws(() => new native.FilterSession({ filter: { level: 'nope' } }), (err) => err.code === 'InvalidArg')
})

test('a FilterSession keeps its level and summarises', () => {
  const session = new native.FilterSession({ filter: { level: 'aggressive' } })
  assert.equal(session.level, 'aggressive')
  assert.equal(typeof session.summary(), 'string')
  assert.equal(new native.FilterSession().level, 'moderate')
})
