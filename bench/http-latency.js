'use strict'

// Added latency of the proxy in front of a remote (Streamable HTTP) upstream: the same N small
// tools/call (echo) to the HTTP fixture on 127.0.0.1, by an SDK client straight over HTTP and by
// one on stdio to the bin with --upstream-url, interleaved in rounds so both see the same load.
//   node bench/http-latency.js [--calls N]

const path = require('node:path')
const { performance } = require('node:perf_hooks')

const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js')

const { connect, BIN } = require(path.join(__dirname, '..', '__test__', 'helpers.js'))
const { startFixture } = require(path.join(__dirname, '..', '__test__', 'http-servers.js'))

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

async function main() {
  const at = process.argv.indexOf('--calls')
  const calls = at === -1 ? 1000 : Number(process.argv[at + 1])
  const server = await startFixture()
  const direct = new Client({ name: 'bench-direct', version: '1' })
  await direct.connect(new StreamableHTTPClientTransport(new URL(server.url)))
  const proxied = await connect([process.execPath, BIN, '--upstream-url', server.url])
  const times = { direct: [], proxied: [] }
  const once = async (client, into) => {
    const start = performance.now()
    await client.callTool({ name: 'echo', arguments: { text: 'x' } })
    into.push(performance.now() - start)
  }
  for (let i = 0; i < 50; i++) await Promise.all([once(direct, []), once(proxied.client, [])]) // warm-up
  for (let i = 0; i < calls; i++) {
    // Alternating which goes first, so neither always runs on a warmer machine.
    if (i % 2) {
      await once(direct, times.direct)
      await once(proxied.client, times.proxied)
    } else {
      await once(proxied.client, times.proxied)
      await once(direct, times.direct)
    }
  }
  await Promise.allSettled([direct.close(), proxied.client.close()])
  await server.stop()
  const row = (name) => {
    const sorted = [...times[name]].sort((a, b) => a - b)
    return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }
  }
  const d = row('direct')
  const p = row('proxied')
  console.log(`${calls} echo calls over Streamable HTTP (127.0.0.1), ms:`)
  console.log(`  direct   p50 ${d.p50.toFixed(2)}  p99 ${d.p99.toFixed(2)}`)
  console.log(`  proxied  p50 ${p.p50.toFixed(2)}  p99 ${p.p99.toFixed(2)}`)
  console.log(`  added    p50 +${(p.p50 - d.p50).toFixed(2)}  p99 +${(p.p99 - d.p99).toFixed(2)}  (proxied/direct p50 ${(p.p50 / d.p50).toFixed(2)}x)`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
