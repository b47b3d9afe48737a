'use strict'

// Nothing is orphaned: the upstream runs in its own process group and the proxy stops the whole
// group (stdin EOF, SIGTERM, SIGKILL), so what a wrapper upstream started (npx -> node ->
// Chromium; here sh -> node + sleep) does not outlive the proxy. POSIX only: Windows has no
// process groups for this (README).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { FIXTURES, INIT, proxyCommand, spawnRaw, isAlive, waitUntil } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const posix = process.platform !== 'win32'

/** The proxy in front of `sh -c SCRIPT`; SCRIPT writes the pids to watch into $PIDS. */
async function startWrapped(script, env = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-group-'))
  const pids = path.join(dir, 'pids')
  const proxy = spawnRaw(proxyCommand(['sh', '-c', script]), { env: { ...process.env, PIDS: pids, FIXTURE: FIXTURE, NODE: process.execPath, ...env } })
  proxy.send(INIT)
  await proxy.waitFor((m) => m.id === 0)
  assert.ok(await waitUntil(() => fs.existsSync(pids) && fs.readFileSync(pids, 'utf8').trim().split('\n').length >= script.split('$!').length - 1, 5000), 'the wrapper did not write its pids')
  const watched = fs.readFileSync(pids, 'utf8').trim().split('\n').map(Number)
  return { proxy, watched, dir }
}

const STUBBORN = `"$NODE" -e "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"`

test('what a wrapper upstream started is stopped with it when the client leaves', { skip: !posix && 'POSIX process groups', timeout: 20000 }, async () => {
  // A grandchild that sleeps, one that ignores SIGTERM, and the server itself (exec'd by sh).
  const { proxy, watched, dir } = await startWrapped(`sleep 97 & echo $! >> "$PIDS"; ${STUBBORN} & echo $! >> "$PIDS"; exec "$NODE" "$FIXTURE"`)
  try {
    assert.equal(watched.length, 2)
    for (const pid of watched) assert.ok(isAlive(pid))
    proxy.child.stdin.end()
    const { code } = await proxy.exited
    assert.equal(code, 0)
    // stdin EOF (the server exits), 2 s, SIGTERM (sleep exits), 2 s, SIGKILL (the stubborn one).
    for (const pid of watched) assert.ok(await waitUntil(() => !isAlive(pid), 10000), `pid ${pid} outlived the proxy`)
  } finally {
    for (const pid of watched) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('an upstream that crashes leaves nothing running either, even while a child holds its stdout', { skip: !posix && 'POSIX process groups', timeout: 20000 }, async () => {
  const { proxy, watched, dir } = await startWrapped(`sleep 97 & echo $! >> "$PIDS"; exec "$NODE" "$FIXTURE"`, { MCP_SNAPSHOT_FILTER_UPSTREAM_RESTARTS: '0' })
  try {
    proxy.send({ jsonrpc: '2.0', id: 'held', method: 'fixture/silence' })
    proxy.send({ jsonrpc: '2.0', id: 'die', method: 'fixture/exit', params: { code: 6 } })
    // sleep keeps the upstream's stdout open: the exit itself must end the session.
    const { code } = await proxy.exited
    assert.equal(code, 6)
    assert.equal(proxy.messages.find((m) => m.id === 'held')?.error?.code, -32000)
    assert.ok(await waitUntil(() => !isAlive(watched[0]), 1000), 'sleep outlived the proxy')
  } finally {
    for (const pid of watched) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a signal to the proxy stops the whole group too', { skip: !posix && 'POSIX process groups', timeout: 20000 }, async () => {
  const { proxy, watched, dir } = await startWrapped(`sleep 97 & echo $! >> "$PIDS"; exec "$NODE" "$FIXTURE"`, { FIXTURE_IGNORE_SIGTERM: '1' })
  try {
    proxy.child.kill('SIGTERM')
    const { code } = await proxy.exited
    assert.equal(code, 0)
    assert.ok(await waitUntil(() => !isAlive(watched[0]), 1000), 'sleep outlived the proxy')
  } finally {
    for (const pid of watched) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
