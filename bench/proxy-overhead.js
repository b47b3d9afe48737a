'use strict'

const { requireCorpus } = require('./corpus.js')

// The proxy's added latency on one large snapshot, and where it goes. The same tools/call
// (take_snapshot, answered instantly by the stdio fixture with a corpus result: the 921 KB
// rust-std-vec page by default) N times straight to the fixture and through the bin, in
// alternating order, one request in flight; then, in this process on the same response line,
// the parts of the proxy's work: the native call the proxy makes for a big line
// (FilterSession.routeResponse, split by lastCoreTime() into the Rust core and the
// N-API crossing) and, for scale, JSON.parse of the line (what the client does anyway).
// Besides the round trips (wall clock: on a loaded machine they count other processes' turns),
// the CPU time each process spent per call (/proc/<pid>/task/*/schedstat), which load does not
// inflate. Snapshot deltas are off by default: the fixture answers the same page every time,
// which a delta would reduce to one line; `--snapshot-deltas on` measures that path.
//   node bench/proxy-overhead.js [--calls N] [--file CORPUS_RELATIVE_JSON] [--level L]
//                                [--snapshot-deltas on|off]
// Run the proxy under the V8 profiler with PROXY_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=DIR".

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

const { lineClient } = require('./line-client.js')

const ROOT = path.resolve(__dirname, '..')
const FIXTURE_SERVER = path.join(ROOT, '__test__', 'fixtures', 'fixture-server.js')
const BIN = path.join(ROOT, 'bin', 'cli.js')

function option(name, fallback) {
  const at = process.argv.indexOf(name)
  return at === -1 ? fallback : process.argv[at + 1]
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

function stats(times) {
  const sorted = [...times].sort((a, b) => a - b)
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }
}

/** A stdio JSON-RPC child; call() resolves with the response line of that id. */
function child(command, env) {
  const proc = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } })
  const client = lineClient(proc.stdout, (line) => proc.stdin.write(`${line}\n`))
  let id = 0
  const call = (method, params) => {
    id += 1
    return client.call(JSON.stringify({ jsonrpc: '2.0', id, method, params }), id)
  }
  const close = () => {
    proc.stdin.end()
    return new Promise((resolve) => proc.once('exit', resolve))
  }
  return { call, close, pid: proc.pid }
}

/** CPU ns a process has run so far, all its threads (Linux; NaN elsewhere). */
function cpuNs(pid) {
  try {
    const dir = `/proc/${pid}/task`
    return fs.readdirSync(dir).reduce((sum, t) => sum + Number(fs.readFileSync(`${dir}/${t}/schedstat`, 'utf8').split(' ')[0]), 0)
  } catch {
    return NaN
  }
}

/** CPU ms of this process (user + system). */
function selfCpuMs() {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e3
}

async function main() {
  const calls = Number(option('--calls', '200'))
  const level = option('--level', 'moderate')
  const deltas = option('--snapshot-deltas', 'off')
  const corpus = requireCorpus('bench/proxy-overhead.js')
  const file = path.join(corpus, option('--file', 'chrome-devtools-mcp/rust-std-vec/take_snapshot.json'))
  if (!fs.existsSync(file)) {
    console.log(`(skipped: ${file} not found; set MCP_CORPUS_DIR)`)
    return
  }
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'))
  const tool = doc.tool ?? doc.request.params.name
  const replay = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-overhead-'))
  fs.writeFileSync(path.join(replay, `${tool}.json`), JSON.stringify(doc))
  const env = { FIXTURE_REPLAY_DIR: replay, MCP_SNAPSHOT_FILTER_LEDGER: 'off' }
  const nodeOptions = (process.env.PROXY_NODE_OPTIONS ?? '').split(' ').filter(Boolean)
  const direct = child([process.execPath, FIXTURE_SERVER], env)
  const proxied = child([process.execPath, ...nodeOptions, BIN, `--filter-level=${level}`, `--snapshot-deltas=${deltas}`, '--', process.execPath, FIXTURE_SERVER], env)
  const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } }
  await Promise.all([direct.call('initialize', init), proxied.call('initialize', init)])
  const params = { name: tool, arguments: {} }
  const times = { direct: [], proxied: [] }
  let upstreamLine = ''
  let filteredLine = ''
  const once = async (c, into) => {
    const t0 = process.hrtime.bigint()
    const line = await c.call('tools/call', params)
    into?.push(Number(process.hrtime.bigint() - t0) / 1e6)
    return line
  }
  for (let i = 0; i < 20; i++) {
    upstreamLine = await once(direct, null)
    filteredLine = await once(proxied, null)
  }
  const cpu0 = { direct: cpuNs(direct.pid), proxied: cpuNs(proxied.pid) }
  for (let i = 0; i < calls; i++) {
    // Alternating which goes first, so neither always runs on a warmer machine.
    if (i % 2) {
      await once(direct, times.direct)
      await once(proxied, times.proxied)
    } else {
      await once(proxied, times.proxied)
      await once(direct, times.direct)
    }
  }
  const cpuPerCall = {
    direct: (cpuNs(direct.pid) - cpu0.direct) / 1e6 / calls,
    proxied: (cpuNs(proxied.pid) - cpu0.proxied) / 1e6 / calls,
  }
  await Promise.all([direct.close(), proxied.close()])
  fs.rmSync(replay, { recursive: true, force: true })

  // The parts, in this process, on the line the upstream sent.
  const native = require(path.join(ROOT, 'index.js'))
  native.timeCore(true)
  const { parseArgs } = require(path.join(ROOT, 'bin', 'options.js'))
  const { options } = parseArgs([`--filter-level=${level}`, '--', 'x'])
  const session = new native.FilterSession({
    filter: { level, maxTokens: options['max-tokens'] },
    snapshotDeltas: deltas === 'on',
    snapshotCacheBytes: Math.min(options['snapshot-cache-bytes'], 2 ** 32 - 1),
  })
  const line = Buffer.from(upstreamLine)
  const resultJson = JSON.stringify(JSON.parse(upstreamLine).result)
  const parts = { native: [], nativeCpu: [], free: [], core: [], parse: [], parseCpu: [] }
  const time = (fn, wall, cpu) => {
    const c0 = selfCpuMs()
    const t0 = process.hrtime.bigint()
    fn()
    wall.push(Number(process.hrtime.bigint() - t0) / 1e6)
    cpu?.push(selfCpuMs() - c0)
  }
  for (let i = 0; i < Math.max(20, calls / 4); i++) {
    time(() => session.routeResponse(line, () => ({ method: 'tools/call', tool, argumentsJson: '{}', rewrite: true })), parts.native, parts.nativeCpu)
    // The free function on the same result: lastCoreTime() splits its call into core and crossing.
    time(() => native.filterToolResult(tool, resultJson, { level, maxTokens: options['max-tokens'] }), parts.free)
    parts.core.push((native.lastCoreTime() ?? NaN) / 1e6)
    time(() => JSON.parse(upstreamLine), parts.parse, parts.parseCpu)
  }
  const d = stats(times.direct)
  const p = stats(times.proxied)
  const n = stats(parts.native)
  const nc = stats(parts.nativeCpu)
  const fr = stats(parts.free)
  const c = stats(parts.core)
  const j = stats(parts.parse)
  const jc = stats(parts.parseCpu)
  const f = (x) => x.toFixed(2)
  console.log(`${calls} take_snapshot calls (${path.relative(corpus, file)}: response line ${(Buffer.byteLength(upstreamLine) / 1e3).toFixed(0)} KB, ${(Buffer.byteLength(filteredLine) / 1e3).toFixed(0)} KB through the proxy at ${level}, snapshot deltas ${deltas}), ms:`)
  console.log(`| | wall p50 | wall p99 | CPU per call |`)
  console.log(`|---|---|---|---|`)
  console.log(`| direct: the fixture process | ${f(d.p50)} | ${f(d.p99)} | ${f(cpuPerCall.direct)} |`)
  console.log(`| through the proxy: the proxy process | ${f(p.p50)} | ${f(p.p99)} | ${f(cpuPerCall.proxied)} |`)
  console.log(`| **added by the proxy** | **${f(p.p50 - d.p50)}** | ${f(p.p99 - d.p99)} | |`)
  console.log(`| apart, same line: FilterSession.routeResponse | ${f(n.p50)} | ${f(n.p99)} | ${f(nc.p50)} |`)
  console.log(`| apart: filterToolResult (free function) on the result | ${f(fr.p50)} | ${f(fr.p99)} | |`)
  console.log(`| — its Rust core (lastCoreTime) | ${f(c.p50)} | ${f(c.p99)} | |`)
  console.log(`| — N-API crossing (call − core, p50) | ${f(fr.p50 - c.p50)} | | |`)
  console.log(`| for scale: JSON.parse of the line | ${f(j.p50)} | ${f(j.p99)} | ${f(jc.p50)} |`)
  console.log(`Proxy CPU per call minus routeResponse's CPU is the proxy's JS and I/O: reading the line from the upstream pipe, its routing, writing to stdout (the fixture's own CPU is the upstream's, in both paths).`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
