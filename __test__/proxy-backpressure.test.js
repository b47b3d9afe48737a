'use strict'

// Backpressure: a client that stops reading while the upstream keeps answering must not grow
// the proxy. When the client's pipe is full the proxy stops reading the upstream until it
// drains, so the unread answers wait in the upstream's pipe (and the upstream blocks), not in
// the proxy's memory. Then everything arrives, intact and in order.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')

const { FIXTURES, proxyCommand } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const ANSWERS = 40
const BYTES = 5_000_000

function rssMb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024
  } catch {
    return 0
  }
}

test('a client that reads nothing for a while, then everything: proxy memory stays bounded', { skip: process.platform !== 'linux' && 'reads /proc/<pid>/status', timeout: 60000 }, async (t) => {
  const [cmd, ...args] = proxyCommand([process.execPath, FIXTURE], ['--filter-level=moderate'])
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => {
    stderr += d
  })
  const baseline = await new Promise((resolve) => setTimeout(() => resolve(rssMb(child.pid)), 300))
  // 40 answers of 5 MB each asked for at once; stdout is not read at all for now.
  for (let id = 1; id <= ANSWERS; id++) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'fixture/big', params: { bytes: BYTES } })}\n`)
  let peak = 0
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(child.pid))
  }, 50)
  try {
    await new Promise((resolve) => setTimeout(resolve, 3000))
    const peakWhileBlocked = peak
    // Now read everything.
    const lines = []
    let partial = []
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        let start = 0
        let nl
        while ((nl = chunk.indexOf(10, start)) !== -1) {
          partial.push(chunk.subarray(start, nl))
          lines.push(Buffer.concat(partial).toString('utf8'))
          partial = []
          start = nl + 1
        }
        if (start < chunk.length) partial.push(chunk.subarray(start))
        if (lines.length === ANSWERS) resolve()
      })
      child.once('exit', () => reject(new Error(`proxy exited early:\n${stderr}`)))
    })
    const ids = lines.map((line) => {
      const msg = JSON.parse(line)
      assert.equal(msg.result.content[0].text.length, BYTES)
      return msg.id
    })
    assert.deepEqual(ids, Array.from({ length: ANSWERS }, (_, i) => i + 1))
    t.diagnostic(`proxy RSS: ${baseline.toFixed(0)} MB at start, peak ${peak.toFixed(0)} MB (${peakWhileBlocked.toFixed(0)} MB while the client read nothing) over ${ANSWERS} x ${BYTES / 1e6} MB`)
    // 200 MB went through; without backpressure the proxy held most of it (~250 MB RSS).
    assert.ok(peak - baseline < 80, `proxy RSS grew from ${baseline.toFixed(0)} to ${peak.toFixed(0)} MB (${peakWhileBlocked.toFixed(0)} MB while the client was not reading)`)
  } finally {
    clearInterval(sampler)
    child.stdin.end()
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)))
  }
})
