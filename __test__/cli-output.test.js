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
