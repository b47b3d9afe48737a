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
  for (const name of ['filterToolResult', 'compressListResult', 'compressText', 'filterSnapshot', 'expandSnapshot', 'searchSnapshot', 'isFilteredTool']) {
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

test('lastCoreTime is the core time of the last payload call once timeCore asked, inside its wall time', () => {
  // A fresh process: no call is timed until timeCore(true).
  const untimed = `const m = require(${JSON.stringify(path.join(__dirname, '..'))}); m.filterSnapshot('uid=1_0 RootWebArea "A"'); process.stdout.write(String(m.lastCoreTime()))`
  const fresh = require('node:child_process').spawnSync(process.execPath, ['-e', untimed], { encoding: 'utf8' })
  assert.equal(fresh.stdout, 'null', 'no call timed before timeCore(true)')
  native.timeCore(true)
  const wall = (call) => {
    const t0 = process.hrtime.bigint()
    call()
    const ns = Number(process.hrtime.bigint() - t0)
    const core = native.lastCoreTime()
    assert.ok(core > 0 && core <= ns, `core ${core} ns within the call's ${ns} ns`)
    return core
  }
  const big = Array.from({ length: 20_000 }, (_, i) => `  uid=1_${i + 1} button "Button number ${i}"`).join('\n')
  wall(() => native.filterSnapshot(SNAPSHOT, { level: 'moderate' }))
  const large = wall(() => native.filterSnapshot(`uid=1_0 RootWebArea "Big"\n${big}\n`, { level: 'moderate' }))
  const result = JSON.stringify({ content: [{ type: 'text', text: `## Latest page snapshot\n${SNAPSHOT}` }] })
  wall(() => native.filterToolResult('take_snapshot', result, { level: 'moderate' }))
  const list = fs.readFileSync(path.join(FIXTURES, 'lists', 'chrome-devtools-mcp.tools-list.json'), 'utf8')
  const listCore = wall(() => native.compressListResult('tools/list', JSON.stringify(JSON.parse(list).result), { level: 'moderate' }))
  assert.ok(listCore !== large, 'each call records its own time')
})

test('a FilterSession keeps its level and summarises', () => {
  const session = new native.FilterSession({ filter: { level: 'aggressive' } })
  assert.equal(session.level, 'aggressive')
  assert.equal(typeof session.summary(), 'string')
  assert.equal(new native.FilterSession().level, 'moderate')
})

test('expandSnapshot and searchSnapshot read a raw snapshot', () => {
  const subtree = native.expandSnapshot(SNAPSHOT, '1_0')
  for (const uid of ['1_0', '1_1', '1_2']) assert.ok(subtree.includes(uid), subtree)
  const run = native.expandSnapshot(SNAPSHOT, '1_1', { until: '1_2' })
  assert.ok(run.includes('1_1') && run.includes('1_2') && !run.includes('RootWebArea'), run)
  assert.throws(() => native.expandSnapshot(SNAPSHOT, '9_9'), (err) => err.code === 'InvalidArg' && /9_9/.test(err.message))
  assert.throws(() => native.expandSnapshot(SNAPSHOT, '1_2', { until: '1_1' }), (err) => err.code === 'InvalidArg')
  const hits = native.searchSnapshot(SNAPSHOT, 'GO')
  assert.match(hits, /1_2/)
  assert.doesNotMatch(hits, /1_1 heading/)
  assert.throws(() => native.searchSnapshot(SNAPSHOT, '(', { regex: true }), (err) => err.code === 'InvalidArg')
})

test('a 48-row users table is a table at moderate: every row actionable in place; maxTableText 0 and maxCondensedRecords give the earlier forms', () => {
  // __test__/site/app/users.html as chrome-devtools-mcp 1.11.0 snapshots it (recorded with
  // bench/sessions/app-own-large.json).
  const step = fs.readFileSync(path.join(FIXTURES, 'sessions', 'app-own-large.jsonl'), 'utf8').split('\n')[2]
  const text = JSON.parse(step).result.content[0].text
  const raw = text.slice(text.indexOf('## Latest page snapshot\n') + 24)
  const edits = [...raw.matchAll(/uid=(\S+) button "Edit ([^"]+)"/g)].map((m) => ({ uid: m[1], name: m[2] }))
  assert.equal(edits.length, 48)
  const shows = (out, uid) => new RegExp(`(^|[ |])${uid}([ |]|$)`, 'm').test(out)
  // By default a table: one line per row, its Edit button's uid on the line with the row's name.
  const table = native.filterSnapshot(raw, { level: 'moderate' }).text
  assert.match(table, /… table of 48 records, a line each: checkbox "Select \{name\}" \| text "\{name\}" \|/)
  for (const e of edits) {
    const line = table.split('\n').find((l) => new RegExp(`\\|${e.uid}(\\||$)`).test(l))
    assert.ok(line && line.includes(`|${e.name}|`), `${e.uid} ${e.name}`)
  }
  // Without tables rows are wholes: the first five, then one marker for the other 43.
  const plain = native.filterSnapshot(raw, { level: 'moderate', maxTableText: 0 }).text
  assert.deepEqual(edits.map((e) => shows(plain, e.uid)), edits.map((_, k) => k < 5))
  assert.match(plain, /… 43 more records hidden/)
  // Condensed (without tables): every row's Edit button shows, and so does the row's name before it.
  const condensed = native.filterSnapshot(raw, { level: 'moderate', maxCondensedRecords: 1000, maxTableText: 0 })
  for (const e of edits) {
    assert.ok(shows(condensed.text, e.uid), e.uid)
    assert.ok(condensed.text.includes(`"${e.name}"|`), e.name)
  }
  assert.match(condensed.text, /… records 6–48 below: controls and labels only, \d+ text hidden \(uid \S+…\S+\): expand_snapshot uid=\S+ until=\S+/)
  assert.ok(condensed.text.length > plain.length)
  // The table costs less than condensing.
  assert.ok(table.length < condensed.text.length, `${table.length} vs ${condensed.text.length}`)
})
