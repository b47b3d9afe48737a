'use strict'

// What the bin says on stderr reads right: the --stats=stderr line has one prefix and names
// the tool; the exit summary explains its counts, and at off says nothing was filtered.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')

const { FIXTURES, INIT, proxyCommand, spawnRaw } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')

async function run(proxyArgs) {
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE], proxyArgs), {
    env: { ...process.env, FIXTURE_REPLAY_DIR: path.join(FIXTURES, 'snapshots') },
  })
  proxy.send(INIT)
  proxy.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'take_snapshot', arguments: { pageId: 1, fixture: 'grid' } } })
  await proxy.waitFor((m) => m.id === 1)
  proxy.child.stdin.end()
  assert.equal((await proxy.exited).code, 0)
  return proxy.stderr()
}

test('--stats=stderr prints one prefixed line naming the tool', async () => {
  const stderr = await run(['--stats=stderr'])
  assert.match(stderr, /^\[mcp-snapshot-filter\] take_snapshot: [\d.]+ KB → [\d.]+ KB \(−\d+%\), ~[\d.]+k tokens saved \| session: /m)
  assert.doesNotMatch(stderr, /\[mcp-snapshot-filter\] \[mcp-snapshot-filter/)
  assert.match(stderr, /session saved [\d.]+ KB of [\d.]+ KB \(−\d+%\), ~[\d.]+k tokens, shrinking 1 of 1 result of filtered tools \(snapshots, network and console lists, scripts\)/)
})

test('at --filter-level=off the summary says nothing was filtered, not "0 B of 0 B"', async () => {
  const stderr = await run(['--filter-level=off'])
  assert.match(stderr, /session: filter level off, every tool result forwarded unchanged/)
  assert.doesNotMatch(stderr, /0 B of 0 B|−0%/)
})

test('a mistyped subcommand is an error that names the subcommand, not an upstream spawned', () => {
  const { spawnSync } = require('node:child_process')
  const { BIN } = require('./helpers.js')
  const run = (...args) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, MCP_SNAPSHOT_FILTER_LEDGER: 'off' }, timeout: 30000 })
  for (const [typo, meant] of [['instal', 'install'], ['stat', 'stats'], ['meausre', 'measure'], ['uninstal', 'uninstall']]) {
    const r = run(typo)
    assert.equal(r.status, 2, `${typo}: ${r.stderr}`)
    assert.match(r.stderr, new RegExp(`unknown command "${typo}": did you mean \`${meant}\`\\? \\(an upstream of that name goes after --`))
    assert.equal(r.stdout, '')
  }
  const late = run('--filter-level=light', 'install')
  assert.equal(late.status, 2)
  assert.match(late.stderr, /install is a subcommand and comes first/)
  // After --, the word is the upstream's, whatever it is.
  const { parseArgs } = require('../bin/options.js')
  assert.equal(parseArgs(['--', 'instal']).command, 'instal')
  assert.equal(parseArgs(['npx', 'chrome-devtools-mcp@latest']).command, 'npx')
})
