'use strict'

const { requireCorpus } = require('./corpus.js')

// Where the proxy's memory goes over many snapshots: N take_snapshot calls (answered at once by
// the stdio fixture with a corpus result, by default the 548 KB py-stdtypes page) through the
// bin, one in flight. Prints the proxy's peak RSS (VmHWM), its RSS every N/10 calls, and the
// maxima of process.memoryUsage() inside the proxy (heap, external, arrayBuffers, sampled every
// 20 ms by this file preloaded there with --require) with the number of GCs of each kind.
// A sawtooth in arrayBuffers is the Buffers of the lines (the socket's read chunks, the joined
// line, the filtered line): V8 frees them at a scavenge, which it forces once young
// ArrayBuffers hold 2 × its default maximum semi-space (32 MB on 64-bit Node 20).
//   node bench/proxy-memory.js [--calls N] [--file CORPUS_RELATIVE_JSON] [-- NODE_FLAGS_FOR_THE_PROXY…]

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

if (process.env.PROXY_MEMORY_OUT) {
  // Preloaded into the proxy: sample, and write the maxima when it exits.
  const { PerformanceObserver } = require('node:perf_hooks')
  const max = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }
  const gcs = {}
  const KINDS = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak callbacks' }
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = KINDS[e.detail?.kind] ?? String(e.detail?.kind)
      gcs[kind] = (gcs[kind] ?? 0) + 1
    }
  }).observe({ entryTypes: ['gc'] })
  setInterval(() => {
    const m = process.memoryUsage()
    for (const k of Object.keys(max)) max[k] = Math.max(max[k], m[k])
  }, 20).unref()
  process.on('exit', () => {
    const mb = Object.fromEntries(Object.entries(max).map(([k, v]) => [k, Number((v / 2 ** 20).toFixed(1))]))
    fs.writeFileSync(process.env.PROXY_MEMORY_OUT, JSON.stringify({ maxMB: mb, gcs }))
  })
} else {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}

function option(argv, name, fallback) {
  const at = argv.indexOf(name)
  return at === -1 ? fallback : argv[at + 1]
}

function status(pid, key) {
  return Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024
}

async function main() {
  const { spawn } = require('node:child_process')
  const { lineClient } = require('./line-client.js')
  const ROOT = path.resolve(__dirname, '..')
  const dash = process.argv.indexOf('--')
  const argv = dash === -1 ? process.argv.slice(2) : process.argv.slice(2, dash)
  const nodeFlags = dash === -1 ? [] : process.argv.slice(dash + 1)
  const calls = Number(option(argv, '--calls', '1000'))
  const corpus = requireCorpus('bench/proxy-memory.js')
  const file = path.join(corpus, option(argv, '--file', 'chrome-devtools-mcp/py-stdtypes/take_snapshot.json'))
  if (!fs.existsSync(file)) {
    console.log(`SKIPPED: ${file} is absent (set MCP_CORPUS_DIR).`)
    return
  }
  const replay = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-memory-'))
  fs.copyFileSync(file, path.join(replay, 'take_snapshot.json'))
  const out = path.join(replay, 'memory.json')
  // The proxy preloads this file, which samples when PROXY_MEMORY_OUT is set (the fixture the
  // proxy starts sees the variable too, but never loads this file).
  const env = { ...process.env, FIXTURE_REPLAY_DIR: replay, MCP_SNAPSHOT_FILTER_LEDGER: 'off', PROXY_MEMORY_OUT: out }
  const child = spawn(process.execPath, [...nodeFlags, '--require', __filename, path.join(ROOT, 'bin', 'cli.js'), '--', process.execPath, path.join(ROOT, '__test__', 'fixtures', 'fixture-server.js')], {
    stdio: ['pipe', 'pipe', 'ignore'],
    env,
  })
  const client = lineClient(child.stdout, (line) => child.stdin.write(`${line}\n`))
  let id = 0
  const call = (method, params) => {
    id += 1
    return client.call(JSON.stringify({ jsonrpc: '2.0', id, method, params }), id)
  }
  await call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } })
  const rss = []
  for (let i = 0; i < calls; i++) {
    await call('tools/call', { name: 'take_snapshot', arguments: { fixture: 'take_snapshot' } })
    if (i % Math.max(1, Math.floor(calls / 10)) === 0) rss.push(status(child.pid, 'VmRSS').toFixed(0))
  }
  const hwm = status(child.pid, 'VmHWM')
  child.stdin.end()
  await new Promise((resolve) => child.once('exit', resolve))
  const inside = JSON.parse(fs.readFileSync(out, 'utf8'))
  fs.rmSync(replay, { recursive: true, force: true })
  console.log(`${calls} snapshots of ${path.relative(corpus, file)} (${(fs.statSync(file).size / 1e3).toFixed(0)} KB) through the proxy${nodeFlags.length ? ` (node ${nodeFlags.join(' ')})` : ''}:`)
  console.log(`peak RSS (VmHWM) ${hwm.toFixed(1)} MB; RSS every ${Math.max(1, Math.floor(calls / 10))} calls: ${rss.join(' → ')} MB`)
  console.log(`inside the proxy, maxima (MB): ${Object.entries(inside.maxMB).map(([k, v]) => `${k} ${v}`).join(', ')}; GCs: ${Object.entries(inside.gcs).map(([k, v]) => `${v} ${k}`).join(', ')}`)
}
