'use strict'

// The two SDK client transports the HTTP upstream could use, side by side on the same server
// (the HTTP fixture on 127.0.0.1), each used plainly (send / onmessage): SDK 1.x
// StreamableHTTPClientTransport and v2 (@modelcontextprotocol/client). N tools/call of echo,
// small and 1 MB, interleaved so both see the same load; p50/p95 and the v2/1.x ratio.
//   node bench/http-transports.js [--calls N]

const path = require('node:path')
const { performance } = require('node:perf_hooks')

const v1 = require('@modelcontextprotocol/sdk/client/streamableHttp.js')
const v2 = require('@modelcontextprotocol/client')

const { startFixture } = require(path.join(__dirname, '..', '__test__', 'http-servers.js'))

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/** A transport, initialized, with `call(msg)` resolving to the answer. */
async function open(Transport, url) {
  const transport = new Transport(new URL(url))
  const waiting = new Map()
  transport.onmessage = (msg) => {
    waiting.get(msg.id)?.(msg)
    waiting.delete(msg.id)
  }
  transport.onerror = () => {}
  let id = 0
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const msg = { jsonrpc: '2.0', id: ++id, method, params }
      waiting.set(msg.id, resolve)
      transport.send(msg).catch(reject)
    })
  await transport.start()
  const init = await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } })
  transport.setProtocolVersion?.(init.result.protocolVersion)
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  return { transport, call }
}

async function main() {
  const at = process.argv.indexOf('--calls')
  const calls = at === -1 ? 300 : Number(process.argv[at + 1])
  const server = await startFixture()
  try {
    const sides = { '1.x': await open(v1.StreamableHTTPClientTransport, server.url), v2: await open(v2.StreamableHTTPClientTransport, server.url) }
    for (const [label, text] of [['small', 'x'], ['1 MB', 'x'.repeat(1024 * 1024)]]) {
      const times = { '1.x': [], v2: [] }
      const once = async (side, into) => {
        const start = performance.now()
        const answer = await sides[side].call('tools/call', { name: 'echo', arguments: { text } })
        if (answer.result?.content?.[0]?.text.length !== text.length) throw new Error(`${side}: wrong answer`)
        into?.push(performance.now() - start)
      }
      const n = label === 'small' ? calls : Math.max(10, Math.round(calls / 10))
      for (let i = 0; i < 20; i++) await Promise.all([once('1.x'), once('v2')]) // warm-up
      for (let i = 0; i < n; i++) {
        const order = i % 2 ? ['1.x', 'v2'] : ['v2', '1.x']
        for (const side of order) await once(side, times[side])
      }
      const p = (side, q) => quantile([...times[side]].sort((a, b) => a - b), q)
      console.log(`${label} (${n} calls): 1.x p50 ${p('1.x', 0.5).toFixed(2)} ms p95 ${p('1.x', 0.95).toFixed(2)} ms | v2 p50 ${p('v2', 0.5).toFixed(2)} ms p95 ${p('v2', 0.95).toFixed(2)} ms | v2/1.x p50 ${(p('v2', 0.5) / p('1.x', 0.5)).toFixed(2)}`)
    }
    for (const side of Object.values(sides)) await side.transport.close()
  } finally {
    await server.stop()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
