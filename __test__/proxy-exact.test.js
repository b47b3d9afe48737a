'use strict'

// Numbers arrive exact: a message the proxy does not rewrite goes through byte for byte whatever
// its size, requests are keyed by the id's exact JSON text, and a rewritten response keeps its
// envelope's text. Python, Go and Rust clients use 64-bit ids that JS numbers cannot hold.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { FIXTURES, proxyCommand, spawnRaw } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const SNAPSHOT = path.join(FIXTURES, 'replay', 'take_snapshot.json')

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'msf-exact-'))
}

function startProxy(record, proxyArgs = []) {
  return spawnRaw(proxyCommand([process.execPath, FIXTURE], proxyArgs), { env: { ...process.env, FIXTURE_RECORD: record } })
}

/** The client's raw line whose text starts as a response to the id written `idText`. */
function waitForRaw(proxy, idText, ms = 10000) {
  const prefix = `{"jsonrpc":"2.0","id":${idText},`
  return proxy.waitFor((m) => m.id !== undefined && m.method === undefined, ms).then(async () => {
    const end = Date.now() + ms
    for (;;) {
      const line = proxy.rawLines.find((l) => l.startsWith(prefix))
      if (line) return line
      if (Date.now() > end) throw new Error(`no response with id ${idText}; got:\n${proxy.rawLines.join('\n')}\n${proxy.stderr()}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  })
}

async function stop(proxy) {
  proxy.child.stdin.end()
  return proxy.exited
}

test('big integers, 1e400 and odd spellings reach the upstream and come back byte for byte', async () => {
  const dir = tempDir()
  const record = path.join(dir, 'record.jsonl')
  const proxy = startProxy(record)
  try {
    const sent = [
      '{"jsonrpc":"2.0","id":12345678901234567891,"method":"fixture/raw","params":{"n":1e400,"m":123456789012345678901234567890,"f":1.0,"s":"\\u00e9\\/"}}',
      '{"jsonrpc":"2.0","id":1E400,"method":"fixture/raw","params":{ "spaced" : [ 1 , 2 ] }}',
      '{"jsonrpc":"2.0","id":-0,"method":"fixture/raw"}',
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"big":18446744073709551617}}',
    ]
    for (const line of sent) proxy.send(`${line}\n`)
    for (const idText of ['12345678901234567891', '1E400', '-0']) {
      const line = await waitForRaw(proxy, idText)
      // The fixture's answer holds the request as it received it; the answer itself arrives as written.
      const request = sent.find((l) => l.startsWith(`{"jsonrpc":"2.0","id":${idText},`))
      assert.equal(line, `{"jsonrpc":"2.0","id":${idText},"result":${JSON.stringify({ line: request })}}`)
    }
    assert.ok(!proxy.messages.some((m) => m.error), `no error reply expected:\n${proxy.rawLines.join('\n')}`)
    await stop(proxy)
    // Every line reached the upstream exactly as the client wrote it.
    assert.deepEqual(fs.readFileSync(record, 'utf8').trimEnd().split('\n'), sent)
  } finally {
    if (proxy.child.exitCode === null) await stop(proxy)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('ids that round to the same JS number stay two requests', async () => {
  const dir = tempDir()
  const proxy = startProxy(path.join(dir, 'record.jsonl'), ['--upstream-restarts=0'])
  try {
    // Both in flight at once, answered in reverse order, each with its own id.
    proxy.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"fixture/raw","params":{"hold":2}}\n')
    proxy.send('{"jsonrpc":"2.0","id":9007199254740992,"method":"fixture/raw","params":{"hold":2}}\n')
    assert.match(await waitForRaw(proxy, '9007199254740993'), /"line":"\{\\"jsonrpc\\":\\"2.0\\",\\"id\\":9007199254740993,/)
    assert.match(await waitForRaw(proxy, '9007199254740992'), /"line":"\{\\"jsonrpc\\":\\"2.0\\",\\"id\\":9007199254740992,/)
    // The pending map keys them apart: when the upstream dies, each gets its own error.
    proxy.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"fixture/silence"}\n')
    proxy.send('{"jsonrpc":"2.0","id":9007199254740992,"method":"fixture/silence"}\n')
    proxy.send('{"jsonrpc":"2.0","id":1E400,"method":"fixture/silence"}\n')
    proxy.send('{"jsonrpc":"2.0","id":"die","method":"fixture/exit","params":{"code":4}}\n')
    const { code } = await proxy.exited
    assert.equal(code, 4)
    const errors = proxy.rawLines.filter((l) => l.includes('"code":-32000'))
    for (const idText of ['9007199254740993', '9007199254740992', '1E400']) {
      assert.equal(errors.filter((l) => l.startsWith(`{"jsonrpc":"2.0","id":${idText},"error":`)).length, 1, `one error for id ${idText}:\n${errors.join('\n')}`)
    }
  } finally {
    if (proxy.child.exitCode === null) await stop(proxy)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a filtered response keeps its id and envelope text; only the result changes', async () => {
  const dir = tempDir()
  const result = JSON.parse(fs.readFileSync(SNAPSHOT, 'utf8')).result
  const file = path.join(dir, 'line.json')
  fs.writeFileSync(file, `{"jsonrpc":"2.0","id":__ID__,"result":${JSON.stringify(result)},"extra":{"n":123456789012345678901234567890}}`)
  const proxy = startProxy(path.join(dir, 'record.jsonl'), ['--filter-level=moderate'])
  try {
    proxy.send(`{"jsonrpc":"2.0","id":12345678901234567891,"method":"tools/call","params":{"name":"take_snapshot","arguments":{"rawLine":${JSON.stringify(file)}}}}\n`)
    const line = await waitForRaw(proxy, '12345678901234567891')
    assert.ok(line.endsWith(',"extra":{"n":123456789012345678901234567890}}'), line.slice(-200))
    const text = JSON.parse(line).result.content.find((b) => b.type === 'text').text
    assert.match(text, /… \d+ hidden .*expand_snapshot uid=/, 'the result was filtered')
  } finally {
    await stop(proxy)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a batch goes on as its elements, each byte for byte; a bad element is answered with its exact id', async () => {
  const dir = tempDir()
  const record = path.join(dir, 'record.jsonl')
  const proxy = startProxy(record)
  try {
    proxy.send('[{"jsonrpc":"2.0","id":12345678901234567891,"method":"fixture/raw"} , {"jsonrpc":"1.0","id":98765432109876543211,"method":"x"}]\n')
    await waitForRaw(proxy, '12345678901234567891')
    const invalid = await waitForRaw(proxy, '98765432109876543211')
    assert.match(invalid, /"code":-32600/)
    await stop(proxy)
    assert.deepEqual(fs.readFileSync(record, 'utf8').trimEnd().split('\n'), ['{"jsonrpc":"2.0","id":12345678901234567891,"method":"fixture/raw"}'])
  } finally {
    if (proxy.child.exitCode === null) await stop(proxy)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('bytes that are not UTF-8 inside a string pass as they came', { skip: process.platform === 'win32' && 'uses sh' }, async () => {
  const dir = tempDir()
  const out = path.join(dir, 'received.bin')
  // The upstream only stores what it receives, byte for byte.
  const proxy = spawnRaw(proxyCommand(['sh', '-c', 'cat > "$OUT"']), { env: { ...process.env, OUT: out } })
  try {
    const line = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from('"}}\n')])
    proxy.child.stdin.write(line)
    await stop(proxy)
    assert.deepEqual(fs.readFileSync(out), line)
  } finally {
    if (proxy.child.exitCode === null) await stop(proxy)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
