#!/usr/bin/env node
'use strict'

// `npm run bench`: speed against the limits and savings on the corpus. A benchmark, not a test:
// it prints figures (one markdown table per part) and judges them against the targets of the
// issue, but never fails on them. Nothing here is a hard-coded figure: every number comes from
// running the native filters (release build) on the corpus.
//
//   npm run bench [-- PART ...] [--calls N] [--no-build] [--corpus DIR] [--budget-ms N] [--snapshot-bytes N]
//   npm run bench -- --help      (the parts, one line each: PARTS below)
//
// Each figure is measured by one part: proxy latency by `proxy` only, the per-tool reduction by
// `reduction` only. The corpus is found by bench/corpus.js (--corpus DIR, $MCP_CORPUS_DIR,
// ../shared/corpus beside the clone); without it the parts that can run on the bundled
// samples/ do, and the others say they need it and how to get it.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { PassThrough } = require('node:stream')

const { lineClient } = require('./line-client.js')
const { findCorpus, HOW_TO_GET } = require('./corpus.js')

const ROOT = path.resolve(__dirname, '..')
const FIXTURE_SERVER = path.join(ROOT, '__test__', 'fixtures', 'fixture-server.js')
const BIN = path.join(ROOT, 'bin', 'cli.js')
const LEVELS = ['light', 'moderate', 'aggressive']
const SNAPSHOT_HEADER = '## Latest page snapshot\n'

// The per-filter level tables (part `extra`), each run with MCP_CORPUS_DIR set and its stdout
// printed under its own heading. Not bench/results-levels.js (the per-tool reduction: part
// `reduction`) nor bench/proxy-overhead.js (the proxy's latency: part `proxy`): each figure once.
const EXTRA_PARTS = ['snapshot-levels.js', 'budget.js', 'playwright-levels.js', 'describe-levels.js']

/** Every part, in the order a full run takes them, with what it measures (`--help`). */
const PARTS = [
  ['core', 'Rust core throughput per function and level against a serde_json floor (crates/core/examples/bench_core.rs)'],
  ['scaling', 'time per MB from 1 to 20 MB (crates/core/examples/bench_scaling.rs; needs the corpus)'],
  ['boundary', 'the same calls through index.js: core and N-API crossing time, and which results the filter parses'],
  ['proxy', 'tools/call latency through the proxy vs directly (a small result and a snapshot), and the proxy RSS'],
  ['reduction', 'bytes and o200k tokens saved per tool and level (the README table)'],
  ['sessions', 'recorded sessions replayed through the bin at each level, snapshot deltas off and on (bench/sessions.js)'],
  ['reach', 'whether each uid a recorded action names was in what the agent held, per level (bench/reach.js)'],
  ['seed', "side by side with the seed's TypeScript filters in ../shared/seed-filter (bench/seed.js; needs the corpus)"],
  ['extra', `the filters' own level tables: ${EXTRA_PARTS.map((f) => `bench/${f}`).join(', ')} (need the corpus)`],
]
const PART_NAMES = PARTS.map(([name]) => name)
/** Parts that measure nothing without the corpus (the others run on samples/). */
const CORPUS_ONLY = new Set(['scaling', 'seed', 'extra'])

const HELP = `npm run bench [-- PART ...] [options]: benchmarks, never a test (docs/benchmarks.md)

Parts (all of them when none is named):
${PARTS.map(([name, what]) => `  ${name.padEnd(10)} ${what}`).join('\n')}

Options:
  --calls N            calls per case in part proxy (default 1000)
  --no-build           use the addon as built (default: build the release addon first)
  --corpus DIR         the corpus (default: $MCP_CORPUS_DIR, else ../shared/corpus beside the clone)
  --budget-ms N        time per file and level in parts core and seed (default 30)
  --snapshot-bytes N   part proxy times the corpus snapshot nearest N bytes (default 500000)
`

// ---- options and corpus ----

function parseOptions(argv) {
  const opts = { parts: [], calls: 1000, build: true, corpus: null, budgetMs: 30, snapshotBytes: 500_000, help: false }
  const usage = (message) => {
    process.stderr.write(`bench: ${message} (npm run bench -- --help lists the parts and options)\n`)
    process.exit(2)
  }
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s)
    const value = () => (inline !== undefined ? inline : argv[++i])
    if (flag === '--help' || flag === '-h') opts.help = true
    else if (flag === '--parts') opts.parts.push(...value().split(','))
    else if (flag === '--calls') opts.calls = Number(value())
    else if (flag === '--no-build') opts.build = false
    else if (flag === '--corpus') opts.corpus = value()
    else if (flag === '--budget-ms') opts.budgetMs = Number(value())
    else if (flag === '--snapshot-bytes') opts.snapshotBytes = Number(value())
    else if (!flag.startsWith('-')) opts.parts.push(flag)
    else usage(`unknown option ${argv[i]}`)
  }
  const unknown = opts.parts.filter((p) => !PART_NAMES.includes(p))
  if (unknown.length > 0) usage(`unknown part ${unknown.join(', ')}: the parts are ${PART_NAMES.join(', ')}`)
  if (opts.parts.length === 0) opts.parts = [...PART_NAMES]
  return opts
}

/** The corpus (bench/corpus.js), else the bundled samples/ for the parts that can use them. */
function locateCorpus(given) {
  const dir = findCorpus(given)
  return dir ? { dir, samples: false } : { dir: path.join(ROOT, 'samples'), samples: true }
}

/** Every `{request, result}` corpus file: { file (relative), doc }. */
function corpusDocs(dir) {
  const out = []
  const stack = [dir]
  while (stack.length > 0) {
    const d = stack.pop()
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name)
      if (e.isDirectory()) stack.push(full)
      else if (e.name.endsWith('.json')) {
        try {
          const doc = JSON.parse(fs.readFileSync(full, 'utf8'))
          if (doc?.request?.method && doc.result && typeof doc.result === 'object') out.push({ file: path.relative(dir, full), path: full, doc })
        } catch {
          // not a corpus result (site assets, server captures)
        }
      }
    }
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : 1))
}

/** The snapshot section body, cut exactly as crates/core/examples/bench_core.rs cuts it. */
function snapshotBody(result) {
  for (const block of result.content ?? []) {
    if (typeof block?.text !== 'string') continue
    const start = block.text.indexOf(SNAPSHOT_HEADER)
    if (start === -1) continue
    const rest = block.text.slice(start + SNAPSHOT_HEADER.length)
    const end = rest.indexOf('\n## ')
    return end === -1 ? rest : rest.slice(0, end + 1)
  }
  return null
}

// ---- small helpers ----

/** Plain chrome-devtools-mcp results first (the proxy's main upstream), app-noisy first among them. */
function preferred(docs) {
  const rank = (d) => (d.file.startsWith(`chrome-devtools-mcp${path.sep}app-noisy`) ? 0 : d.file.startsWith(`chrome-devtools-mcp${path.sep}`) ? 1 : 2)
  return [...docs].sort((a, b) => rank(a) - rank(b))
}

const median = (xs) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}
const mean = (xs) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length)
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '–')
const pct = (before, after) => (before === 0 ? 0 : ((before - after) / before) * 100)

function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

function heading(title) {
  process.stdout.write(`\n## ${title}\n\n`)
}

// ---- part (a): core throughput (Rust) ----

function runCore(ctx) {
  heading('Core throughput (Rust, release, one core)')
  const r = spawnSync('cargo', ['run', '--release', '--quiet', '--example', 'bench_core', '--', ctx.corpus.dir, '--json', '--budget-ms', String(ctx.opts.budgetMs)], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 256 * 1024 * 1024,
  })
  if (r.status !== 0) {
    process.stdout.write(`(bench_core failed with exit code ${r.status})\n`)
    return
  }
  const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
  const out = []
  for (const fn of ['filter_snapshot', 'filter_tool_result', 'compress_list_result']) {
    for (const level of LEVELS) {
      const group = rows.filter((row) => row.function === fn && row.level === level)
      if (group.length === 0) continue
      const bytes = group.reduce((a, row) => a + row.bytes, 0)
      const ns = group.reduce((a, row) => a + row.median_ns, 0)
      const floorNs = group.reduce((a, row) => a + row.floor_median_ns, 0)
      const rates = group.filter((row) => row.bytes >= 10_000).map((row) => row.bytes / 1e6 / (row.median_ns / 1e9))
      const largest = group.reduce((a, row) => (row.bytes > a.bytes ? row : a))
      // The issue's target is throughput on the corpus (overall); the slowest file is shown beside it.
      const target = fn === 'filter_snapshot' ? `≥ 200 overall: ${bytes / 1e6 / (ns / 1e9) >= 200 ? 'met' : 'NOT met'}` : ''
      out.push([fn, level, group.length, fmt(bytes / 1e6), fmt(ns / 1e6), fmt(bytes / 1e6 / (ns / 1e9), 0), fmt(bytes / 1e6 / (floorNs / 1e9), 0), fmt(floorNs / ns, 3), fmt(median(rates), 0), fmt(Math.min(...rates), 0), `${fmt(largest.bytes / 1e6 / (largest.median_ns / 1e9), 0)} (${(largest.bytes / 1e3).toFixed(0)} KB)`, target])
    }
  }
  process.stdout.write(`${table(['function', 'level', 'files', 'MB', 'Σ median ms', 'MB/s overall', 'floor MB/s (serde_json decoding the same bytes)', '× floor', 'MB/s median file ≥10 KB', 'MB/s slowest file ≥10 KB', 'MB/s largest file', 'target MB/s'], out)}\n`)
  process.stdout.write(`\nMedian of ≥ 5 runs per file (${ctx.opts.budgetMs} ms budget per file and level), each run next to a floor on the same bytes: serde_json decoding the input (a snapshot body as a JSON string, a result or list as JSON); MB/s move with the machine and its load, × floor is what compares. \`cargo run --release --example bench_core -- ${path.relative(ROOT, ctx.corpus.dir) || '.'}\` prints the same summary.\n`)
}

// ---- part (a2): scaling with input size (Rust) ----

function runScaling(ctx) {
  heading('Scaling: time per MB from 1 to 20 MB (Rust, release, thread CPU time)')
  const r = spawnSync('cargo', ['run', '--release', '--quiet', '--example', 'bench_scaling', '--', ctx.corpus.dir, '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  })
  if (r.status !== 0) {
    process.stdout.write(`(bench_scaling failed with exit code ${r.status})\n`)
    return
  }
  const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
  const sizes = [...new Set(rows.map((row) => row.mb))].sort((a, b) => a - b)
  const groups = new Map()
  for (const row of rows) {
    const key = `${row.level} ${row.notation} ${row.shape} ${row.path}`
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key).push(row)
  }
  const out = []
  for (const group of groups.values()) {
    const first = group[0]
    const bySize = sizes.map((mb) => group.find((row) => row.mb === mb))
    const worst = Math.max(...bySize.map((row) => row?.ratio_to_smallest ?? NaN))
    out.push([first.level, first.notation, first.shape, first.path === 'text' ? 'filterSnapshot' : 'filterToolResult', ...bySize.map((row) => (row ? `${fmt(row.ms_per_mb, 1)} (${fmt(row.ratio_to_smallest, 2)}×)` : '')), `${fmt(worst, 2)}× ${worst <= 1.5 ? 'met' : 'NOT met'}`])
  }
  process.stdout.write(`${table(['level', 'notation', 'shape', 'path', ...sizes.map((mb) => `${mb} MB: ms/MB (× ${sizes[0]} MB)`), `largest per-MB ratio (target ≤ 1.5×)`], out)}\n`)
  process.stdout.write(`\nInputs: about 1 MB of corpus pages per notation, repeated to each size with the ids renumbered in document order; \`flat\`: the pages as top-level roots, \`narrow\`: all under one root. Median of 3 runs per size, sizes alternating; thread CPU time (the wall clock counts other processes' turns on a loaded machine). \`cargo run --release --example bench_scaling -- ${path.relative(ROOT, ctx.corpus.dir) || '.'}\` prints the same table.\n`)
}

// ---- part (b): the N-API boundary ----

/** Median ns that two back-to-back `process.hrtime.bigint()` reads add to a timed span. */
function clockOverhead() {
  const samples = []
  for (let i = 0; i < 2000; i++) {
    const t0 = process.hrtime.bigint()
    samples.push(Number(process.hrtime.bigint() - t0))
  }
  return median(samples)
}

/**
 * One call through index.js against its floor, in alternating rounds (at least `minRounds`,
 * until `budgetMs` is spent): A, the call, with its core time read right after it
 * (`lastCoreTime`: measured by the export itself on this very call, so crossing = total − core
 * pairs up and core noise cancels out); C, the floor: V8's own UTF-8 conversion of what crosses,
 * `Buffer.from(input)` in and the output's bytes decoded to a string out. Medians, in ns.
 */
function measureCrossing(native, c, budgetMs, clockNs, minRounds) {
  const output = c.text(c.call()) // warm-up; gives the output for the floor
  const outBytes = typeof output === 'string' ? Buffer.from(output, 'utf8') : null
  const total = []
  const core = []
  const crossing = []
  const enc = []
  const dec = []
  const start = process.hrtime.bigint()
  const budget = BigInt(Math.round(budgetMs * 1e6))
  while (total.length < minRounds || (process.hrtime.bigint() - start < budget && total.length < 5000)) {
    let t0 = process.hrtime.bigint()
    c.call()
    let t1 = process.hrtime.bigint()
    const ns = Number(t1 - t0) - clockNs
    const coreNs = native.lastCoreTime()
    total.push(ns)
    core.push(coreNs)
    crossing.push(ns - coreNs)
    t0 = process.hrtime.bigint()
    Buffer.from(c.input, 'utf8')
    t1 = process.hrtime.bigint()
    enc.push(Number(t1 - t0) - clockNs)
    if (outBytes) {
      t0 = process.hrtime.bigint()
      outBytes.toString('utf8')
      t1 = process.hrtime.bigint()
      dec.push(Number(t1 - t0) - clockNs)
    }
  }
  return { total: median(total), core: median(core), crossing: median(crossing), floor: median(enc) + (outBytes ? median(dec) : 0), rounds: total.length }
}

/** The calls part "boundary" times: every corpus input of the three payload exports. */
function boundaryCases(native, docs, options) {
  const cases = []
  for (const { doc } of docs) {
    const method = doc.request.method
    if (method === 'tools/call') {
      const tool = doc.tool ?? doc.request.params?.name
      const body = snapshotBody(doc.result)
      if (body !== null) cases.push({ fn: 'filterSnapshot', input: body, call: () => native.filterSnapshot(body, options), text: (out) => out.text })
      const json = JSON.stringify(doc.result)
      cases.push({ fn: 'filterToolResult', input: json, call: () => native.filterToolResult(tool, json, options), text: (out) => out })
    } else if (['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'].includes(method)) {
      const json = JSON.stringify(doc.result)
      cases.push({ fn: 'compressListResult', input: json, call: () => native.compressListResult(method, json, options), text: (out) => out })
    }
  }
  return cases
}

function runBoundary(ctx) {
  heading('Boundary: the same calls through index.js (level moderate)')
  const native = require(path.join(ROOT, 'index.js'))
  if (typeof native.timeCore !== 'function') {
    process.stdout.write('(the built addon has no timeCore: rebuild it)\n')
    return
  }
  native.timeCore(true)
  const options = { level: 'moderate' }
  const clockNs = clockOverhead()
  const budget = ctx.opts.budgetMs
  const sizeBucket = (bytes) => (bytes < 10_000 ? '< 10 KB' : bytes < 100_000 ? '10–100 KB' : '≥ 100 KB')
  // The fixed part of a call: the same call on an (almost) empty input, with the same options.
  const empty = {
    filterSnapshot: { fn: 'filterSnapshot', input: '', call: () => native.filterSnapshot('', options), text: (out) => out.text },
    filterToolResult: { fn: 'filterToolResult', input: '{"content":[]}', call: () => native.filterToolResult('take_snapshot', '{"content":[]}', options), text: (out) => out },
    compressListResult: { fn: 'compressListResult', input: '{"tools":[]}', call: () => native.compressListResult('tools/list', '{"tools":[]}', options), text: (out) => out },
  }
  const fixed = {}
  for (const [fn, c] of Object.entries(empty)) fixed[fn] = measureCrossing(native, c, 200, clockNs, 1000).crossing
  const groups = new Map()
  const add = (key, fn, m, bytes) => {
    const g = groups.get(key) ?? { fn, n: 0, core: 0, total: 0, crossing: 0, floor: 0, bytes: 0 }
    g.n++
    g.core += m.core
    g.total += m.total
    g.crossing += m.crossing
    g.floor += m.floor
    g.bytes += bytes
    groups.set(key, g)
  }
  for (const c of boundaryCases(native, ctx.docs, options)) {
    const bytes = Buffer.byteLength(c.input)
    const m = measureCrossing(native, c, budget, clockNs, 40)
    add(`${c.fn} ${sizeBucket(bytes)}`, c.fn, m, bytes)
    add(`${c.fn} all`, c.fn, m, bytes)
  }
  const order = ['< 10 KB', '10–100 KB', '≥ 100 KB', 'all']
  const rank = (key) => order.findIndex((o) => key.endsWith(o))
  const rows = [...groups.entries()]
    .sort(([a, ga], [b, gb]) => (ga.fn === gb.fn ? rank(a) - rank(b) : ga.fn < gb.fn ? -1 : 1))
    .map(([key, g]) => {
      const ratio = g.crossing / g.floor
      const fixedPart = g.n * fixed[g.fn]
      const label = key.endsWith('all') ? `**${key}**` : key
      return [label, g.n, fmt(g.bytes / 1e6), fmt(g.core / 1e3, 0), fmt(g.total / 1e3, 0), fmt(g.crossing / 1e3, 0), fmt(fixedPart / 1e3, 0), fmt(g.floor / 1e3, 0), fmt(ratio), fmt((g.crossing - fixedPart) / g.floor), ratio <= 1.5 ? 'met' : 'NOT met']
    })
  process.stdout.write(`${table(['call', 'files', 'MB in', 'core µs (Rust)', 'through index.js µs', 'crossing µs', 'of which fixed per-call µs', 'floor µs (V8 UTF-8)', 'crossing / floor', '(crossing − fixed) / floor', 'target ≤ 1.5×'], rows)}\n`)
  const fixedText = Object.entries(fixed)
    .map(([fn, ns]) => `${fn} ${fmt(ns / 1e3)} µs`)
    .join(', ')
  process.stdout.write(
    `\nSums of per-file medians (≥ 40 alternating rounds per file, ${budget} ms budget per file). Core: the export's own core time on the same call (\`lastCoreTime()\`); crossing: through index.js − core, paired per call; floor: \`Buffer.from(input)\` + decoding the output's bytes to a string. Fixed per-call crossing (the same call on an empty input with the same options object): ${fixedText}; the "fixed" column is files × that.\n`,
  )
}

/** Which tools/call results the native filter parses: drives bin/proxy.js in-process with a counting session. */
async function runCrossingCheck(ctx) {
  heading('What the filter parses: results the proxy routes through the native session')
  const native = require(path.join(ROOT, 'index.js'))
  const { Proxy } = require(path.join(ROOT, 'bin', 'proxy.js'))
  const pick = ['take_screenshot', 'navigate_page', 'take_snapshot', 'list_console_messages', 'list_network_requests', 'evaluate_script']
  const replay = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cross-'))
  const chosen = []
  for (const tool of pick) {
    const found = preferred(ctx.docs).find((d) => d.doc.request.method === 'tools/call' && (d.doc.tool ?? d.doc.request.params?.name) === tool)
    if (!found) continue
    fs.writeFileSync(path.join(replay, `${tool}.json`), JSON.stringify(found.doc))
    chosen.push({ tool, file: found.file, args: found.doc.request.params?.arguments ?? {} })
  }
  const real = new native.FilterSession({ filter: { level: 'moderate' } })
  // Every response line crosses once, as a Buffer (routeResponse); what counts is which the
  // filter then parses: the session's per-tool counts say, the lines give their sizes.
  const lines = new Map()
  const session = {
    routeResponse(line, route) {
      return real.routeResponse(line, (idJson) => {
        const r = route(idJson)
        if (r?.tool) lines.set(r.tool, line)
        return r
      })
    },
    summary: () => real.summary(),
  }
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  // Built as bin/cli.js builds it.
  const proxy = new Proxy({ command: process.execPath, args: [FIXTURE_SERVER], session, stdin, stdout, exit: () => {}, returnsSnapshot: native.returnsSnapshot })
  const saved = process.env.FIXTURE_REPLAY_DIR
  process.env.FIXTURE_REPLAY_DIR = replay
  await proxy.start()
  if (saved === undefined) delete process.env.FIXTURE_REPLAY_DIR
  else process.env.FIXTURE_REPLAY_DIR = saved
  const client = lineClient(stdout, (line) => stdin.write(`${line}\n`))
  let id = 0
  for (const c of chosen) await client.call(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: c.tool, arguments: c.args } }), id)
  await proxy.shutdown(0, null)
  fs.rmSync(replay, { recursive: true, force: true })
  const crossed = new Map()
  for (const t of real.toolTotals()) {
    const line = lines.get(t.tool)
    if (!line || t.results === 0) continue
    const result = JSON.parse(line.toString('utf8')).result ?? {}
    let imageBytes = 0
    for (const block of result.content ?? []) if (block.type === 'image') imageBytes += Buffer.byteLength(JSON.stringify(block))
    crossed.set(t.tool, { bytes: line.length, imageBytes })
  }
  const rows = chosen.map((c) => {
    const x = crossed.get(c.tool)
    return [c.tool, c.file, x ? 'yes' : 'no', x ? x.bytes.toLocaleString('en-US') : '0', x ? x.imageBytes.toLocaleString('en-US') : '0']
  })
  process.stdout.write(`${table(['tool', 'corpus file', 'parsed by the filter', 'bytes parsed', 'of which image blocks'], rows)}\n`)
  if (!chosen.some((c) => c.tool === 'take_screenshot' || c.tool === 'navigate_page')) {
    process.stdout.write('\nCannot judge "nothing is parsed that need not be": this corpus has no take_screenshot or navigate_page result.\n')
    return
  }
  const imageBytes = [...crossed.values()].reduce((a, c) => a + c.imageBytes, 0)
  const unfiltered = ['navigate_page', 'take_screenshot'].filter((t) => crossed.has(t))
  process.stdout.write(`\nTarget: nothing is parsed that need not be. Image bytes parsed: ${imageBytes.toLocaleString('en-US')}${imageBytes > 0 ? ' (NOT met)' : ' (met)'}; tools without text to filter that were parsed: ${unfiltered.length > 0 ? `${unfiltered.join(', ')} (NOT met)` : 'none (met)'}.\n`)
}

// ---- part (c): proxy latency and memory ----

function procStatus(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN)
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 }
  } catch {
    return { rss: NaN, hwm: NaN }
  }
}

async function latencyRun(command, env, cases, calls, rssPid) {
  const child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, ...env } })
  const client = lineClient(child.stdout, (line) => child.stdin.write(`${line}\n`))
  let id = 0
  const req = (name) => JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: { fixture: name } } })
  await client.call(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }), id)
  const results = {}
  const memory = []
  const pid = rssPid ? child.pid : null
  for (const name of cases) {
    for (let i = 0; i < 50; i++) await client.call(req(name), id) // warm-up, not counted
    const times = []
    for (let i = 0; i < calls; i++) {
      const t0 = process.hrtime.bigint()
      await client.call(req(name), id)
      times.push(Number(process.hrtime.bigint() - t0) / 1e6)
      if (pid && i % Math.max(1, Math.floor(calls / 10)) === 0) memory.push({ name, i, ...procStatus(pid) })
    }
    times.sort((a, b) => a - b)
    results[name] = { p50: quantile(times, 0.5), p99: quantile(times, 0.99), n: times.length }
  }
  const final = pid ? procStatus(pid) : null
  child.stdin.end()
  await new Promise((resolve) => child.once('exit', resolve))
  return { results, memory, final }
}

async function runProxy(ctx) {
  heading(`Proxy latency: tools/call through the proxy vs directly (fixture upstream, ${ctx.opts.calls} calls each)`)
  const snapshots = ctx.docs.filter((d) => d.doc.request.method === 'tools/call' && (d.doc.tool ?? d.doc.request.params?.name) === 'take_snapshot' && snapshotBody(d.doc.result) !== null)
  const target = ctx.opts.snapshotBytes
  const big = snapshots.reduce((best, d) => (Math.abs(Buffer.byteLength(snapshotBody(d.doc.result)) - target) < Math.abs(Buffer.byteLength(snapshotBody(best.doc.result)) - target) ? d : best), snapshots[0])
  const small = preferred(ctx.docs.filter((d) => path.basename(d.file).endsWith('list_console_messages.json')))[0] ?? ctx.docs.find((d) => d.doc.request.method === 'tools/call')
  if (!big || !small) {
    process.stdout.write('(no snapshot in the corpus)\n')
    return
  }
  const replay = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-latency-'))
  // Replay under the real tool names, so the proxy treats them as it treats the real tools.
  const smallTool = small.doc.tool ?? small.doc.request.params.name
  const bigTool = big.doc.tool ?? big.doc.request.params.name
  fs.writeFileSync(path.join(replay, `${smallTool}.json`), JSON.stringify(small.doc))
  fs.writeFileSync(path.join(replay, `${bigTool}.json`), JSON.stringify(big.doc))
  // A bench session is not the user's: it stays out of their savings ledger (`stats`).
  const env = { FIXTURE_REPLAY_DIR: replay, MCP_SNAPSHOT_FILTER_LEDGER: 'off' }
  const cases = [smallTool, bigTool]
  const direct = await latencyRun([process.execPath, FIXTURE_SERVER], env, cases, ctx.opts.calls, false)
  const proxied = await latencyRun([process.execPath, BIN, '--', process.execPath, FIXTURE_SERVER], env, cases, ctx.opts.calls, true)
  fs.rmSync(replay, { recursive: true, force: true })
  const label = { [smallTool]: `small: ${small.file} (${(Buffer.byteLength(JSON.stringify(small.doc.result)) / 1e3).toFixed(1)} KB)`, [bigTool]: `snapshot: ${big.file} (${(Buffer.byteLength(JSON.stringify(big.doc.result)) / 1e3).toFixed(0)} KB)` }
  const rows = cases.map((name) => {
    const d = direct.results[name]
    const p = proxied.results[name]
    const added50 = p.p50 - d.p50
    const added99 = p.p99 - d.p99
    const target = name === smallTool ? `p50 ≤ 1, p99 ≤ 5: ${added50 <= 1 && added99 <= 5 ? 'met' : 'NOT met'}` : ''
    return [label[name], p.n, fmt(d.p50), fmt(d.p99), fmt(p.p50), fmt(p.p99), fmt(added50), fmt(added99), target]
  })
  process.stdout.write(`${table(['result', 'calls', 'direct p50 ms', 'direct p99 ms', 'proxy p50 ms', 'proxy p99 ms', 'added p50 ms', 'added p99 ms', 'target (added ms)'], rows)}\n`)
  const mem = proxied.memory
  const bigMem = mem.filter((m) => m.name === bigTool)
  const afterWarm = bigMem[0]?.rss ?? NaN
  const end = proxied.final.rss
  const peak = proxied.final.hwm
  const grows = end - afterWarm > Math.max(10, afterWarm * 0.1)
  process.stdout.write(`\nProxy memory (/proc/<pid>/status of the proxy process, level moderate): peak RSS (VmHWM) ${fmt(peak, 1)} MB (target < 100 MB: ${peak < 100 ? 'met' : 'NOT met'}); RSS over the snapshot calls ${bigMem.map((m) => fmt(m.rss, 0)).join(' → ')} → ${fmt(end, 0)} MB at the end: ${grows ? 'GROWS (NOT met)' : 'does not grow (met)'}.\n`)
  process.stdout.write(`Latencies are client-measured round trips (write request → response line) after 50 warm-up calls, one request in flight; added = proxy − direct per percentile.\n`)
}

// ---- part (d): reduction over the corpus ----

function runReduction(ctx) {
  heading('Reduction: bytes and o200k tokens per tool and level over the corpus')
  const native = require(path.join(ROOT, 'index.js'))
  const { measure, tokenCounter } = require(path.join(ROOT, 'bin', 'measure.js'))
  const counter = tokenCounter(native)
  const files = ctx.docs.map((d) => ({ file: d.path, label: d.file, walked: true }))
  const report = measure(native, files, LEVELS, counter)
  const groups = new Map()
  for (const row of report.rows) {
    const source = row.file.split(path.sep)[0]
    const key = `${source} ${row.tool}`
    const g = groups.get(key) ?? { source, tool: row.tool, rows: [] }
    g.rows.push(row)
    groups.set(key, g)
  }
  const cell = (rows, level) => {
    const r = rows.filter((x) => x.level === level)
    const tb = r.reduce((a, x) => a + x.tokensBefore, 0)
    const ta = r.reduce((a, x) => a + x.tokensAfter, 0)
    const bb = r.reduce((a, x) => a + x.bytesBefore, 0)
    const ba = r.reduce((a, x) => a + x.bytesAfter, 0)
    const per = r.map((x) => pct(x.tokensBefore, x.tokensAfter))
    return `${fmt(median(per), 1)} / ${fmt(mean(per), 1)} / ${fmt(pct(tb, ta), 1)} (bytes ${fmt(pct(bb, ba), 1)})`
  }
  // Tools holding under 0.5% of the corpus' tokens share one row: the table stays README-sized.
  const tokensOf = (g) => g.rows.filter((x) => x.level === LEVELS[0]).reduce((s, x) => s + x.tokensBefore, 0)
  const corpusTokens = [...groups.values()].reduce((s, g) => s + tokensOf(g), 0)
  const other = { source: `${[...groups.values()].filter((g) => tokensOf(g) < corpusTokens * 0.005).length} tools`, tool: 'other', rows: [] }
  for (const [key, g] of groups) {
    if (tokensOf(g) >= corpusTokens * 0.005) continue
    other.rows.push(...g.rows)
    groups.delete(key)
  }
  const sorted = [...groups.values()].sort((a, b) => tokensOf(b) - tokensOf(a))
  if (other.rows.length > 0) sorted.push(other)
  const rows = sorted.map((g) => {
    const base = g.rows.filter((x) => x.level === LEVELS[0])
    const tokens = base.map((x) => x.tokensBefore)
    return [`${g.tool} (${g.source})`, base.length, `${fmt(median(tokens), 0)} / ${fmt(mean(tokens), 0)}`, ...LEVELS.map((l) => cell(g.rows, l))]
  })
  const allBase = report.rows.filter((x) => x.level === LEVELS[0])
  rows.push([`**all**`, allBase.length, `${fmt(median(allBase.map((x) => x.tokensBefore)), 0)} / ${fmt(mean(allBase.map((x) => x.tokensBefore)), 0)}`, ...LEVELS.map((l) => cell(report.rows, l))])
  process.stdout.write(`${table(['tool (corpus dir)', 'results', `${counter.name} tokens before (median / mean)`, ...LEVELS.map((l) => `${l}: tokens saved % median / mean / total`)], rows)}\n`)
  const uids = LEVELS.map((l) => `${l} ${report.totals.find((t) => t.level === l).uidsHidden.toLocaleString('en-US')}`).join(', ')
  process.stdout.write(`\nTokens: ${counter.description}; the same accounting as \`mcp-snapshot-filter measure\` (text blocks of tool results, JSON of list results). Uids hidden behind markers: ${uids}.${report.errors.length ? ` ${report.errors.length} files failed: ${report.errors.map((e) => e.file).join(', ')}` : ''}\n`)
}

// ---- side by side with the seed ----

function runSeed(ctx) {
  heading('Side by side with the seed (../shared/seed-filter): bare snapshot and whole result, with and without the token budget')
  const args = [path.join(__dirname, 'seed.js'), ctx.corpus.dir, '--ms', String(ctx.opts.budgetMs)]
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 })
  process.stdout.write(r.status === 0 ? r.stdout : `(bench/seed.js exited with code ${r.status})\n`)
  process.stdout.write(`\n\`node bench/seed.js ${path.relative(ROOT, ctx.corpus.dir) || '.'} --ms ${ctx.opts.budgetMs}\` prints the same table.\n`)
}

// ---- extra parts written by the filter branches ----

function runExtra(ctx) {
  for (const name of EXTRA_PARTS) {
    const file = path.join(__dirname, name)
    if (!fs.existsSync(file)) continue
    heading(`bench/${name}`)
    const r = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, MCP_CORPUS_DIR: ctx.corpus.dir }, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 })
    process.stdout.write(r.status === 0 ? r.stdout : `(exited with code ${r.status})\n`)
  }
}

// ---- main ----

async function main() {
  const opts = parseOptions(process.argv.slice(2))
  if (opts.help) {
    process.stdout.write(HELP)
    return
  }
  const corpus = locateCorpus(opts.corpus)
  if (corpus.samples) {
    const skipped = opts.parts.filter((p) => CORPUS_ONLY.has(p))
    process.stderr.write(`bench: no corpus found: the parts run on the bundled samples/ (8 results)${skipped.length ? `, and ${skipped.join(', ')} not at all` : ''}.\n${HOW_TO_GET}\n`)
    opts.parts = opts.parts.filter((p) => !CORPUS_ONLY.has(p))
  }
  const ctx = { opts, corpus, docs: corpusDocs(corpus.dir) }
  const started = Date.now()
  process.stdout.write(`# mcp-snapshot-filter bench\n\nCorpus: ${corpus.samples ? 'the bundled samples/ (no corpus found)' : corpus.dir} — ${ctx.docs.length} results. Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}.\n`)
  const needsAddon = opts.parts.some((p) => ['boundary', 'proxy', 'reduction', 'sessions', 'reach', 'seed'].includes(p))
  if (needsAddon && opts.build) {
    // Timings are of the release addon, the one users get. `--no-build` uses whatever is built.
    process.stderr.write('bench: building the release addon (npx napi build --platform --release)…\n')
    const b = spawnSync('npx', ['napi', 'build', '--platform', '--release'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
    if (b.status !== 0) {
      process.stderr.write('bench: the release build failed\n')
      process.exit(1)
    }
  }
  if (opts.parts.includes('core')) runCore(ctx)
  if (opts.parts.includes('scaling')) runScaling(ctx)
  if (opts.parts.includes('boundary')) {
    runBoundary(ctx)
    await runCrossingCheck(ctx)
  }
  if (opts.parts.includes('proxy')) await runProxy(ctx)
  if (opts.parts.includes('reduction')) runReduction(ctx)
  if (opts.parts.includes('sessions')) {
    heading('Sessions: recorded sessions through the bin, snapshot deltas off and on (o200k tokens the agent receives)')
    const { runSessions, defaultDirs } = require('./sessions.js')
    await runSessions({ dirs: defaultDirs(corpus.samples ? null : corpus.dir) })
  }
  if (opts.parts.includes('reach')) {
    heading('Reach: intents whose uid is in what the agent holds, no call needed (recorded sessions through the bin)')
    const { runReach, reachDirs } = require('./reach.js')
    await runReach({ dirs: reachDirs(corpus.samples ? null : corpus.dir) })
  }
  if (opts.parts.includes('seed')) runSeed(ctx)
  if (opts.parts.includes('extra')) runExtra(ctx)
  process.stdout.write(`\n(${((Date.now() - started) / 1000).toFixed(0)} s)\n`)
}

main().catch((err) => {
  process.stderr.write(`bench: ${err.stack ?? err}\n`)
  process.exit(1)
})
