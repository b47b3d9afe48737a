'use strict'

// The savings ledger: a proxy session appends one line of counts at its end (never content),
// `mcp-snapshot-filter stats` sums them per day and per upstream tool; --no-ledger and
// MCP_SNAPSHOT_FILTER_LEDGER=off write nothing; the file is never written through a symlink.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { FIXTURES, INIT, BIN, proxyCommand, spawnRaw } = require('./helpers.js')
const ledger = require('../bin/ledger.js')
const stats = require('../bin/stats.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const SNAPSHOTS = path.join(FIXTURES, 'snapshots')

function scratchState() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'msf-ledger-'))
}

/** One proxy session over the fixture upstream: two snapshots and a tools/list, then EOF. */
async function session(env, proxyArgs = []) {
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE], proxyArgs), {
    env: { ...process.env, FIXTURE_REPLAY_DIR: SNAPSHOTS, ...env },
  })
  proxy.send(INIT)
  let id = 0
  for (const fixture of ['grid', 'megamenu']) {
    const n = ++id
    proxy.send({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'take_snapshot', arguments: { pageId: 1, fixture } } })
    await proxy.waitFor((m) => m.id === n)
  }
  proxy.child.stdin.end()
  const { code } = await proxy.exited
  assert.equal(code, 0, proxy.stderr())
  return proxy
}

function runStats(args, env) {
  return spawnSync(process.execPath, [BIN, 'stats', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' })
}

test('a session appends its counts, and stats shows them per day and per tool', async () => {
  const state = scratchState()
  const env = { XDG_STATE_HOME: state, MCP_SNAPSHOT_FILTER_LEDGER: 'on' }
  await session(env)
  await session(env)
  const file = path.join(state, 'mcp-snapshot-filter', 'ledger.jsonl')
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n')
  assert.equal(lines.length, 2)
  const entry = JSON.parse(lines[0])
  assert.deepEqual(Object.keys(entry).sort(), ['day', 'end', 'level', 'tools', 'upstream', 'v'])
  assert.equal(entry.level, 'moderate')
  assert.equal(entry.upstream, 'fixture-server')
  assert.deepEqual(Object.keys(entry.tools), ['take_snapshot'])
  const t = entry.tools.take_snapshot
  assert.equal(t.results, 2)
  assert.equal(t.shrunk, 2)
  assert.ok(t.bytesIn > t.bytesOut && t.tokensIn > t.tokensOut, JSON.stringify(t))
  // Counts only: no page text, no uid, no argument.
  assert.doesNotMatch(lines.join('\n'), /uid|Acme|fixture"|pageId|RootWebArea/)
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
  assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700)

  const r = runStats([], { XDG_STATE_HOME: state })
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /2 sessions/)
  assert.ok(r.stdout.includes(`| ${entry.day} |        2 |`), r.stdout)
  assert.match(r.stdout, /\| fixture-server \| take_snapshot \|\s+4 of 4 \|/)
  const json = JSON.parse(runStats(['--json'], { XDG_STATE_HOME: state }).stdout)
  assert.equal(json.total.sessions, 2)
  assert.equal(json.total.bytesIn, 2 * t.bytesIn)
  assert.equal(json.tools[0].tokensOut, 2 * t.tokensOut)
  // Each row counts the sessions in which its tool had results (issue 41, item 14: it was 0).
  assert.equal(json.tools[0].sessions, 2)
})

test('--no-ledger and MCP_SNAPSHOT_FILTER_LEDGER=off write nothing', async () => {
  const state = scratchState()
  await session({ XDG_STATE_HOME: state, MCP_SNAPSHOT_FILTER_LEDGER: 'on' }, ['--no-ledger'])
  await session({ XDG_STATE_HOME: state, MCP_SNAPSHOT_FILTER_LEDGER: 'off' })
  assert.deepEqual(fs.readdirSync(state), [])
  const r = runStats([], { XDG_STATE_HOME: state })
  assert.equal(r.status, 0)
  assert.match(r.stdout, /no ledger yet at .*ledger\.jsonl/)
})

test('the ledger is never written through a symlink, nor into a file of another kind', () => {
  const state = scratchState()
  const dir = path.join(state, 'mcp-snapshot-filter')
  fs.mkdirSync(dir)
  const target = path.join(state, 'victim.txt')
  fs.writeFileSync(target, 'keep me\n')
  const file = path.join(dir, 'ledger.jsonl')
  fs.symlinkSync(target, file)
  const entry = { v: 1, day: '2026-12-01', end: 'x', upstream: 'u', level: 'moderate', tools: { t: { results: 1 } } }
  assert.throws(() => ledger.append(entry, file), /ELOOP|symbolic|not a regular/)
  assert.equal(fs.readFileSync(target, 'utf8'), 'keep me\n')
  fs.unlinkSync(file)
  fs.mkdirSync(file)
  assert.throws(() => ledger.append(entry, file), /EISDIR|not a regular/)
  // A symlinked state directory is refused too.
  const other = scratchState()
  const linked = path.join(other, 'mcp-snapshot-filter')
  fs.symlinkSync(state, linked)
  assert.throws(() => ledger.append(entry, path.join(linked, 'ledger.jsonl')), /not a directory/)
})

test('stats sums per day and per tool, keeps --days, skips unreadable lines', () => {
  const state = scratchState()
  const file = path.join(state, 'mcp-snapshot-filter', 'ledger.jsonl')
  const row = (results, bytesIn, bytesOut) => ({ results, shrunk: results, bytesIn, bytesOut, tokensIn: bytesIn / 4, tokensOut: bytesOut / 4 })
  ledger.append({ v: 1, day: '2026-11-20', end: '', upstream: 'chrome-devtools-mcp', level: 'moderate', tools: { take_snapshot: row(2, 40000, 8000) } }, file)
  ledger.append({ v: 1, day: '2026-12-01', end: '', upstream: 'chrome-devtools-mcp', level: 'moderate', tools: { take_snapshot: row(1, 20000, 4000), list_network_requests: row(1, 4000, 3000) } }, file)
  fs.appendFileSync(file, 'not json\n')
  const out = []
  const code = stats.main(['--days', '3'], { stdout: { write: (s) => out.push(s) }, stderr: { write: () => {} }, env: { XDG_STATE_HOME: state }, now: new Date(2026, 11, 1, 12) })
  assert.equal(code, 0)
  const text = out.join('')
  assert.match(text, /1 session, 2026-12-01 to 2026-12-01/)
  assert.match(text, /1 line of the file is not a ledger entry/)
  assert.doesNotMatch(text, /2026-11-20/)
  assert.match(text, /\| chrome-devtools-mcp \| take_snapshot\s+\|\s+1 of 1 \|\s+20\.0 KB \|\s+4\.0 KB \|\s+−80% \|\s+4\.0k \|/)
  const all = stats.summarize(ledger.read(file).entries)
  assert.equal(all.total.sessions, 2)
  assert.equal(all.total.bytesIn, 64000)
  assert.equal(all.tools[0].tool, 'take_snapshot')
  assert.equal(all.tools[0].results, 3)
  assert.equal(stats.main(['--days', 'x'], { stdout: { write: () => {} }, stderr: { write: () => {} }, env: { XDG_STATE_HOME: state } }), 2)
})

test('stats leaves out ledger lines whose fields have the wrong type, and says how many', () => {
  const state = scratchState()
  const file = path.join(state, 'mcp-snapshot-filter', 'ledger.jsonl')
  const good = { results: 1, shrunk: 1, bytesIn: 20000, bytesOut: 4000, tokensIn: 5000, tokensOut: 1000 }
  ledger.append({ v: 1, day: '2026-12-01', end: '', upstream: 'chrome-devtools-mcp', level: 'moderate', tools: { take_snapshot: good } }, file)
  for (const bad of [
    { v: 1, day: '2026-12-01', upstream: 'x', tools: { take_snapshot: { ...good, bytesOut: 'abc' } } },
    { v: 1, day: '2026-12-01', upstream: 'x', tools: { take_snapshot: { ...good, results: -1 } } },
    { v: 1, day: '2026-12-01', upstream: 'x', tools: { take_snapshot: { ...good, deltas: '2' } } },
    { v: 1, day: '2026-12-01', upstream: 'x', tools: [good] },
    { v: 1, day: 20261201, upstream: 'x', tools: { take_snapshot: good } },
    { v: 1, day: '2026-12-01', upstream: { name: 'x' }, tools: { take_snapshot: good } },
  ]) fs.appendFileSync(file, `${JSON.stringify(bad)}\n`)
  const out = []
  assert.equal(stats.main([], { stdout: { write: (s) => out.push(s) }, stderr: { write: () => {} }, env: { XDG_STATE_HOME: state } }), 0)
  const text = out.join('')
  assert.match(text, /1 session, /)
  assert.match(text, /\(6 lines of the file are not a ledger entry \(not JSON, or a field of the wrong type\) and were left out\.\)/)
  assert.doesNotMatch(text, /NaN|undefined|abc/)
  assert.match(text, /\| chrome-devtools-mcp \| take_snapshot\s+\|\s+1 of 1 \|\s+20\.0 KB \|\s+4\.0 KB \|/)
})

test('stats shows what deltas saved, formats sizes as the stats line does, and names tools that never shrank', () => {
  const state = scratchState()
  const file = path.join(state, 'mcp-snapshot-filter', 'ledger.jsonl')
  const snap = { results: 4, shrunk: 4, bytesIn: 3_400_000_000, bytesOut: 600_000_000, tokensIn: 900_000_000, tokensOut: 150_000_000, deltas: 3, deltaBytesSaved: 20_800 }
  const never = { results: 7, shrunk: 0, bytesIn: 0, bytesOut: 0, tokensIn: 0, tokensOut: 0 }
  ledger.append({ v: 1, day: '2026-12-01', end: '', upstream: 'chrome-devtools-mcp', level: 'moderate', tools: { take_snapshot: snap, evaluate_script: never } }, file)
  const out = []
  assert.equal(stats.main([], { stdout: { write: (s) => out.push(s) }, stderr: { write: () => {} }, env: { XDG_STATE_HOME: state } }), 0)
  const text = out.join('')
  const native = require('../index.js')
  assert.equal(native.formatBytes(3_400_000_000), '3.4 GB')
  assert.match(text, /\| chrome-devtools-mcp \| take_snapshot \|\s+4 of 4 \|\s+3\.4 GB \|\s+600 MB \|\s+−82% \|\s+750M \|\s+3: 20\.8 KB \|/)
  assert.match(text, /\|\s+deltas \|\n/)
  assert.doesNotMatch(text, /\| chrome-devtools-mcp \| evaluate_script/)
  assert.match(text, /Never shrunk, so not listed: chrome-devtools-mcp evaluate_script \(7 results\)\. Their results were all under what the level cuts/)
})

test('the upstream label is one word of the command line, never its arguments', () => {
  assert.equal(ledger.upstreamLabel('npx', ['-y', 'chrome-devtools-mcp@latest', '--isolated']), 'chrome-devtools-mcp')
  assert.equal(ledger.upstreamLabel('npx', ['@playwright/mcp@0.0.83', '--api-key=secret']), '@playwright/mcp')
  assert.equal(ledger.upstreamLabel('node', ['/home/u/node_modules/chrome-devtools-mcp/build/src/index.js']), 'chrome-devtools-mcp')
  assert.equal(ledger.upstreamLabel('/usr/local/bin/my-server', ['--token', 'secret']), 'my-server')
  // An option's value is no package name, however it is given (issue 24 item 12).
  const secret = 'https://alice:TOKEN123@registry.example/'
  const cases = [
    [['--registry', secret, 'chrome-devtools-mcp'], 'chrome-devtools-mcp'],
    [[`--registry=${secret}`, '-y', 'chrome-devtools-mcp@latest'], 'chrome-devtools-mcp'],
    [['-y', '--registry', secret, '@playwright/mcp@0.0.83'], '@playwright/mcp'],
    [['--userconfig', '/home/alice/secret-npmrc', 'chrome-devtools-mcp'], 'chrome-devtools-mcp'],
    [['--package', 'chrome-devtools-mcp@1.11.0', '--', 'chrome-devtools-mcp', '--isolated'], 'chrome-devtools-mcp'],
    [[secret], 'npx'],
    [['--unknown-flag', secret, 'chrome-devtools-mcp'], 'chrome-devtools-mcp'],
    [['alice:TOKEN123@registry.example'], 'npx'],
  ]
  for (const [args, label] of cases) {
    const got = ledger.upstreamLabel('npx', args)
    assert.equal(got, label, args.join(' '))
    assert.doesNotMatch(got, /alice|TOKEN/)
  }
  assert.equal(ledger.upstreamLabel('uvx', ['--index-url', secret, 'mcp-server-fetch']), 'mcp-server-fetch')
  assert.equal(ledger.upstreamLabel('uvx', ['--from', 'git+https://alice:TOKEN123@host/x.git', 'x']), 'uvx')
  assert.equal(ledger.stateDir({ XDG_STATE_HOME: '/s' }, 'linux'), path.join('/s', 'mcp-snapshot-filter'))
  assert.equal(ledger.stateDir({ HOME: '/h' }, 'linux'), path.join('/h', '.local', 'state', 'mcp-snapshot-filter'))
  // A relative XDG_STATE_HOME is ignored, as the XDG spec says.
  assert.equal(ledger.stateDir({ XDG_STATE_HOME: 'rel', HOME: '/h' }, 'linux'), path.join('/h', '.local', 'state', 'mcp-snapshot-filter'))
})

test('a ledger that cannot be written costs one stderr line, never the exit code', async () => {
  const state = scratchState()
  // The state directory's place is taken by a file.
  fs.writeFileSync(path.join(state, 'mcp-snapshot-filter'), 'not a directory\n')
  const proxy = await session({ XDG_STATE_HOME: state, MCP_SNAPSHOT_FILTER_LEDGER: 'on' })
  const lines = proxy.stderr().split('\n').filter((l) => l.includes('ledger'))
  assert.equal(lines.length, 1, proxy.stderr())
  assert.match(lines[0], /^\[mcp-snapshot-filter\] ledger: not written to .*ledger\.jsonl: (EEXIST|ENOTDIR)/)
})

test('the ledger line counts a tool\'s snapshots sent as deltas, and what they saved', () => {
  const native = require('../index.js')
  const grid = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'snapshots', 'grid.json'), 'utf8'))
  const json = JSON.stringify(grid.result ?? grid)
  const session = new native.FilterSession({ filter: { level: 'moderate' }, stats: 'off', proxyTools: true, snapshotDeltas: true })
  const args = JSON.stringify({ pageId: 1 })
  session.filterToolResult('take_snapshot', json, args)
  const again = session.filterToolResult('take_snapshot', json, args)
  assert.match(JSON.parse(again).content[0].text, /unchanged since snapshot 1/)
  const [totals] = session.toolTotals()
  assert.equal(totals.tool, 'take_snapshot')
  assert.equal(totals.deltas, 1)
  assert.ok(totals.deltaBytesSaved > 1000, `${totals.deltaBytesSaved}`)
  const entry = ledger.entryOf({ toolTotals: session.toolTotals(), level: 'moderate', upstream: 'chrome-devtools-mcp' })
  assert.equal(entry.tools.take_snapshot.deltas, 1)
  assert.equal(entry.tools.take_snapshot.deltaBytesSaved, totals.deltaBytesSaved)
})
