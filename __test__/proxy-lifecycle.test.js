'use strict'

// Lifecycle: the proxy never leaves an upstream behind, never hangs on a dead upstream, and says
// clearly why it stopped.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')

const { FIXTURES, INIT, BIN, proxyCommand, spawnRaw, isAlive, waitUntil } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')

async function startWithPid(env = {}) {
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE]), { env: { ...process.env, ...env } })
  proxy.send(INIT)
  proxy.send({ jsonrpc: '2.0', id: 'pid', method: 'fixture/pid' })
  const { result } = await proxy.waitFor((m) => m.id === 'pid')
  return { proxy, upstreamPid: result.pid }
}

test('client closing stdin stops the upstream and exits 0', async () => {
  const { proxy, upstreamPid } = await startWithPid()
  assert.ok(isAlive(upstreamPid))
  proxy.child.stdin.end()
  const { code } = await proxy.exited
  assert.equal(code, 0)
  assert.ok(await waitUntil(() => !isAlive(upstreamPid)), 'upstream still running after stdin EOF')
})

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`${signal} stops the upstream and exits 0`, async () => {
    const { proxy, upstreamPid } = await startWithPid()
    proxy.child.kill(signal)
    const { code } = await proxy.exited
    assert.equal(code, 0)
    assert.ok(await waitUntil(() => !isAlive(upstreamPid)), `upstream still running after ${signal}`)
    assert.match(proxy.stderr(), new RegExp(`shutting down: ${signal}`))
  })
}

test('an upstream that ignores SIGTERM is killed', async () => {
  const { proxy, upstreamPid } = await startWithPid({ FIXTURE_IGNORE_SIGTERM: '1' })
  proxy.child.kill('SIGTERM')
  const { code } = await proxy.exited
  assert.equal(code, 0)
  assert.ok(await waitUntil(() => !isAlive(upstreamPid), 3000), 'upstream survived the shutdown')
})

test('with --upstream-restarts=0, an upstream crashing mid-call yields error responses naming the exit code, then a non-zero exit', async () => {
  const { proxy, upstreamPid } = await startWithPid({ MCP_SNAPSHOT_FILTER_UPSTREAM_RESTARTS: '0' })
  proxy.send({ jsonrpc: '2.0', id: 'slow', method: 'fixture/silence' })
  proxy.send({ jsonrpc: '2.0', id: 'boom', method: 'fixture/exit', params: { code: 7 } })
  const slow = await proxy.waitFor((m) => m.id === 'slow')
  const boom = await proxy.waitFor((m) => m.id === 'boom')
  for (const reply of [slow, boom]) {
    assert.equal(reply.error.code, -32000)
    assert.match(reply.error.message, /exit code 7/)
  }
  const { code } = await proxy.exited
  assert.equal(code, 7)
  assert.ok(!isAlive(upstreamPid))
  assert.match(proxy.stderr(), /upstream exited \(exit code 7\)/)
})

test('with --upstream-restarts=0, an upstream that exits at start makes the proxy exit non-zero with a clear line', async () => {
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE], ['--upstream-restarts=0']), { env: { ...process.env, FIXTURE_EXIT_AT_START: '4' } })
  const { code } = await proxy.exited
  assert.equal(code, 4)
  assert.match(proxy.stderr(), /upstream exited \(exit code 4\)/)
})

test('a command that cannot be started: the client\'s initialize is answered with an error naming it and why, one stderr line, exit 1', async () => {
  const proxy = spawnRaw([process.execPath, BIN, '--', 'definitely-not-a-command-msf'])
  // A notification first: it needs no answer, the request after it gets one.
  proxy.send({ jsonrpc: '2.0', method: 'notifications/whatever' })
  proxy.send(INIT)
  const answer = await proxy.waitFor((m) => m.id === 0)
  assert.equal(answer.error?.code, -32000, JSON.stringify(answer))
  assert.match(answer.error.message, /upstream MCP server "definitely-not-a-command-msf" could not be started \(.*ENOENT.*\): cannot answer initialize/)
  const { code } = await proxy.exited
  assert.equal(code, 1)
  const lines = proxy.stderr().trim().split('\n')
  assert.equal(lines.length, 1, proxy.stderr())
  assert.match(lines[0], /cannot start upstream "definitely-not-a-command-msf": .*ENOENT/)
  assert.equal(proxy.messages.length, 1, JSON.stringify(proxy.messages))
})

test('a command that cannot be started and a client that hangs up without a request: exit 1', async () => {
  const proxy = spawnRaw([process.execPath, BIN, '--', 'definitely-not-a-command-msf'])
  proxy.child.stdin.end()
  assert.equal((await proxy.exited).code, 1)
  assert.deepEqual(proxy.messages, [])
})

test('usage errors exit 2 with a message; --help and --version print to stdout', async () => {
  for (const args of [['--bogus'], ['--filter-level=extreme'], ['--filter-level'], ['--']]) {
    const p = spawnRaw([process.execPath, BIN, ...args])
    const { code } = await p.exited
    assert.equal(code, 2, `args ${args.join(' ')}`)
    assert.match(p.stderr(), /error: /)
  }
  const env = { ...process.env, MCP_SNAPSHOT_FILTER_LEVEL: 'nonsense' }
  const bad = spawnRaw([process.execPath, BIN, '--', 'true'], { env })
  assert.equal((await bad.exited).code, 2)
  assert.match(bad.stderr(), /MCP_SNAPSHOT_FILTER_LEVEL/)

  const { execFileSync } = require('node:child_process')
  const help = execFileSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' })
  assert.match(help, /--filter-level=off\|light\|moderate\|aggressive/)
  const version = execFileSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' })
  assert.equal(version.trim(), require('../package.json').version)
})

test('writing to a closed stdout does not crash with a stack trace', async () => {
  const { proxy, upstreamPid } = await startWithPid()
  proxy.child.stdout.destroy()
  proxy.send({ jsonrpc: '2.0', id: 'n', method: 'fixture/notify', params: { count: 200 } })
  proxy.child.stdin.end()
  const { code } = await proxy.exited
  assert.equal(code, 0)
  assert.doesNotMatch(proxy.stderr(), /at .*\(.*:\d+:\d+\)/)
  assert.ok(await waitUntil(() => !isAlive(upstreamPid)))
})

test('--slim in the upstream arguments warns on stderr', async () => {
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE, '--slim']))
  proxy.send(INIT)
  await proxy.waitFor((m) => m.id === 0)
  proxy.child.stdin.end()
  await proxy.exited
  assert.match(proxy.stderr(), /warning: .*--slim/)
})
