'use strict'

// Fail open: when the native filter fails, the proxy forwards the original response and logs
// one line on stderr. Runs the Proxy class in-process with a session whose filters always fail.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { PassThrough } = require('node:stream')

const { Proxy } = require('../bin/proxy.js')
const { FIXTURES } = require('./helpers.js')

test('a failing filter forwards the original result and logs one line', async () => {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const lines = []
  let buf = ''
  stdout.on('data', (d) => {
    buf += d
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(buf.slice(0, nl)))
      buf = buf.slice(nl + 1)
    }
  })
  // A session whose filters fail: routeResponse says so in `error` for what it would rewrite.
  const failing = {
    routeResponse(line, route) {
      const msg = JSON.parse(line.toString('utf8'))
      if (!('id' in msg) || 'method' in msg) return null
      const idJson = JSON.stringify(msg.id)
      const request = route(idJson)
      if (!request) return { idJson }
      return { idJson, error: request.method === 'tools/call' ? 'GenericFailure: boom inside the filter' : 'InvalidArg: boom inside the compressor' }
    },
    summary: () => '',
  }
  const logged = []
  const origWrite = process.stderr.write.bind(process.stderr)
  process.stderr.write = (chunk) => {
    logged.push(String(chunk))
    return true
  }
  let exitCode = null
  const exited = new Promise((resolve) => {
    const proxy = new Proxy({
      command: process.execPath,
      args: [path.join(FIXTURES, 'fixture-server.js')],
      session: failing,
      stdin,
      stdout,
      exit: (code) => {
        exitCode = code
        resolve()
      },
    })
    proxy.start().then(() => {
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'take_snapshot', arguments: { secret: 'do-not-log' } } })}\n`)
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`)
    })
  })
  const deadline = Date.now() + 5000
  while (lines.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  stdin.end()
  await exited
  process.stderr.write = origWrite
  assert.equal(exitCode, 0)
  const call = lines.find((l) => l.id === 1)
  assert.deepEqual(JSON.parse(call.result.content[0].text), { tool: 'take_snapshot', arguments: { secret: 'do-not-log' } })
  assert.ok(lines.find((l) => l.id === 2).result.tools)
  const failures = logged.filter((l) => /filter failed/.test(l))
  assert.equal(failures.length, 2, logged.join(''))
  assert.match(failures[0], /tools\/call "take_snapshot".*GenericFailure: boom inside the filter/)
  assert.ok(!logged.join('').includes('do-not-log'), 'request arguments must never be logged')
})
