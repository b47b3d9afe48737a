'use strict'

// bin/upstream-http.js through the upstream interface the proxy uses (send(text) / online(line)),
// against the scriptable fixture on 127.0.0.1: answers come back at the client's id as it was
// written, with what the SDK parsed, and failures come back as error lines.

const test = require('node:test')
const assert = require('node:assert/strict')

const { HttpUpstream, httpAgent, trustedCertificates, parseHeaders, redactUrl, isLoopback } = require('../bin/upstream-http.js')
const { INIT, waitUntil } = require('./helpers.js')
const { startFixture } = require('./http-servers.js')

function open(url) {
  const upstream = new HttpUpstream({ url, retrySeconds: 2 })
  const lines = []
  upstream.online = (line) => lines.push(line.toString('utf8'))
  const lineFor = async (pred, ms = 10000) => {
    assert.ok(await waitUntil(() => lines.some((l) => pred(JSON.parse(l))), ms, 20), `no such line in:\n${lines.join('\n')}`)
    return lines.find((l) => pred(JSON.parse(l)))
  }
  return { upstream, lines, lineFor }
}

test('answers come back at the client\'s id text as the SDK parsed them; errors and held lines come back as lines', { timeout: 30000 }, async (t) => {
  const server = await startFixture()
  t.after(() => server.stop())
  const { upstream, lines, lineFor } = open(server.url)
  t.after(() => upstream.close())
  await upstream.start()
  assert.equal(upstream.send(JSON.stringify(INIT)), true)
  assert.match(await lineFor((m) => m.id === 0), /"protocolVersion":"2025-11-25"/)
  upstream.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

  // Written by hand by the server: an integer beyond 2^53, 1.50, an escape. The SDK parses what
  // it carries (the documented limit of the HTTP upstream): the values come as it serializes
  // them, the id as the client wrote it, as JSON and as an SSE event.
  for (const [id, tool] of [[5, 'raw-json'], [6, 'raw-sse']]) {
    upstream.send(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{}}}`)
    const line = await lineFor((m) => m.id === id)
    assert.equal(line, `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"raw é"}],"n":12345678901234567000,"f":1.5}}`)
  }
  // An answer the SDK's schema refuses (an unknown top-level member) is an error, not silence.
  for (const [id, tool] of [[8, 'bad-json'], [9, 'bad-sse']]) {
    upstream.send(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{}}}`)
    const bad = JSON.parse(await lineFor((m) => m.id === id))
    assert.equal(bad.error?.code, -32000, JSON.stringify(bad))
    assert.match(bad.error.message, /not JSON-RPC/)
  }

  upstream.send('{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"http-500","arguments":{}}}')
  const error = JSON.parse(await lineFor((m) => m.id === 'e'))
  assert.equal(error.error.code, -32000)
  assert.match(error.error.message, /HTTP 500/)

  // The client is not reading: lines wait until it is.
  upstream.pause()
  upstream.send('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"held"}}}')
  await new Promise((resolve) => setTimeout(resolve, 500))
  assert.ok(!lines.some((l) => JSON.parse(l).id === 7), 'a line came while paused')
  upstream.resume()
  assert.match(await lineFor((m) => m.id === 7), /"text":"held"/)
})

test('headers: ${VAR} from the environment, bad ones refused without their values; URLs logged without secrets', () => {
  assert.deepEqual(parseHeaders(['Authorization: Bearer ${TOK}', 'X-A:b c '], { TOK: 's3cret' }), { Authorization: 'Bearer s3cret', 'X-A': 'b c' })
  assert.throws(() => parseHeaders(['Authorization: ${MISSING}'], {}), (err) => /MISSING is not set/.test(err.message))
  assert.throws(() => parseHeaders(['X: a${NL}b'], { NL: '\r\nInjected: 1' }), (err) => /line break/.test(err.message) && !err.message.includes('Injected'))
  assert.throws(() => parseHeaders([': nameless']), /valid name/)
  assert.equal(redactUrl(new URL('https://u:p@host.example:8443/mcp?token=t#f')), 'https://host.example:8443/mcp?…')
  for (const host of ['localhost', '127.0.0.1', '127.3.4.5', '[::1]', 'a.localhost']) assert.ok(isLoopback(new URL(`http://${host}/`).hostname), host)
  for (const host of ['example.com', '10.0.0.1', '128.0.0.1', 'localhost.example.com']) assert.ok(!isLoopback(new URL(`http://${host}/`).hostname), host)
})

test('the HTTP client is an undici Agent; the system CAs are read', () => {
  const agent = httpAgent(1024, {})
  assert.equal(typeof agent.dispatch, 'function')
  const tls = require('node:tls')
  const own = tls.rootCertificates.length
  const fs = require('node:fs')
  if (fs.existsSync('/etc/ssl/certs/ca-certificates.crt')) assert.ok(trustedCertificates({}).length > own)
  assert.equal(trustedCertificates({ SSL_CERT_FILE: '/nonexistent' }).length, own)
})

test('a body or an SSE stream over the cap: the request gets an error, memory stays bounded, the upstream stays usable', { timeout: 120000 }, async (t) => {
  const path = require('node:path')
  const { spawnSync } = require('node:child_process')
  const { startServer, freePort } = require('./http-servers.js')
  const { FIXTURES } = require('./helpers.js')
  const port = await freePort()
  const server = await startServer([path.join(FIXTURES, 'http-big-server.js'), '--port', String(port)], { port })
  t.after(() => server.stop())
  // In a process of its own, so that its peak RSS is the upstream's alone: 300 MB each, a
  // 16 MB cap.
  const script = `
const { HttpUpstream } = require(${JSON.stringify(path.join(__dirname, '..', 'bin', 'upstream-http.js'))})
const upstream = new HttpUpstream({ url: 'http://127.0.0.1:${port}/mcp', retrySeconds: 2, maxMessageBytes: 16 * 1024 * 1024 })
const answers = new Map()
let waiting = null
upstream.online = (line) => {
  const m = JSON.parse(line.toString('utf8'))
  answers.set(m.id, m)
  if (waiting && answers.has(waiting.id)) waiting.resolve()
}
const ask = (id, method, params) => {
  upstream.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
  return new Promise((resolve) => {
    waiting = { id, resolve }
    if (answers.has(id)) resolve()
  }).then(() => answers.get(id))
}
;(async () => {
  await upstream.start()
  const out = { init: await ask(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }) }
  upstream.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
  for (const tool of ['big-json', 'big-error', 'big-sse']) out[tool] = await ask(tool, 'tools/call', { name: tool, arguments: { mb: 300 } })
  out.after = await ask('after', 'tools/call', { name: 'echo', arguments: { text: 'still here' } })
  out.maxRssMb = process.resourceUsage().maxRSS / 1024
  process.stdout.write(JSON.stringify(out))
  await upstream.close()
})()
`
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 100000 })
  assert.equal(run.status, 0, run.stderr)
  const out = JSON.parse(run.stdout)
  assert.ok(out.init.result, JSON.stringify(out.init))
  for (const tool of ['big-json', 'big-error', 'big-sse']) {
    assert.equal(out[tool].error?.code, -32000, `${tool}: ${JSON.stringify(out[tool])}`)
    // (An HTTP error's body the SDK reads itself: only the status is left to tell.)
    assert.match(out[tool].error.message, { 'big-json': /body of more than 16777216 bytes/, 'big-error': /answered HTTP 500/, 'big-sse': /stream of more than 16777216 bytes/ }[tool], tool)
  }
  assert.equal(out.after.result?.content[0].text, 'still here')
  // 16 MB held at most, with what the SDK builds of it, where a 300 MB body grew the process
  // to 700 MB+ uncapped.
  t.diagnostic(`peak RSS ${Math.round(out.maxRssMb)} MB`)
  assert.ok(out.maxRssMb < 250, `peak RSS ${Math.round(out.maxRssMb)} MB`)
  assert.match(run.stderr, /body of more than 16777216 bytes/)
})
