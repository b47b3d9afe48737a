'use strict'

// Serve mode (`--port`): the bin as a Streamable HTTP server in front of one stdio upstream (the
// SDK v2 fixture server, whose take_snapshot can change the page a little), with SDK v2
// clients over HTTP: two clients at once, each with its own deltas; a client that vanishes;
// DELETE; the Origin and Host checks; the bearer token.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawn } = require('node:child_process')

const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client')

const { BIN, FIXTURES, waitUntil } = require('./helpers.js')

const UPSTREAM = [process.execPath, path.join(FIXTURES, 'sdk', 'v2-server.mjs'), 'dual']

/** The bin serving on a free port of 127.0.0.1; resolves once it says where. */
async function startServe(args = [], env = {}, upstream = UPSTREAM) {
  const child = spawn(process.execPath, [BIN, '--port', '0', ...args, '--', ...upstream], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  const listening = await waitUntil(() => /serving MCP over Streamable HTTP at (\S+)/.test(stderr) || child.exitCode !== null, 20000)
  const url = /serving MCP over Streamable HTTP at (\S+)/.exec(stderr)?.[1]
  assert.ok(listening && url, `the bin serves:\n${stderr}`)
  return {
    url,
    child,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM')
      return exited
    },
  }
}

async function connectClient(url, name, headers = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  const client = new Client({ name, version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

const textOf = (result) => result.content.map((c) => c.text).join('')
const snapshot = (client, change) => client.callTool({ name: 'take_snapshot', arguments: { pageId: 1, fixture: 'grid', ...(change ? { change } : {}) } }).then(textOf)

/** A raw HTTP request (fetch cannot set Host); resolves with { status, body }. */
function rawRequest(url, { method = 'POST', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let data = ''
      res.on('data', (d) => (data += d))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** The JSON-RPC messages of a response body (JSON, or SSE `data:` lines). */
function messagesOf(response) {
  if (!/event-stream/.test(response.headers['content-type'] ?? '')) return response.body ? [JSON.parse(response.body)] : []
  return response.body.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6).map((l) => JSON.parse(l.slice(6)))
}

/** A raw tools/list in session `sessionId`. */
const listTools = (url, sessionId) => rawRequest(url, { headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) })

const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })

test('two clients at once: each gets its own sessions, snapshots and deltas', { timeout: 60_000 }, async () => {
  const served = await startServe()
  try {
    const [a, b] = await Promise.all([connectClient(served.url, 'alice'), connectClient(served.url, 'bob')])
    assert.notEqual(a.transport.sessionId, b.transport.sessionId)
    // Both first snapshots at once: both whole, neither a delta against the other's.
    const [a1, b1] = await Promise.all([snapshot(a.client), snapshot(b.client, 1)])
    assert.match(a1, /snapshot 1, full: first snapshot of this page/)
    assert.match(b1, /snapshot 1, full: first snapshot of this page/)
    const [a2, b2] = await Promise.all([snapshot(a.client, 2), snapshot(b.client, 3)])
    assert.match(a2, /snapshot 2: delta against snapshot 1, 0 added, 1 changed, 0 removed;[^]*\n +72_11 link "Orders \(2 new\)"\n/)
    assert.match(b2, /snapshot 2: delta against snapshot 1, 0 added, 1 changed, 0 removed;[^]*\n +72_11 link "Orders \(3 new\)"\n/)
    // The proxy's tools read each client's own page.
    const search = (c) => c.client.callTool({ name: 'search_snapshot', arguments: { query: 'new\\)', regex: true } }).then(textOf)
    assert.match(await search(a), /Orders \(2 new\)/)
    assert.match(await search(b), /Orders \(3 new\)/)
    await Promise.all([a.client.close(), b.client.close()])
  } finally {
    await served.stop()
  }
})

test('a client that vanishes: its session idles out and is dropped, the other goes on', { timeout: 60_000 }, async () => {
  const served = await startServe(['--session-idle-seconds', '1'])
  try {
    // The vanishing client: it opens a session, then is never heard of again (no DELETE).
    const opened = await rawRequest(served.url, { body: INITIALIZE })
    assert.equal(opened.status, 200)
    const gone = opened.headers['mcp-session-id']
    assert.ok(gone)
    const b = await connectClient(served.url, 'bob')
    assert.match(await snapshot(b.client), /snapshot 1, full/)
    // Bob keeps calling while the other session idles out.
    let change = 0
    const ended = await waitUntil(async () => {
      await b.client.callTool({ name: 'echo', arguments: { text: String(++change) } })
      return served.stderr().includes(`session ${gone} ended: idle`)
    }, 30000, 200)
    assert.ok(ended, `the vanished session is dropped:\n${served.stderr()}`)
    assert.equal((await listTools(served.url, gone)).status, 404)
    // Bob's session and his snapshots are still there: his next snapshot is a delta.
    assert.match(await snapshot(b.client, 4), /snapshot 2: delta against snapshot 1/)
    await b.client.close()
  } finally {
    await served.stop()
  }
})

test('DELETE ends a session: its id is unknown from then on, other sessions go on', { timeout: 60_000 }, async () => {
  const served = await startServe()
  try {
    const a = await connectClient(served.url, 'alice')
    const b = await connectClient(served.url, 'bob')
    const id = a.transport.sessionId
    await snapshot(a.client)
    await a.transport.terminateSession()
    assert.ok(await waitUntil(() => served.stderr().includes(`session ${id} ended`), 10000))
    assert.equal((await listTools(served.url, id)).status, 404)
    assert.match(await snapshot(b.client), /snapshot 1, full/)
    await b.client.close()
  } finally {
    await served.stop()
  }
})

test('DNS rebinding: a foreign Origin or Host is refused with 403, a local one served', { timeout: 60_000 }, async () => {
  const served = await startServe()
  try {
    const port = new URL(served.url).port
    assert.equal((await rawRequest(served.url, { headers: { origin: 'http://evil.example' }, body: INITIALIZE })).status, 403)
    assert.equal((await rawRequest(served.url, { headers: { host: `evil.example:${port}` }, body: INITIALIZE })).status, 403)
    assert.equal((await rawRequest(served.url, { headers: { origin: `http://localhost:${port}` }, body: INITIALIZE })).status, 200)
    // Only /mcp is served.
    assert.equal((await rawRequest(served.url.replace(/\/mcp$/, '/other'), { body: INITIALIZE })).status, 404)
  } finally {
    await served.stop()
  }
})

test('a bearer token, when set, is required of every request', { timeout: 60_000 }, async () => {
  const served = await startServe([], { MCP_SNAPSHOT_FILTER_AUTH_TOKEN: 's3cret' })
  try {
    const none = await rawRequest(served.url, { body: INITIALIZE })
    assert.equal(none.status, 401)
    assert.equal(none.headers['www-authenticate'], 'Bearer')
    assert.equal((await rawRequest(served.url, { headers: { authorization: 'Bearer wrong' }, body: INITIALIZE })).status, 401)
    const a = await connectClient(served.url, 'alice', { authorization: 'Bearer s3cret' })
    assert.match(await snapshot(a.client), /snapshot 1, full/)
    await a.client.close()
    assert.doesNotMatch(served.stderr(), /s3cret/)
  } finally {
    await served.stop()
  }
})

test('ids toward the upstream are the proxy\'s own, unique across clients; each answer goes back under its client\'s id', { timeout: 60_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-ids-'))
  const record = path.join(dir, 'upstream.jsonl')
  const served = await startServe([], { FIXTURE_RECORD: record }, [process.execPath, path.join(FIXTURES, 'fixture-server.js')])
  try {
    const sessions = []
    for (let i = 0; i < 2; i++) {
      const opened = await rawRequest(served.url, { body: INITIALIZE })
      assert.equal(messagesOf(opened)[0].id, 1)
      const headers = { 'mcp-session-id': opened.headers['mcp-session-id'], 'mcp-protocol-version': '2025-06-18' }
      await rawRequest(served.url, { headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
      sessions.push(headers)
    }
    // Both clients' id 7 at once; the upstream holds both and answers them in reverse order,
    // each answer naming the id it came under.
    const answers = await Promise.all(sessions.map((headers) => rawRequest(served.url, { headers, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'fixture/reverse', params: { count: 2 } }) })))
    const [a, b] = answers.map((r) => messagesOf(r).find((m) => m.id !== undefined))
    assert.equal(a.id, 7)
    assert.equal(b.id, 7)
    assert.notEqual(a.result.id, b.result.id)
    const upstreamIds = fs.readFileSync(record, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((m) => m.id !== undefined).map((m) => m.id)
    assert.equal(new Set(upstreamIds).size, upstreamIds.length, `unique upstream ids: ${upstreamIds}`)
    assert.ok(upstreamIds.includes(a.result.id) && upstreamIds.includes(b.result.id))
  } finally {
    await served.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a call longer than the idle timeout is no idle session: it is answered, and the session lives on', { timeout: 60_000 }, async () => {
  const served = await startServe(['--session-idle-seconds', '1'], {}, [process.execPath, path.join(FIXTURES, 'fixture-server.js')])
  try {
    const opened = await rawRequest(served.url, { body: INITIALIZE })
    const headers = { 'mcp-session-id': opened.headers['mcp-session-id'], 'mcp-protocol-version': '2025-06-18' }
    await rawRequest(served.url, { headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
    // The upstream answers after 3 s, three idle timeouts.
    const answer = await rawRequest(served.url, { headers, body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'fixture/delay', params: { ms: 3000 } }) })
    assert.equal(answer.status, 200)
    assert.ok(messagesOf(answer).some((m) => m.id === 5 && 'result' in m), answer.body)
    assert.doesNotMatch(served.stderr(), /ended: idle/)
  } finally {
    await served.stop()
  }
})
