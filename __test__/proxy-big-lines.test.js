'use strict'

// Big upstream response lines take the route every line takes (one routeResponse call: the
// envelope read natively, the line kept as bytes). Forwarded, they must be byte-identical to
// what the upstream wrote; filtered, identical to what the session makes of the same text.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PassThrough } = require('node:stream')

const native = require('../index.js')
const { Proxy } = require('../bin/proxy.js')
const { FIXTURES } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const SNAPSHOT = path.join(FIXTURES, 'replay', 'take_snapshot.json')

/** An in-process proxy in front of the fixture server; `call` returns the client's raw line. */
async function startProxy({ level = 'moderate', maxTokens } = {}) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const session = new native.FilterSession({ filter: { level, maxTokens }, stats: 'off' })
  const proxy = new Proxy({
    command: process.execPath,
    args: [FIXTURE],
    session,
    stdin,
    stdout,
    exit: () => {},
    filtering: level !== 'off',
    returnsSnapshot: native.returnsSnapshot,
  })
  assert.equal(await proxy.start(), true)
  const lines = []
  const waiters = []
  let partial = []
  stdout.on('data', (chunk) => {
    let start = 0
    let nl
    while ((nl = chunk.indexOf(10, start)) !== -1) {
      partial.push(chunk.subarray(start, nl))
      lines.push(Buffer.concat(partial))
      partial = []
      start = nl + 1
    }
    if (start < chunk.length) partial.push(chunk.subarray(start))
    for (const w of waiters.splice(0)) w()
  })
  const nextLine = async () => {
    while (lines.length === 0) await new Promise((resolve) => waiters.push(resolve))
    return lines.shift()
  }
  let id = 0
  const call = async (name, args) => {
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } })}\n`)
    return nextLine()
  }
  const stop = () => proxy.shutdown(0, null)
  return { call, nextLine, stdin, stop, session }
}

function tempFile(text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-big-lines-'))
  const file = path.join(dir, 'line.json')
  fs.writeFileSync(file, text)
  return file
}

/** A response line JSON.stringify would not reproduce: spacing, key order, escapes, 1.0. */
function oddResponseLine(textChars) {
  const text = '\\u00e9 \\"q\\" \\/ é 😀 '.repeat(Math.ceil(textChars / 16))
  return `{ "result" : {"content":[{"type":"text","text":"${text}"}],"n":1.0,"e":1E2} , "id":__ID__,\t"jsonrpc":"2.0"}`
}

/** The fixture's snapshot result as a response line, the snapshot text padded past `minBytes`. */
function snapshotLine(minBytes) {
  const result = JSON.parse(fs.readFileSync(SNAPSHOT, 'utf8')).result
  const block = result.content.find((b) => b.type === 'text')
  const original = block.text
  // Each copy with uids of its own (a later snapshot's prefix): a snapshot never gives two nodes
  // one uid, and the parser reads a repeated node line as page text.
  for (let copy = 1; Buffer.byteLength(block.text) < minBytes; copy++) {
    block.text += `\n${original.replace(/uid=(\d+)_/g, (_, prefix) => `uid=${Number(prefix) + copy}_`)}`
  }
  return `{"jsonrpc":"2.0","id":__ID__,"result":${JSON.stringify(result)}}`
}

test('a big response no filter touches is forwarded byte for byte', async () => {
  const template = oddResponseLine(300 * 1024)
  assert.ok(Buffer.byteLength(template) > 256 * 1024)
  const file = tempFile(template)
  for (const level of ['moderate', 'off']) {
    // No token budget: with one, a result this big is cut (proxy-tools.test.js).
    const p = await startProxy({ level, maxTokens: 0 })
    try {
      // fixture_big is not a filtered tool; at level off nothing is filtered.
      const line = await p.call(level === 'off' ? 'take_snapshot' : 'fixture_big', { rawLine: file })
      assert.equal(line.toString('utf8'), template.replace('__ID__', '1'), `level ${level}`)
      // A small line afterwards still takes the usual path, in order.
      const small = JSON.parse((await p.call('echo', {})).toString('utf8'))
      assert.equal(small.id, 2)
    } finally {
      await p.stop()
    }
  }
})

test('a big filtered response is filtered exactly as the session filters its text', async () => {
  const template = snapshotLine(300 * 1024)
  const file = tempFile(template)
  const p = await startProxy()
  let big
  try {
    big = (await p.call('take_snapshot', { rawLine: file })).toString('utf8')
  } finally {
    await p.stop()
  }
  // The same line through the string API of a fresh session like the proxy's.
  const fresh = new native.FilterSession({ filter: { level: 'moderate' }, stats: 'off' })
  const expected = fresh.filterToolResponse('take_snapshot', template.replace('__ID__', '1'), JSON.stringify({ rawLine: file }))
  assert.ok(Buffer.byteLength(big) < Buffer.byteLength(template) / 2, 'the snapshot was filtered')
  assert.equal(big, expected)
  const msg = JSON.parse(big)
  assert.equal(msg.id, 1)
  assert.equal(msg.jsonrpc, '2.0')
})

test('errors, unknown ids, string ids and CRLF keep their bytes and their order', async () => {
  const p = await startProxy()
  try {
    const errorLine = tempFile(`{"jsonrpc":"2.0","id":__ID__,"error":{"code":-1,"message":"m ${'x'.repeat(1000)}"}}\r`)
    const line = await p.call('take_snapshot', { rawLine: errorLine })
    assert.equal(line.toString('utf8'), `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m ${'x'.repeat(1000)}"}}`)
    // Not one of the client's requests: forwarded as it came, not filtered.
    const stray = tempFile(snapshotLine(1).replace('__ID__', '"nobody"').replace('"id":', '"id" :'))
    const forwarded = await p.call('take_snapshot', { rawLine: stray })
    assert.equal(forwarded.toString('utf8'), fs.readFileSync(stray, 'utf8'))
    // Notifications, requests and batches still go through the JSON path.
    const note = JSON.parse((await p.call('echo', { x: 1 })).toString('utf8'))
    assert.equal(note.id, 3)
  } finally {
    await p.stop()
  }
})

test('lines the native reader refuses go the JS way: dropped and logged when not JSON', async () => {
  const p = await startProxy()
  try {
    const broken = tempFile(`{"jsonrpc":"2.0","id":__ID__,"result":{"a":}}`)
    const stderr = []
    const write = process.stderr.write
    process.stderr.write = (chunk) => {
      stderr.push(String(chunk))
      return true
    }
    let answer
    try {
      p.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'take_snapshot', arguments: { rawLine: broken } } })}\n`)
      p.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } })}\n`)
      answer = JSON.parse((await p.nextLine()).toString('utf8'))
    } finally {
      process.stderr.write = write
    }
    assert.equal(answer.id, 2)
    assert.match(stderr.join(''), /not a JSON-RPC message .*dropped/)
  } finally {
    await p.stop()
  }
})
