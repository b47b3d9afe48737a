'use strict'

// Message-level transparency: what the client sends reaches the upstream unchanged, and what the
// upstream sends reaches the client unchanged, for every kind of message, known or not.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { FIXTURES, INIT, proxyCommand, spawnRaw, waitUntil } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')

function startProxy(extraEnv = {}, proxyArgs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-transparency-'))
  const record = path.join(dir, 'received.jsonl')
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE], proxyArgs), {
    env: { ...process.env, FIXTURE_RECORD: record, ...extraEnv },
  })
  const received = () =>
    fs.existsSync(record)
      ? fs
          .readFileSync(record, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : []
  return { proxy, received }
}

const CLIENT_MESSAGES = [
  { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true }, experimental: { x: 1 } }, clientInfo: { name: 'c', version: '9' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 1, method: 'ping' },
  { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { q: 'a "quoted"\nline' }, _meta: { progressToken: 'tok-1', 'vendor.example/x': [1, 2] } } },
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 7, progress: 0.5, total: 1, message: 'half' } },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99, reason: 'user' } },
  { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
  { jsonrpc: '2.0', id: 4, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: 'x' } } },
  { jsonrpc: '2.0', id: 5, method: 'resources/subscribe', params: { uri: 'file:///tmp/x' } },
  { jsonrpc: '2.0', id: 6, method: 'tasks/get', params: { taskId: 't-1' } },
  { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { cursor: 'page-2' } },
  { jsonrpc: '2.0', id: 8, method: 'server/discover', params: { future: { nested: true } } },
  { jsonrpc: '2.0', id: 9007199254740991, method: 'some/unknown-method', params: { a: null } },
  { jsonrpc: '2.0', id: 'x-10', method: 'prompts/get', params: { name: 'p', arguments: { k: 'v' } } },
]

test('every client message reaches the upstream unchanged and every answer comes back', async () => {
  const { proxy, received } = startProxy()
  try {
    for (const msg of CLIENT_MESSAGES) proxy.send(msg)
    const ids = CLIENT_MESSAGES.filter((m) => 'id' in m).map((m) => m.id)
    for (const id of ids) await proxy.waitFor((m) => m.id === id)
    assert.deepEqual(received(), CLIENT_MESSAGES)
    // The fixture echoes unknown methods: the answer carries the request exactly as sent.
    const unknown = proxy.messages.find((m) => m.id === 9007199254740991)
    assert.deepEqual(unknown.result.echo, CLIENT_MESSAGES[13])
    const discover = proxy.messages.find((m) => m.id === 8)
    assert.deepEqual(discover.result.echo.params, { future: { nested: true } })
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
  }
})

test('upstream requests, notifications and the client replies pass both ways', async () => {
  const { proxy, received } = startProxy()
  try {
    proxy.send(INIT)
    await proxy.waitFor((m) => m.id === 0)
    const sampling = { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } }
    proxy.send({ jsonrpc: '2.0', id: 'ask', method: 'fixture/ask-client', params: sampling })
    const upstreamRequest = await proxy.waitFor((m) => m.method === 'sampling/createMessage')
    assert.deepEqual(upstreamRequest.params, sampling.params)
    const clientReply = { jsonrpc: '2.0', id: upstreamRequest.id, result: { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm', stopReason: 'endTurn' } }
    proxy.send(clientReply)
    const final = await proxy.waitFor((m) => m.id === 'ask')
    assert.deepEqual(final.result.clientSaid, clientReply.result)
    assert.deepEqual(received().at(-1), clientReply)

    proxy.send({ jsonrpc: '2.0', id: 'n', method: 'fixture/notify', params: { count: 25 } })
    await proxy.waitFor((m) => m.id === 'n')
    const notes = proxy.messages.filter((m) => m.method === 'notifications/message')
    assert.deepEqual(
      notes.map((n) => n.params.data),
      Array.from({ length: 25 }, (_, i) => `n${i}`),
    )
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
  }
})

test('with --filter-level=off even list and call results are forwarded as the upstream sent them', async () => {
  const toolsList = path.join(FIXTURES, 'lists', 'chrome-devtools-mcp.tools-list.json')
  const { proxy } = startProxy(fs.existsSync(toolsList) ? { FIXTURE_TOOLS_LIST: toolsList } : {}, ['--filter-level=off'])
  try {
    proxy.send(INIT)
    proxy.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    await proxy.waitFor((m) => m.id === 1)
    const line = proxy.rawLines.find((l) => JSON.parse(l).id === 1)
    const expected = fs.existsSync(toolsList) ? JSON.parse(fs.readFileSync(toolsList, 'utf8')).result : null
    if (expected) assert.deepEqual(JSON.parse(line).result, expected)
    else assert.ok(JSON.parse(line).result.tools.length > 0)
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
  }
})

test('non-JSON lines the upstream prints are dropped and logged, never forwarded', async () => {
  const { proxy } = startProxy()
  try {
    proxy.send(INIT)
    proxy.send({ jsonrpc: '2.0', id: 'g', method: 'fixture/garbage' })
    const reply = await proxy.waitFor((m) => m.id === 'g')
    assert.deepEqual(reply.result, { ok: true })
    // Every line on stdout parsed as JSON (spawnRaw would have thrown otherwise); none is garbage.
    assert.ok(proxy.rawLines.every((l) => JSON.parse(l).jsonrpc === '2.0'))
    // stderr and stdout are separate pipes: the log line may land after the reply.
    await waitUntil(() => /upstream printed a line/.test(proxy.stderr()), 5000)
    assert.match(proxy.stderr(), /upstream printed a line that is not a JSON-RPC message/)
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
  }
})

test('malformed client input gets JSON-RPC errors and the proxy keeps serving', async () => {
  const { proxy, received } = startProxy()
  try {
    proxy.send(INIT)
    await proxy.waitFor((m) => m.id === 0)
    proxy.send('{"jsonrpc": "2.0", "id": 5, "method": \n')
    proxy.send('{"hello": "world", "id": 6}\n')
    proxy.send('[]\n')
    const parseError = await proxy.waitFor((m) => m.error?.code === -32700)
    assert.equal(parseError.id, null)
    const invalid = await proxy.waitFor((m) => m.error?.code === -32600 && m.id === 6)
    assert.match(invalid.error.message, /JSON-RPC/)
    await proxy.waitFor((m) => m.error?.code === -32600 && m.id === null)
    proxy.send({ jsonrpc: '2.0', id: 7, method: 'ping' })
    await proxy.waitFor((m) => m.id === 7 && m.result)
    // A response to nothing is forwarded (the upstream decides what it means), not invented.
    proxy.send({ jsonrpc: '2.0', id: 'nobody-asked', result: {} })
    proxy.send({ jsonrpc: '2.0', id: 8, method: 'ping' })
    await proxy.waitFor((m) => m.id === 8)
    assert.ok(received().some((m) => m.id === 'nobody-asked'))
    // A batch is split into its messages.
    proxy.send(`${JSON.stringify([{ jsonrpc: '2.0', id: 'b1', method: 'ping' }, { jsonrpc: '2.0', id: 'b2', method: 'ping' }])}\n`)
    await proxy.waitFor((m) => m.id === 'b1')
    await proxy.waitFor((m) => m.id === 'b2')
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
  }
})
