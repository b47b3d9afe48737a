'use strict'

// Fault injection: misbehaving upstreams and clients, load, hostile arguments and secrets. Each
// test drives the real bin (or the Proxy class in-process where a race must be pinned down) and
// checks that nothing is lost, nothing hangs, nothing is left running and nothing leaks into the
// log. Lifecycle basics live in proxy-lifecycle.test.js, forwarding in proxy-transparency.test.js.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PassThrough } = require('node:stream')

const { ROOT, FIXTURES, INIT, proxyCommand, spawnRaw, isAlive, waitUntil } = require('./helpers.js')
const { bigText } = require('./fixtures/fixture-server.js')
const { Proxy } = require('../bin/proxy.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const REPLAY = path.join(FIXTURES, 'replay')

function startProxy({ env = {}, proxyArgs = [], upstreamArgs = [] } = {}) {
  return spawnRaw(proxyCommand([process.execPath, FIXTURE, ...upstreamArgs], proxyArgs), { env: { ...process.env, ...env } })
}

async function upstreamPid(proxy) {
  proxy.send({ jsonrpc: '2.0', id: 'pid', method: 'fixture/pid' })
  return (await proxy.waitFor((m) => m.id === 'pid')).result.pid
}

async function stop(proxy) {
  proxy.child.stdin.end()
  return proxy.exited
}

const count = (proxy, pred) => proxy.messages.filter(pred).length

// ---- upstream faults ----

test('a request the upstream never answers holds up nothing, and a slow call is not cut off', async () => {
  const proxy = startProxy()
  try {
    proxy.send(INIT)
    proxy.send({ jsonrpc: '2.0', id: 'never', method: 'fixture/silence' })
    const started = Date.now()
    proxy.send({ jsonrpc: '2.0', id: 'slow', method: 'fixture/delay', params: { ms: 3000 } })
    for (let i = 0; i < 50; i++) proxy.send({ jsonrpc: '2.0', id: `p${i}`, method: i % 2 ? 'ping' : 'tools/call', params: i % 2 ? undefined : { name: 'echo', arguments: { i } } })
    for (let i = 0; i < 50; i++) await proxy.waitFor((m) => m.id === `p${i}`)
    assert.equal(count(proxy, (m) => m.id === 'slow'), 0, 'the slow call answered too early')
    const slow = await proxy.waitFor((m) => m.id === 'slow', 8000)
    assert.deepEqual(slow.result, { delayed: 3000 })
    assert.ok(Date.now() - started >= 3000)
    assert.equal(count(proxy, (m) => m.id === 'never'), 0, 'the proxy invented an answer')
  } finally {
    await stop(proxy)
  }
})

test('the proxy has no request timer: its only timers belong to shutdown', () => {
  // A 65-second call must pass: rather than wait for one, prove there is no timer that could cut
  // it. Every setTimeout/setInterval in bin/ must be one of the shutdown steps.
  // (SNAPSHOT_WAIT_MS bounds how long the proxy's own tools wait for an in-flight snapshot:
  // it delays an answer of the proxy's, it never cuts an upstream call. A remote upstream,
  // bin/upstream-http.js, has a reconnection's backoff, its replayed initialize and the
  // session's DELETE at exit: none of which runs while a call is in flight. A restarted stdio
  // upstream has the restart's backoff and a bound on its answers to the replay (the proxy's own
  // requests, the pages reopened, and the client's initialize when the old upstream died before
  // answering it: --upstream-restart-timeout); no other call of the client's is in flight then. Serve mode's
  // idle sweep, bin/serve-http.js, passes over a session with a call in flight.)
  const allowed = /SHUTDOWN_STEP_MS|SHUTDOWN_POLL_MS|UNREACHABLE_GRACE_MS|EXIT_GRACE_MS|SNAPSHOT_WAIT_MS|RETRY_FIRST_MS|REINITIALIZE_MS|CLOSE_MS|BACKOFF_FIRST_MS|INTERNAL_REQUEST_MS|IDLE_SWEEP_MS/
  for (const file of fs.readdirSync(path.join(ROOT, 'bin'))) {
    const lines = fs.readFileSync(path.join(ROOT, 'bin', file), 'utf8').split('\n')
    for (const line of lines.filter((l) => /set(Timeout|Interval)\(/.test(l))) {
      assert.match(line, allowed, `bin/${file} has a timer that is not a shutdown step: ${line.trim()}`)
    }
  }
})

test('answers out of order each reach their own id', async () => {
  const proxy = startProxy()
  try {
    proxy.send(INIT)
    const ids = ['r0', 1, 'r2', 3, '3']
    for (const id of ids) proxy.send({ jsonrpc: '2.0', id, method: 'fixture/reverse', params: { count: ids.length } })
    proxy.send({ jsonrpc: '2.0', id: 'late', method: 'fixture/delay', params: { ms: 300 } })
    proxy.send({ jsonrpc: '2.0', id: 'early', method: 'fixture/delay', params: { ms: 0 } })
    await proxy.waitFor((m) => m.id === 'late')
    const replies = proxy.messages.filter((m) => m.result?.id !== undefined)
    // Sent in reverse, each carrying its id in the result: the number 3 and the string '3' too.
    assert.deepEqual(
      replies.map((m) => m.id),
      [...ids].reverse(),
    )
    for (const m of replies) assert.equal(m.result.id, m.id)
    const order = proxy.messages.map((m) => m.id)
    assert.ok(order.indexOf('early') < order.indexOf('late'))
  } finally {
    await stop(proxy)
  }
})

test('half lines and garbage on the upstream stdout lose no message around them', async () => {
  const proxy = startProxy()
  try {
    proxy.send(INIT)
    proxy.send({ jsonrpc: '2.0', id: 'half', method: 'fixture/half', params: { ms: 200 } })
    assert.deepEqual((await proxy.waitFor((m) => m.id === 'half')).result, { whole: true })
    proxy.send({ jsonrpc: '2.0', id: 'broken', method: 'fixture/broken-line', params: { ms: 200 } })
    proxy.send({ jsonrpc: '2.0', id: 'garbage', method: 'fixture/garbage' })
    proxy.send({ jsonrpc: '2.0', id: 'after', method: 'ping' })
    await proxy.waitFor((m) => m.id === 'broken')
    await proxy.waitFor((m) => m.id === 'garbage')
    await proxy.waitFor((m) => m.id === 'after')
    const notes = proxy.messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.data)
    assert.deepEqual(notes, ['before', 'after'])
    const order = proxy.messages.map((m) => m.id ?? m.params?.data)
    assert.ok(order.indexOf('before') < order.indexOf('after') && order.indexOf('after') < order.indexOf('broken'))
    assert.ok(proxy.rawLines.every((l) => JSON.parse(l).jsonrpc === '2.0'))
    // stderr and stdout are separate pipes: the log line may land after the replies.
    await waitUntil(() => /not a JSON-RPC message/.test(proxy.stderr()), 5000)
    assert.match(proxy.stderr(), /not a JSON-RPC message \(\d+ bytes, dropped\).*notifications\/mess/)
  } finally {
    await stop(proxy)
  }
})

test('a 50 MB result reaches the client intact, in linear time', async (t) => {
  const chars = 34 * 1024 * 1024 // ~52 MB of UTF-8 once JSON escapes and multi-byte characters count
  const expected = bigText(chars)
  const call = { jsonrpc: '2.0', id: 'big', method: 'tools/call', params: { name: 'fixture_big', arguments: { chars } } }
  const timed = async (command) => {
    const p = spawnRaw(command)
    try {
      p.send(INIT)
      await p.waitFor((m) => m.id === 0)
      const started = Date.now()
      p.send(call)
      const reply = await p.waitFor((m) => m.id === 'big', 30000)
      const ms = Date.now() - started
      const line = p.rawLines.find((l) => l.startsWith('{"jsonrpc":"2.0","id":"big"') || l.includes('"id":"big"'))
      return { reply, ms, bytes: Buffer.byteLength(line) }
    } finally {
      await stop(p)
    }
  }
  const direct = await timed([process.execPath, FIXTURE])
  const unfiltered = await timed(proxyCommand([process.execPath, FIXTURE], ['--filter-level=off']))
  // No token budget: the whole text must arrive (with one it is cut, proxy-tools.test.js).
  const proxied = await timed(proxyCommand([process.execPath, FIXTURE], ['--max-tokens=0']))
  for (const { reply } of [unfiltered, proxied]) {
    assert.equal(reply.result.content[0].text.length, expected.length)
    assert.ok(reply.result.content[0].text === expected, 'the text changed on the way')
  }
  t.diagnostic(`50 MB result: ${proxied.bytes} bytes on the wire; direct ${direct.ms} ms, through the proxy ${unfiltered.ms} ms at level off, ${proxied.ms} ms at moderate (the native filter reads it)`)
  assert.ok(proxied.bytes >= 50 * 1000 * 1000, `only ${proxied.bytes} bytes`)
  // The times are reported, not asserted: under load any limit fails a correct proxy. The line
  // buffer's linear cost is held by its own test (proxy-big-lines.test.js).
})

test('10,000 notifications arrive, all of them, in order, before the answer that follows them', async (t) => {
  const proxy = startProxy()
  try {
    proxy.send(INIT)
    const started = Date.now()
    proxy.send({ jsonrpc: '2.0', id: 'flood', method: 'fixture/notify', params: { count: 10000 } })
    await proxy.waitFor((m) => m.id === 'flood', 20000)
    t.diagnostic(`10,000 notifications: ${Date.now() - started} ms through the proxy`)
    const data = proxy.messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.data)
    assert.equal(data.length, 10000)
    assert.ok(
      data.every((d, i) => d === `n${i}`),
      'notifications out of order',
    )
    assert.equal(proxy.messages.at(-1).id, 'flood')
  } finally {
    await stop(proxy)
  }
})

test('an upstream that closes its stdout but keeps running: errors for what was pending and new requests, then it is stopped', async () => {
  // It also ignores SIGTERM, so the proxy's shutdown lasts ~4 s (stdin EOF, SIGTERM, SIGKILL):
  // a request arriving in that window must get an error, not silence.
  const proxy = startProxy({ env: { FIXTURE_IGNORE_SIGTERM: '1' }, proxyArgs: ['--upstream-restarts=0'] })
  const pid = await upstreamPid(proxy)
  try {
  proxy.send({ jsonrpc: '2.0', id: 'pending', method: 'tools/call', params: { name: 'fixture_silence', arguments: {} } })
  proxy.send({ jsonrpc: '2.0', id: 'close', method: 'fixture/close-stdout' })
  assert.deepEqual((await proxy.waitFor((m) => m.id === 'close')).result, { closing: true })
  const pending = await proxy.waitFor((m) => m.id === 'pending', 5000)
  assert.equal(pending.error.code, -32000)
  assert.match(pending.error.message, /closed its stdout before answering tools\/call/)
  proxy.send({ jsonrpc: '2.0', id: 'too-late', method: 'ping' })
  const late = await proxy.waitFor((m) => m.id === 'too-late', 3000)
  assert.equal(late.error.code, -32000)
  assert.match(late.error.message, /not running \(it closed its stdout\)/)
  const { code } = await proxy.exited
  assert.equal(code, 1)
  assert.match(proxy.stderr(), /upstream closed its stdout but is still running/)
  assert.ok(await waitUntil(() => !isAlive(pid), 2000), 'upstream left running')
  } finally {
    if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    proxy.child.kill('SIGKILL')
  }
})

test('an upstream that closes its stdin but keeps running: the call that cannot be written gets an error, then it is stopped', async () => {
  const proxy = startProxy({ proxyArgs: ['--upstream-restarts=0'] })
  const pid = await upstreamPid(proxy)
  try {
    proxy.send({ jsonrpc: '2.0', id: 'close', method: 'fixture/close-stdin' })
    await proxy.waitFor((m) => m.id === 'close')
    proxy.send({ jsonrpc: '2.0', id: 'unwritable', method: 'tools/call', params: { name: 'echo', arguments: {} } })
    const reply = await proxy.waitFor((m) => m.id === 'unwritable', 5000)
    assert.equal(reply.error.code, -32000)
    assert.match(reply.error.message, /closed its stdin before answering tools\/call/)
    const { code } = await proxy.exited
    assert.equal(code, 1)
    assert.match(proxy.stderr(), /upstream closed its stdin but is still running: stopping it/)
    assert.ok(await waitUntil(() => !isAlive(pid), 2000), 'upstream left running')
  } finally {
    if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    proxy.child.kill('SIGKILL')
  }
})

test('a request arriving after the upstream died is answered with an error (in-process, no exit race)', async () => {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const replies = []
  let buf = ''
  stdout.setEncoding('utf8')
  stdout.on('data', (d) => {
    buf += d
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      replies.push(JSON.parse(buf.slice(0, nl)))
      buf = buf.slice(nl + 1)
    }
  })
  // Reads no line: every one goes the JS way, forwarded as it came.
  const session = { routeResponse: () => null, summary: () => '' }
  let exitCode = null
  const origWrite = process.stderr.write
  process.stderr.write = () => true
  try {
    const proxy = new Proxy({ command: process.execPath, args: [FIXTURE], session, stdin, stdout, exit: (c) => (exitCode = c) })
    await proxy.start()
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'die', method: 'fixture/exit', params: { code: 5 } })}\n`)
    assert.ok(await waitUntil(() => exitCode !== null, 5000), 'proxy did not finish')
    assert.equal(exitCode, 5)
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'x' } })}\n`)
    assert.ok(await waitUntil(() => replies.some((m) => m.id === 'after'), 2000), 'no answer after the upstream died')
    const after = replies.find((m) => m.id === 'after')
    assert.equal(after.error.code, -32000)
    assert.match(after.error.message, /not running \(exit code 5\)/)
  } finally {
    process.stderr.write = origWrite
  }
})

// ---- client faults ----

test('the client closing stdin mid-call: upstream stopped, exit 0, nothing left running', async () => {
  const proxy = startProxy()
  const pid = await upstreamPid(proxy)
  proxy.send({ jsonrpc: '2.0', id: 'a', method: 'fixture/silence' })
  // Answered after a minute: a proxy that waited for it would hit the test's timeout, or show it.
  proxy.send({ jsonrpc: '2.0', id: 'b', method: 'fixture/delay', params: { ms: 60000 } })
  proxy.send({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'fixture_silence' } })
  const { code } = await stop(proxy)
  assert.equal(code, 0)
  assert.equal(count(proxy, (m) => m.id === 'b'), 0, 'the proxy waited for the pending calls')
  assert.ok(await waitUntil(() => !isAlive(pid), 2000), 'upstream left running')
})

test('the client vanishing (EPIPE) while a large response streams: exit 0, upstream stopped, no stack trace', async () => {
  const proxy = startProxy()
  const pid = await upstreamPid(proxy)
  proxy.child.stdout.destroy() // stdin stays open: only the broken pipe can tell the proxy
  proxy.send({ jsonrpc: '2.0', id: 'big', method: 'tools/call', params: { name: 'fixture_big', arguments: { chars: 8 * 1024 * 1024 } } })
  proxy.send({ jsonrpc: '2.0', id: 'n', method: 'fixture/notify', params: { count: 1000 } })
  const { code } = await proxy.exited
  assert.equal(code, 0)
  assert.match(proxy.stderr(), /client went away/)
  assert.doesNotMatch(proxy.stderr(), /at .*\(.*:\d+:\d+\)/)
  assert.ok(await waitUntil(() => !isAlive(pid), 2000), 'upstream left running')
})

test('a request with an unknown method is forwarded, and the upstream error comes back as it was', async () => {
  const proxy = startProxy()
  try {
    proxy.send(INIT)
    proxy.send({ jsonrpc: '2.0', id: 'u', method: 'nosuch/method', params: { x: 1 } })
    proxy.send({ jsonrpc: '2.0', id: 'p', method: 'ping' })
    const reply = await proxy.waitFor((m) => m.id === 'u')
    assert.deepEqual(reply, { jsonrpc: '2.0', id: 'u', error: { code: -32601, message: 'Method not found: nosuch/method', data: { method: 'nosuch/method' } } })
    await proxy.waitFor((m) => m.id === 'p')
  } finally {
    await stop(proxy)
  }
})

// ---- load ----

test('200 concurrent tools/call through the proxy: every response once, at its own id', async (t) => {
  const tools = fs
    .readdirSync(REPLAY)
    .filter((f) => f.endsWith('.json') && !f.startsWith('lone-') && !f.startsWith('unreadable-'))
    .map((f) => f.replace(/\.json$/, ''))
  assert.ok(tools.length >= 3, 'replay fixtures missing')
  const proxy = startProxy({ env: { FIXTURE_REPLAY_DIR: REPLAY, FIXTURE_TAG: '1' } })
  try {
    proxy.send(INIT)
    await proxy.waitFor((m) => m.id === 0)
    // Numbers and strings that print alike (7 and '7') are different ids.
    const requests = Array.from({ length: 200 }, (_, i) => ({ id: i % 2 ? i : String(i - 1), tool: tools[i % tools.length] }))
    const started = Date.now()
    for (const { id, tool } of requests) proxy.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: { pageId: 1 } } })
    const ok = await waitUntil(() => proxy.messages.length >= 201, 20000, 10)
    t.diagnostic(`200 concurrent tools/call: ${Date.now() - started} ms through the proxy`)
    assert.ok(ok, `only ${proxy.messages.length - 1} responses`)
    await new Promise((r) => setTimeout(r, 200)) // room for a duplicate to show up
    const responses = proxy.messages.filter((m) => m.id !== 0)
    assert.equal(responses.length, 200)
    for (const { id, tool } of requests) {
      const mine = responses.filter((m) => m.id === id)
      assert.equal(mine.length, 1, `id ${JSON.stringify(id)} answered ${mine.length} times`)
      const [reply] = mine
      assert.ok(reply.result, `id ${JSON.stringify(id)}: ${JSON.stringify(reply.error)}`)
      assert.deepEqual(reply.result._meta['fixture/request'], { id, tool })
      assert.ok(reply.result.content[0].text.length > 0)
    }
  } finally {
    await stop(proxy)
  }
})

// ---- security ----

test('the upstream is started with argv, never a shell: hostile arguments arrive verbatim', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-argv-'))
  const marker = path.join(dir, 'pwned')
  const victim = path.join(dir, 'victim')
  fs.mkdirSync(victim)
  const hostile = [
    `$(touch ${marker}); echo pwned`,
    `; rm -rf ${victim}`,
    `\`touch ${marker}\``,
    `&& touch ${marker} || touch ${marker}`,
    `| tee ${marker}`,
    `> ${marker}`,
    `'"; touch ${marker}; echo "'`,
    'line1\nline2',
    '*',
    '$HOME ${PATH} %PATH%',
    '',
    '-- --filter-level=off',
  ]
  const proxy = startProxy({ upstreamArgs: hostile })
  try {
    proxy.send(INIT)
    proxy.send({ jsonrpc: '2.0', id: 'argv', method: 'fixture/argv' })
    const { result } = await proxy.waitFor((m) => m.id === 'argv')
    assert.deepEqual(result.argv, hostile)
    assert.ok(!fs.existsSync(marker), 'a shell ran the arguments')
    assert.ok(fs.existsSync(victim), 'a shell ran the arguments')
  } finally {
    await stop(proxy)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('logs carry neither environment values nor request arguments, on error and fail-open paths', async () => {
  const envSecret = 'env-secret-7f3a91c2'
  const argSecret = 'qz7k2x' // short: V8 quotes about ten characters of the input around a JSON error
  const proxy = startProxy({ env: { FIXTURE_REPLAY_DIR: REPLAY, MSF_TEST_TOKEN: envSecret, API_KEY: envSecret }, proxyArgs: ['--upstream-restarts=0'] })
  proxy.send(INIT)
  await proxy.waitFor((m) => m.id === 0)
  // Fail open: a result the native filter cannot read (nested past its limit) and within the
  // bound, for a call with secrets.
  proxy.send({ jsonrpc: '2.0', id: 'f', method: 'tools/call', params: { name: 'take_snapshot', arguments: { fixture: 'unreadable-depth', password: argSecret, env: envSecret } } })
  const forwarded = await proxy.waitFor((m) => m.id === 'f')
  assert.match(forwarded.result.content[0].text, /page-secret-in-result/)
  // A lone surrogate in a name no longer stops the filter: read as U+FFFD (issue 41, item 10).
  proxy.send({ jsonrpc: '2.0', id: 's', method: 'tools/call', params: { name: 'take_snapshot', arguments: { fixture: 'lone-surrogate' } } })
  const read = await proxy.waitFor((m) => m.id === 's')
  assert.match(read.result.content[0].text, /page-secret-in-result (\uFFFD|\uD800) broken/)
  // Malformed client lines with secrets in them.
  proxy.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"password":${argSecret}}}}\n`)
  proxy.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"password":"${argSecret}"}}\n`)
  proxy.send(`{"id":3,"password":"${argSecret}"}\n`)
  await proxy.waitFor((m) => m.id === 3 && m.error)
  await waitUntil(() => count(proxy, (m) => m.error && m.id === null) >= 2, 3000)
  // Error path: the upstream dies with a call carrying secrets pending.
  proxy.send({ jsonrpc: '2.0', id: 'p', method: 'tools/call', params: { name: 'fixture_silence', arguments: { token: argSecret } } })
  proxy.send({ jsonrpc: '2.0', id: 'x', method: 'fixture/exit', params: { code: 9 } })
  await proxy.waitFor((m) => m.id === 'p')
  await proxy.exited
  const stderr = proxy.stderr()
  assert.equal(stderr.match(/filter failed on tools\/call "take_snapshot" \(forwarding the original\)/g)?.length, 1, stderr)
  assert.match(stderr, /bad message from client/)
  assert.match(stderr, /upstream exited \(exit code 9\)/)
  assert.ok(!stderr.includes(envSecret), `an environment value reached the log:\n${stderr}`)
  assert.ok(!stderr.includes(argSecret), `request arguments reached the log:\n${stderr}`)
  assert.ok(!stderr.includes('page-secret-in-result'), `result content reached the log:\n${stderr}`)
  // The proxy's own error replies do not echo the input either.
  const ownErrors = proxy.messages.filter((m) => m.error).map((m) => m.error.message)
  assert.ok(ownErrors.length >= 4)
  assert.ok(!ownErrors.join('\n').includes(argSecret), ownErrors.join('\n'))
})
