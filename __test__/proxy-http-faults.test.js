'use strict'

// Faults of a remote upstream (`--upstream-url`), injected with the scriptable fixture
// (fixtures/http-fixture-server.js) on 127.0.0.1: the server killed mid-call and started again,
// HTTP 500, 401/403, slow headers, dropped SSE streams. Every request gets exactly one answer,
// nothing hangs, and the errors name their cause.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const { BIN, INIT, spawnRaw, waitUntil } = require('./helpers.js')
const { startFixture, startEverything, freePort } = require('./http-servers.js')
const { memberText } = require('../bin/jsonrpc.js')

const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' }

function call(id, name, args = {}) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }
}

/** The bin in front of `url`, initialized. */
async function proxyTo(url, args = [], env) {
  const proxy = spawnRaw([process.execPath, BIN, '--upstream-url', url, ...args], env ? { env: { ...process.env, ...env } } : {})
  proxy.send(INIT)
  const init = await proxy.waitFor((m) => m.id === 0, 15000)
  if (init.result) proxy.send(INITIALIZED)
  proxy.init = init
  return proxy
}

async function stopProxy(proxy) {
  proxy.child.stdin.end()
  await proxy.exited
}

function answersTo(proxy, id) {
  return proxy.messages.filter((m) => m.id === id && !('method' in m))
}

const settle = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

test('the upstream killed mid-call: the call gets -32000 naming the cause, the proxy reconnects for the next one', { timeout: 60000 }, async (t) => {
  const port = await freePort()
  let server = await startFixture(port)
  t.after(() => server.stop('SIGKILL'))
  const proxy = await proxyTo(server.url, ['--upstream-retry-seconds=20'])
  t.after(() => proxy.child.kill('SIGKILL'))
  assert.ok(proxy.init.result, JSON.stringify(proxy.init))

  proxy.send(call(2, 'sleep', { ms: 20000 }))
  await settle(500)
  await server.stop('SIGKILL')
  const failed = await proxy.waitFor((m) => m.id === 2, 15000)
  assert.equal(failed.error?.code, -32000, JSON.stringify(failed))
  assert.match(failed.error.message, /connection (broke|lost) \(.+\)/)
  t.diagnostic(failed.error.message)
  assert.match(failed.error.message, /tools\/call/)

  // Once the loss is noticed, a new call waits for the reconnection, which finds the server
  // again. (A call being posted at the very moment the loss is noticed gets -32000 instead: it
  // may have reached the server, so it is not sent twice.)
  assert.ok(await waitUntil(() => /reconnecting for up to/.test(proxy.stderr()), 15000), proxy.stderr())
  proxy.send(call(3, 'echo', { text: 'after the restart' }))
  await settle(1500)
  server = await startFixture(port)
  const answered = await proxy.waitFor((m) => m.id === 3, 25000)
  // A new session is a restart for the agent (#44): the first result after it says so.
  const [notice, ...rest] = answered.result?.content ?? []
  assert.match(notice?.text, /^\[mcp-snapshot-filter: the connection to the upstream MCP server was lost \(.+\) and a new session began; uids changed/, JSON.stringify(answered))
  assert.deepEqual(rest, [{ type: 'text', text: 'after the restart' }], JSON.stringify(answered))
  proxy.send(call(4, 'echo', { text: 'again' }))
  assert.deepEqual((await proxy.waitFor((m) => m.id === 4)).result.content, [{ type: 'text', text: 'again' }])

  await settle(300)
  for (const id of [2, 3, 4]) assert.equal(answersTo(proxy, id).length, 1, `answers to ${id}`)
  // The replayed initialize stays inside the proxy.
  assert.equal(proxy.messages.filter((m) => m.result?.protocolVersion).length, 1)
  assert.match(proxy.stderr(), /upstream connection lost \(.*\): reconnecting for up to 20 s/)
  assert.match(proxy.stderr(), /reconnected to upstream http:\/\/127\.0\.0\.1:\d+\/mcp \(streamable-http, a new session/)
  await stopProxy(proxy)
})

test('a server that stays down: waiting requests get -32000 once the retry time is over; the proxy keeps serving', { timeout: 60000 }, async (t) => {
  const server = await startFixture()
  const proxy = await proxyTo(server.url, ['--upstream-retry-seconds=2'])
  t.after(() => proxy.child.kill('SIGKILL'))
  await server.stop('SIGKILL')
  // The proxy notices by itself (its event stream breaks), tries for 2 s, gives up.
  assert.ok(await waitUntil(() => /still unreachable after 2 s/.test(proxy.stderr()), 20000), proxy.stderr())
  // A new call tries again, for 2 s, then gets the error.
  const started = Date.now()
  proxy.send(call(5, 'echo', { text: 'x' }))
  const failed = await proxy.waitFor((m) => m.id === 5, 20000)
  assert.equal(failed.error?.code, -32000)
  assert.match(failed.error.message, /unreachable/)
  assert.match(failed.error.message, /ECONNREFUSED/)
  const waited = Date.now() - started
  // It tried again before giving up (an upper limit would fail under load; waitFor bounds it).
  assert.ok(waited >= 1000, `waited ${waited} ms`)
  assert.match(proxy.stderr(), /upstream still unreachable \(.*\): trying again for up to 2 s/)
  // Still serving: its own tools answer, and a ping gets an answer (an error) rather than silence.
  proxy.send({ jsonrpc: '2.0', id: 6, method: 'ping' })
  assert.ok((await proxy.waitFor((m) => m.id === 6, 20000)).error)
  assert.equal(proxy.child.exitCode, null)
  await stopProxy(proxy)
})

test('a server that starts after the proxy: the client\'s initialize waits for it', { timeout: 40000 }, async (t) => {
  const port = await freePort()
  const proxy = spawnRaw([process.execPath, BIN, '--upstream-url', `http://127.0.0.1:${port}/mcp`])
  t.after(() => proxy.child.kill('SIGKILL'))
  proxy.send(INIT)
  await settle(1200)
  assert.equal(answersTo(proxy, 0).length, 0)
  const server = await startFixture(port)
  t.after(() => server.stop())
  const init = await proxy.waitFor((m) => m.id === 0, 20000)
  assert.equal(init.result?.serverInfo?.name, 'http-fixture', JSON.stringify(init))
  assert.match(proxy.stderr(), /unreachable \(fetch failed \(connect ECONNREFUSED [^)]+\)\) on posting initialize: trying again for up to 30 s/)
  await stopProxy(proxy)
})

test('HTTP+SSE (server-everything sse) killed mid-call: -32000 for the call, a new session for the next', { timeout: 60000 }, async (t) => {
  const port = await freePort()
  let server = await startEverything('sse', port)
  t.after(() => server.stop('SIGKILL'))
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))
  assert.ok(proxy.init.result, JSON.stringify(proxy.init))
  proxy.send(call(2, 'trigger-long-running-operation', { duration: 20, steps: 20 }))
  await settle(1000)
  await server.stop('SIGKILL')
  const failed = await proxy.waitFor((m) => m.id === 2, 15000)
  assert.equal(failed.error?.code, -32000)
  assert.match(failed.error.message, /upstream connection lost \(the SSE stream broke: .+\) before answering tools\/call/)
  assert.ok(await waitUntil(() => /reconnecting for up to/.test(proxy.stderr()), 15000), proxy.stderr())
  proxy.send(call(3, 'get-sum', { a: 1, b: 2 }))
  await settle(1000)
  server = await startEverything('sse', port)
  const answered = await proxy.waitFor((m) => m.id === 3, 30000)
  assert.match(answered.result?.content[0].text, /and a new session began; uids changed/, JSON.stringify(answered))
  assert.deepEqual(answered.result.content.slice(1), [{ type: 'text', text: 'The sum of 1 and 2 is 3.' }], JSON.stringify(answered))
  await settle(300)
  for (const id of [2, 3]) assert.equal(answersTo(proxy, id).length, 1)
  assert.match(proxy.stderr(), /reconnected to upstream http:\/\/127\.0\.0\.1:\d+\/sse \(sse, a new session/)
  await stopProxy(proxy)
})

test('a session the server forgot (HTTP 404): a new session, the request sent again and answered once', { timeout: 30000 }, async (t) => {
  const server = await startFixture()
  t.after(() => server.stop())
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))
  proxy.send(call(2, 'forget-sessions'))
  assert.match((await proxy.waitFor((m) => m.id === 2)).result.content[0].text, /forgot 1/)
  await settle(100)
  proxy.send(call(3, 'echo', { text: 'on a new session' }))
  // The session the server forgot is a restart: the line comes first (#44).
  const renewed = (await proxy.waitFor((m) => m.id === 3, 15000)).result?.content
  assert.match(renewed?.[0].text, /^\[mcp-snapshot-filter: the connection to the upstream MCP server was lost \(the session expired \(HTTP 404/, JSON.stringify(renewed))
  assert.equal(renewed[1].text, 'on a new session')
  await settle(300)
  assert.equal(answersTo(proxy, 3).length, 1)
  assert.match(proxy.stderr(), /upstream connection lost \(the session expired \(HTTP 404 on posting tools\/call\)\)/)
  assert.match(proxy.stderr(), /reconnected to upstream/)
  await stopProxy(proxy)
})

test('HTTP 500: a plain body is a -32000 naming the status, a JSON-RPC error body is forwarded as the answer', { timeout: 30000 }, async (t) => {
  const server = await startFixture()
  t.after(() => server.stop())
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))
  proxy.send(call(2, 'http-500'))
  const plain = await proxy.waitFor((m) => m.id === 2)
  assert.equal(plain.error.code, -32000)
  assert.match(plain.error.message, /answered HTTP 500 Internal Server Error on posting tools\/call/)
  proxy.send(call(3, 'http-500-json'))
  const json = await proxy.waitFor((m) => m.id === 3)
  assert.deepEqual(json.error, { code: -32603, message: 'fixture internal error' })
  // The session is fine: the next call works, nothing reconnected.
  proxy.send(call(4, 'echo', { text: 'still here' }))
  assert.equal((await proxy.waitFor((m) => m.id === 4)).result.content[0].text, 'still here')
  await settle(200)
  for (const id of [2, 3, 4]) assert.equal(answersTo(proxy, id).length, 1)
  assert.doesNotMatch(proxy.stderr(), /reconnect/)
  await stopProxy(proxy)
  // The session summary on exit, as with a local upstream (no filtered tool was called here).
  assert.match(proxy.stderr(), /session: nothing saved; none of 0 results of filtered tools/)
})

test('HTTP 401 and 403: one clear error line; a --header with ${VAR} authenticates and is never logged', { timeout: 30000 }, async (t) => {
  const token = 'fixture-token-7f3a9c'
  const server = await startFixture(undefined, ['--token', token])
  t.after(() => server.stop())

  const refused = await proxyTo(server.url)
  t.after(() => refused.child.kill('SIGKILL'))
  assert.equal(refused.init.error?.code, -32000)
  assert.match(refused.init.error.message, /refused the credentials: HTTP 401 Unauthorized \(check --header\)/)
  refused.send({ ...INIT, id: 1 })
  assert.equal((await refused.waitFor((m) => m.id === 1)).error.code, -32000)
  await stopProxy(refused)
  assert.equal(refused.stderr().match(/refused the credentials/g).length, 1, refused.stderr())

  const accepted = await proxyTo(server.url, ['--header', 'Authorization: Bearer ${FIXTURE_TOKEN}', '--header=X-Trace: on'], { FIXTURE_TOKEN: token })
  t.after(() => accepted.child.kill('SIGKILL'))
  assert.ok(accepted.init.result, JSON.stringify(accepted.init))
  accepted.send(call(2, 'echo', { text: 'authenticated' }))
  assert.equal((await accepted.waitFor((m) => m.id === 2)).result.content[0].text, 'authenticated')
  // The same through the environment variable, for clients that cannot pass flags.
  const viaEnv = await proxyTo(server.url, [], { MCP_SNAPSHOT_FILTER_HEADERS: `Authorization: Bearer ${token}` })
  t.after(() => viaEnv.child.kill('SIGKILL'))
  assert.ok(viaEnv.init.result)
  await Promise.all([stopProxy(accepted), stopProxy(viaEnv)])
  for (const p of [refused, accepted, viaEnv]) assert.ok(!p.stderr().includes(token), 'the token reached stderr')

  const forbidding = await startFixture(undefined, ['--forbid'])
  t.after(() => forbidding.stop())
  const forbidden = await proxyTo(forbidding.url)
  t.after(() => forbidden.child.kill('SIGKILL'))
  assert.match(forbidden.init.error.message, /HTTP 403 Forbidden/)
  await stopProxy(forbidden)
})

test('slow response headers hold up only their own call', { timeout: 30000 }, async (t) => {
  const server = await startFixture()
  t.after(() => server.stop())
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))
  proxy.send(call(2, 'slow-headers', { ms: 2500 }))
  proxy.send(call(3, 'echo', { text: 'fast' }))
  await proxy.waitFor((m) => m.id === 3)
  assert.equal(answersTo(proxy, 2).length, 0, 'the slow call answered before the fast one')
  const slow = await proxy.waitFor((m) => m.id === 2, 10000)
  assert.equal(slow.result.content[0].text, 'slow-headers done')
  await settle(200)
  assert.equal(answersTo(proxy, 2).length, 1)
  await stopProxy(proxy)
})

test('dropped SSE streams are resumed (Last-Event-ID): every message arrives exactly once', { timeout: 40000 }, async (t) => {
  const server = await startFixture()
  t.after(() => server.stop())
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))

  // The server closes a call's stream and answers later: the client resumes and gets the rest.
  proxy.send(call(2, 'close-stream', { ms: 800 }))
  const closed = await proxy.waitFor((m) => m.id === 2, 15000)
  assert.equal(closed.result?.content[0].text, 'close-stream done', JSON.stringify(closed))
  const logs = () => proxy.messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.data)
  assert.deepEqual(logs(), ['before the close', 'after the close'])

  // The session's own stream is dropped halfway through ten notifications.
  proxy.send(call(3, 'notify', { count: 10 }))
  await proxy.waitFor((m) => m.id === 3)
  const notes = Array.from({ length: 10 }, (_, i) => `note ${i}`)
  await proxy.waitFor(() => logs().length >= 12, 15000)
  await settle(300)
  assert.deepEqual(logs().slice(2), notes)

  // The socket of a call's stream destroyed mid-call (the server lives on): resumed from the
  // event store, the answer arrives once.
  proxy.send(call(4, 'drop-mid-call', { ms: 1000 }))
  const dropped = await proxy.waitFor((m) => m.id === 4, 20000)
  assert.equal(dropped.result?.content[0].text, 'drop-mid-call done', JSON.stringify(dropped))
  proxy.send(call(5, 'echo', { text: 'after the drops' }))
  assert.equal((await proxy.waitFor((m) => m.id === 5)).result.content[0].text, 'after the drops')
  await settle(500)
  for (const id of [2, 3, 4, 5]) assert.equal(answersTo(proxy, id).length, 1, `answers to ${id}`)
  await stopProxy(proxy)
})

test('ids and answers come back exact, unknown methods, notifications and list_changed pass, cancellation reaches the server', { timeout: 30000 }, async (t) => {
  const server = await startFixture()
  t.after(() => server.stop())
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))
  const ids = ['abc', 'a "quoted" \\ id', 2 ** 53 - 1, -7, 1]
  for (const id of ids) proxy.send(call(id, 'echo', { text: `for ${JSON.stringify(id)}` }))
  for (const id of ids) {
    const answer = await proxy.waitFor((m) => m.id === id && !('method' in m))
    assert.equal(answer.result.content[0].text, `for ${JSON.stringify(id)}`)
  }
  // Ids JSON.parse would re-spell come back as the client wrote them (the POST carries the
  // client's text; an answer gets its id text back). The SDK's server refuses an id beyond 2^53
  // (HTTP 400): the proxy's error answer carries that id exactly too.
  const exact = (idText) => (l) => memberText(l, 'id') === idText
  for (const idText of ['1e2', '-0', '12345678901234567890']) {
    proxy.send(`{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"echo","arguments":{"text":"id ${idText}"}}}\n`)
    assert.ok(await waitUntil(() => proxy.rawLines.some(exact(idText)), 10000), `no answer at id ${idText}:\n${proxy.rawLines.join('\n')}`)
  }
  assert.match(proxy.rawLines.find(exact('1e2')), /"text":"id 1e2"/)
  assert.match(proxy.rawLines.find(exact('-0')), /"text":"id -0"/)
  // The server sees the proxy's own ids, so it answers an id beyond 2^53 as any other.
  assert.match(proxy.rawLines.find(exact('12345678901234567890')), /"text":"id 12345678901234567890"/)
  // What the server wrote by hand reaches the client as the SDK parsed it (2^64 and 1.50
  // re-spelled, the escape decoded: the documented limit), as JSON and as SSE, at the id sent.
  for (const [id, tool] of [['raw1', 'raw-json'], ['raw2', 'raw-sse']]) {
    proxy.send(call(id, tool))
    await proxy.waitFor((m) => m.id === id)
    const line = proxy.rawLines.find((l) => l.includes(`"id":"${id}"`))
    assert.equal(line, `{"jsonrpc":"2.0","id":"${id}","result":{"content":[{"type":"text","text":"raw é"}],"n":12345678901234567000,"f":1.5}}`)
  }
  proxy.send({ jsonrpc: '2.0', id: 'u1', method: 'some/unknown-method', params: { x: 1 } })
  const unknown = await proxy.waitFor((m) => m.id === 'u1')
  assert.equal(unknown.error.code, -32601, JSON.stringify(unknown))
  proxy.send({ jsonrpc: '2.0', method: 'notifications/some-unknown', params: {} })
  // list_changed from the server reaches the client; the new tools/list is rechecked: this
  // server has no snapshot tool, so the proxy adds none of its own.
  proxy.send(call('lc', 'list-changed'))
  await proxy.waitFor((m) => m.method === 'notifications/tools/list_changed')
  proxy.send({ jsonrpc: '2.0', id: 'tl', method: 'tools/list' })
  const names = (await proxy.waitFor((m) => m.id === 'tl')).result.tools.map((tool) => tool.name)
  assert.ok(names.includes('echo') && !names.includes('expand_snapshot') && !names.includes('search_snapshot'), names.join(', '))
  // A cancelled call: the proxy owes no answer for it, and the session goes on.
  proxy.send(call('c1', 'sleep', { ms: 1500 }))
  await settle(200)
  proxy.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1', reason: 'test' } })
  proxy.send(call('after', 'echo', { text: 'ok' }))
  await proxy.waitFor((m) => m.id === 'after')
  await settle(2000)
  assert.equal(answersTo(proxy, 'c1').length, 0, 'an answer (or an error) for the cancelled call')
  proxy.send(call('count', 'cancelled'))
  assert.equal((await proxy.waitFor((m) => m.id === 'count')).result.content[0].text, '1', 'the server saw the cancellation')
  for (const id of [...ids, 'u1', 'after', 'count', 'lc', 'tl']) assert.equal(answersTo(proxy, id).length, 1)
  await stopProxy(proxy)
})

test('a late cancellation of a call already answered goes nowhere: it cannot cancel another call under the same number upstream (#41 item 12)', { timeout: 30000 }, async (t) => {
  const server = await startFixture()
  t.after(() => server.stop())
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))
  // The client's initialize went upstream as 1; this call goes as 2 and is answered.
  proxy.send(call(3, 'echo', { text: 'answered' }))
  assert.equal((await proxy.waitFor((m) => m.id === 3)).result.content[0].text, 'answered')
  // Upstream this one is 3: the number the client's late cancellation names.
  proxy.send(call('slow', 'sleep', { ms: 1000 }))
  await settle(200)
  proxy.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'too late' } })
  proxy.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'never-sent' } })
  const slow = await proxy.waitFor((m) => m.id === 'slow', 10000)
  assert.equal(slow.result?.content[0].text, 'sleep done', JSON.stringify(slow))
  proxy.send(call('count', 'cancelled'))
  assert.equal((await proxy.waitFor((m) => m.id === 'count')).result.content[0].text, '0', 'the server saw a cancellation')
  await stopProxy(proxy)
})

test('two in-flight ids beyond 2^53 stay two ids, answered as JSON and as SSE, and cancelling one cancels that one', { timeout: 60000 }, async (t) => {
  const server = await startFixture()
  t.after(() => server.stop())
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))
  const exact = (idText) => (l) => memberText(l, 'id') === idText
  const line = (idText, name, args) => `{"jsonrpc":"2.0","id":${idText},"method":"tools/call","params":{"name":"${name}","arguments":${JSON.stringify(args)}}}\n`
  // One write: both are posted before either is answered. JSON.parse reads both ids as
  // 9007199254740992.
  const ids = ['9007199254740993', '9007199254740992']
  for (const [tool, answer] of [['raw-json', /"text":"raw é"/], ['raw-sse', /"text":"raw é"/], ['echo', null]]) {
    proxy.child.stdin.write(ids.map((id) => line(id, tool, { text: `echo ${id}` })).join(''))
    for (const id of ids) {
      assert.ok(await waitUntil(() => proxy.rawLines.some(exact(id)), 10000), `no answer at id ${id} (${tool}):\n${proxy.rawLines.join('\n')}`)
    }
    await settle(200)
    for (const id of ids) {
      const answers = proxy.rawLines.filter(exact(id))
      assert.equal(answers.length, 1, `${tool}: answers at ${id}:\n${answers.join('\n')}`)
      assert.match(answers[0], answer ?? new RegExp(`"text":"echo ${id}"`))
    }
    proxy.rawLines.length = 0
  }
  // Two slow calls (answered on SSE streams): cancelling the first leaves the second alone.
  proxy.child.stdin.write(line(ids[0], 'sleep', { ms: 1500 }) + line(ids[1], 'sleep', { ms: 1500 }))
  await settle(300)
  proxy.child.stdin.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${ids[0]}}}\n`)
  assert.ok(await waitUntil(() => proxy.rawLines.some(exact(ids[1])), 10000), proxy.rawLines.join('\n'))
  await settle(500)
  assert.equal(proxy.rawLines.filter(exact(ids[0])).length, 0, 'an answer for the cancelled call')
  assert.match(proxy.rawLines.find(exact(ids[1])), /"text":"sleep done"/)
  proxy.send(call('count', 'cancelled'))
  assert.equal((await proxy.waitFor((m) => m.id === 'count')).result.content[0].text, '1', 'the server saw the cancellation')
  await stopProxy(proxy)
})

test('two in-flight ids beyond 2^53 stay two ids over HTTP+SSE (server-everything sse)', { timeout: 60000 }, async (t) => {
  const server = await startEverything('sse')
  t.after(() => server.stop())
  const proxy = await proxyTo(server.url)
  t.after(() => proxy.child.kill('SIGKILL'))
  const exact = (idText) => (l) => memberText(l, 'id') === idText
  const ids = ['9007199254740993', '9007199254740992']
  proxy.child.stdin.write(ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"m${id}"}}}\n`).join(''))
  for (const id of ids) assert.ok(await waitUntil(() => proxy.rawLines.some(exact(id)), 10000), `no answer at id ${id}:\n${proxy.rawLines.join('\n')}`)
  await settle(200)
  for (const id of ids) {
    const answers = proxy.rawLines.filter(exact(id))
    assert.equal(answers.length, 1, answers.join('\n'))
    assert.match(answers[0], new RegExp(`m${id}`))
  }
  await stopProxy(proxy)
})

test('HTTPS trusts the system store (SSL_CERT_FILE here): a CA found there is accepted, an unknown one is one clear error, not retried', { timeout: 60000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-tls-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  try {
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=msf test CA')
  } catch (err) {
    if (process.env.CI) throw err
    t.skip(`openssl is not available: ${err.message}`)
    return
  }
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=127.0.0.1')
  fs.writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n')
  openssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '2', '-extfile', 'san.ext')

  const port = await freePort()
  const server = await startFixture(port, ['--tls', path.join(dir, 'leaf.pem'), path.join(dir, 'leaf.key')])
  t.after(() => server.stop())
  const url = `https://127.0.0.1:${port}/mcp`

  const trusted = await proxyTo(url, [], { SSL_CERT_FILE: path.join(dir, 'ca.pem') })
  t.after(() => trusted.child.kill('SIGKILL'))
  assert.ok(trusted.init.result, JSON.stringify(trusted.init))
  trusted.send(call(2, 'echo', { text: 'over https' }))
  assert.equal((await trusted.waitFor((m) => m.id === 2)).result.content[0].text, 'over https')
  await stopProxy(trusted)

  const refused = await proxyTo(url, [], { SSL_CERT_FILE: path.join(dir, 'leaf.csr') })
  t.after(() => refused.child.kill('SIGKILL'))
  assert.equal(refused.init.error?.code, -32000)
  assert.match(refused.init.error.message, /certificate/i)
  assert.doesNotMatch(refused.stderr(), /trying again/, 'a certificate error was retried')
  await stopProxy(refused)
})

test('bad remote options are usage errors; plain http to another host warns', { timeout: 20000 }, async () => {
  const run = (args, env = {}) => {
    const proxy = spawnRaw([process.execPath, BIN, ...args], { env: { ...process.env, ...env } })
    proxy.child.stdin.end()
    return proxy.exited.then(({ code }) => ({ code, stderr: proxy.stderr() }))
  }
  const both = await run(['--upstream-url', 'http://127.0.0.1:9/mcp', '--', 'node', 'x.js'])
  assert.equal(both.code, 2)
  assert.match(both.stderr, /either --upstream-url or an upstream command/)
  const scheme = await run(['--upstream-url', 'ftp://127.0.0.1/mcp'])
  assert.equal(scheme.code, 2)
  const unset = await run(['--upstream-url', 'http://127.0.0.1:9/mcp', '--header', 'Authorization: Bearer ${NOT_SET_ANYWHERE_1}'])
  assert.equal(unset.code, 2)
  assert.match(unset.stderr, /environment variable NOT_SET_ANYWHERE_1 is not set/)
  const noName = await run(['--upstream-url', 'http://127.0.0.1:9/mcp', '--header', 'no colon here'])
  assert.equal(noName.code, 2)
  assert.match(noName.stderr, /Name: value/)
  // No request is sent, so nothing is contacted: the warning comes at start.
  const remote = await run(['--upstream-url', 'http://user:secret-pw@example.invalid/mcp?key=secret-key'])
  assert.match(remote.stderr, /plain http to another host/)
  assert.ok(!remote.stderr.includes('secret-pw') && !remote.stderr.includes('secret-key'), remote.stderr)
  const loopback = await run(['--upstream-url', 'http://localhost:9/mcp'])
  assert.doesNotMatch(loopback.stderr, /plain http/)
})
