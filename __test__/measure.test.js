'use strict'

// `mcp-snapshot-filter measure`, run as a user runs it (the real bin, a child process). The
// figures themselves come from the native filters, so these tests check the accounting
// (rows, totals, inputs, exit codes), never particular savings.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { parseInput } = require('../bin/measure.js')

const ROOT = path.resolve(__dirname, '..')
const BIN = path.join(ROOT, 'bin', 'cli.js')
const SAMPLES = path.join(ROOT, 'samples')
const SAMPLE_FILES = fs.readdirSync(SAMPLES).filter((f) => f.endsWith('.json')).sort()
// Recorded sessions (one step a line), measured step by step.
const SESSION_SAMPLES = fs.readdirSync(SAMPLES).filter((f) => f.endsWith('.jsonl')).sort()
const sessionSteps = (f) => fs.readFileSync(path.join(SAMPLES, f), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
const SAMPLE_ROWS = SAMPLE_FILES.length + SESSION_SAMPLES.reduce((n, f) => n + sessionSteps(f).length, 0)

function measure(args, env = {}) {
  const r = spawnSync(process.execPath, [BIN, 'measure', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const tmpDirs = []
function tmpDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'measure-test-'))
  tmpDirs.push(dir)
  return dir
}
test.after(() => {
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true })
})

function sample(name) {
  return JSON.parse(fs.readFileSync(path.join(SAMPLES, name), 'utf8'))
}

test('the bundled samples exist, are real corpus files and stay small enough to ship', () => {
  assert.ok(SAMPLE_FILES.length >= 5, `${SAMPLE_FILES.length} samples`)
  let total = 0
  for (const f of fs.readdirSync(SAMPLES)) total += fs.statSync(path.join(SAMPLES, f)).size
  assert.ok(total < 450 * 1024, `samples/ is ${total} bytes`)
  for (const f of SAMPLE_FILES) {
    const doc = sample(f)
    assert.equal(typeof doc.request?.method, 'string', f)
    assert.ok(doc.result && typeof doc.result === 'object', f)
  }
  assert.ok(SESSION_SAMPLES.length >= 1, 'a recorded session sample')
  for (const f of SESSION_SAMPLES) {
    for (const step of sessionSteps(f)) {
      assert.equal(typeof step.tool, 'string', f)
      assert.ok(step.result && Array.isArray(step.result.content), f)
    }
  }
})

test('the bundled session shows what deltas save: a re-snapshot of the page is the short form', () => {
  const r = measure(['--json'])
  assert.equal(r.code, 0, r.stderr)
  const report = JSON.parse(r.stdout)
  for (const f of SESSION_SAMPLES) {
    const rows = report.rows.filter((row) => row.file.includes(f))
    const snaps = rows.filter((row) => row.tool === 'take_snapshot' || row.tool === 'click')
    assert.ok(snaps.length >= 2, `${f}: ${snaps.length} snapshots`)
    // The first snapshot of the page is whole; a later one is a delta smaller than half of it,
    // or whole again (with its header line) when the change touches most of what the agent
    // holds (a "select all" click checks every row of the 40-row table, all in place); the
    // unchanged re-snapshot at the end is the short form.
    assert.ok(snaps[0].tokensDeltas >= snaps[0].tokensAfter, JSON.stringify(snaps[0]))
    for (const later of snaps.slice(1)) {
      assert.ok(later.tokensDeltas < later.tokensAfter / 2 || later.tokensDeltas <= later.tokensAfter + 30, JSON.stringify(later))
    }
    const last = snaps[snaps.length - 1]
    assert.ok(last.tokensDeltas < 60, JSON.stringify(last))
  }
  assert.ok(report.totals[0].tokensDeltas < report.totals[0].tokensAfter)
})

test('with no files it measures every bundled sample and prints a total row', () => {
  const r = measure(['--wide'])
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stderr, '')
  for (const f of SAMPLE_FILES) assert.match(r.stdout, new RegExp(`samples/${f.replace(/\./g, '\\.')} `), f)
  for (const f of SESSION_SAMPLES) assert.match(r.stdout, new RegExp(`samples/${f.replace(/\./g, '\\.')}:1 `), f)
  assert.match(r.stdout, new RegExp(`\\*\\*total\\*\\* \\(${SAMPLE_ROWS}\\)`))
  assert.match(r.stdout, /Tokens: o200k_base tokens \(gpt-tokenizer\)/)
  assert.match(r.stdout, /\| take_snapshot +\|/)
  assert.match(r.stdout, /\| tools\/list +\|/)
})

test('the default table fits 100 columns; --wide has every column', () => {
  for (const args of [[], ['--all-levels']]) {
    const r = measure(args)
    assert.equal(r.code, 0, r.stderr)
    for (const line of r.stdout.split('\n')) assert.ok([...line].length <= 100, `${[...line].length} columns: ${line}`)
    assert.match(r.stdout, /^\| file +\| tool +\|( level \|)? +before \| +after \| saved \|/m)
    assert.match(r.stdout, /files in samples\//)
  }
  const wide = measure(['--wide'])
  assert.match(wide.stdout, /\| bytes before \| bytes after \| o200k before \| o200k after \| saved \| uids hidden \| o200k with deltas \| deltas save \|/)
  assert.ok(wide.stdout.split('\n').some((line) => [...line].length > 100))
})

test('a snapshot a delta session sent whole reads "full", never as a negative saving', () => {
  const r = measure(['--json'])
  const report = JSON.parse(r.stdout)
  const table = measure([]).stdout
  const first = report.rows.find((row) => row.tool === 'take_snapshot' && !row.sentAsDelta)
  assert.ok(first && first.tokensDeltas > first.tokensAfter, 'a first snapshot costs its header line in a delta session')
  assert.ok(report.rows.some((row) => row.sentAsDelta), 'the session sample sends deltas')
  assert.match(table, /\| take_snapshot +\|.*\| +full \|/)
  assert.doesNotMatch(table, /-\d+\.\d%/, 'no negative percentage')
})

test('measure --help names the three proxy tools a tools/list row counts', () => {
  const r = measure(['--help'])
  assert.equal(r.code, 0)
  assert.match(r.stdout.replace(/\s+/g, ' '), /expand_snapshot, search_snapshot and read_result/)
  assert.match(r.stdout, /--wide/)
})

test('--json parses and its totals are the sums of its rows, per level', () => {
  const r = measure(['--all-levels', '--json'])
  assert.equal(r.code, 0, r.stderr)
  const report = JSON.parse(r.stdout)
  assert.deepEqual(report.levels, ['light', 'moderate', 'aggressive'])
  assert.equal(report.rows.length, SAMPLE_ROWS * 3)
  for (const total of report.totals) {
    const rows = report.rows.filter((row) => row.level === total.level)
    assert.equal(total.results, SAMPLE_ROWS)
    for (const key of ['bytesBefore', 'bytesAfter', 'tokensBefore', 'tokensAfter', 'uidsHidden']) {
      assert.equal(total[key], rows.reduce((sum, row) => sum + row[key], 0), `${total.level} ${key}`)
    }
    const expected = total.tokensBefore === 0 ? 0 : Math.round(((total.tokensBefore - total.tokensAfter) / total.tokensBefore) * 1000) / 10
    assert.equal(total.savedPercent, expected)
  }
  // Bytes before are what the model reads of the original: the sample's own text, not a stub.
  const grid = report.rows.find((row) => row.file.endsWith('app-grid.take_snapshot.json'))
  assert.equal(grid.bytesBefore, Buffer.byteLength(sample('app-grid.take_snapshot.json').result.content[0].text))
  assert.equal(grid.tool, 'take_snapshot')
  assert.equal(grid.toolInferred, false)
})

test('--level off reports 0% saved on every result', () => {
  const r = measure(['--level', 'off', '--json'])
  assert.equal(r.code, 0, r.stderr)
  const report = JSON.parse(r.stdout)
  assert.equal(report.rows.length, SAMPLE_ROWS)
  for (const row of report.rows) {
    assert.equal(row.savedPercent, 0, row.file)
    assert.equal(row.bytesAfter, row.bytesBefore, row.file)
    assert.equal(row.uidsHidden, 0, row.file)
  }
  assert.equal(report.totals[0].savedPercent, 0)
})

test('a file it cannot parse is reported on stderr and skipped; the others are measured; exit 1', () => {
  const dir = tmpDir()
  const good = path.join(dir, 'good.json')
  fs.copyFileSync(path.join(SAMPLES, 'app-noisy.list_network_requests.json'), good)
  const broken = path.join(dir, 'broken.json')
  fs.writeFileSync(broken, '{"result": {"content": [')
  const r = measure([good, broken, '--json'])
  assert.equal(r.code, 1)
  const errLines = r.stderr.trim().split('\n')
  assert.equal(errLines.length, 1, r.stderr)
  assert.match(r.stderr, /broken\.json: not valid JSON/)
  const report = JSON.parse(r.stdout)
  assert.equal(report.rows.length, 1)
  assert.equal(report.rows[0].tool, 'list_network_requests')
  assert.equal(report.errors.length, 1)
})

test('a path that does not exist is an error with exit 2 and no table', () => {
  const dir = tmpDir()
  const good = path.join(dir, 'good.json')
  fs.copyFileSync(path.join(SAMPLES, 'app-noisy.list_network_requests.json'), good)
  for (const args of [[path.join(dir, 'my-results/')], [good, path.join(dir, 'missing.json')]]) {
    const r = measure(args)
    assert.equal(r.code, 2, args.join(' '))
    assert.equal(r.stdout, '')
    assert.match(r.stderr, /error: no such file or directory: .*(my-results\/|missing\.json)$/m)
  }
})

test('usage errors exit 2', () => {
  for (const args of [['--bogus'], ['--level', 'extreme'], ['--level'], ['--level=light', '--all-levels']]) {
    const r = measure(args)
    assert.equal(r.code, 2, args.join(' '))
    assert.match(r.stderr, /error:/)
    assert.equal(r.stdout, '')
  }
})

test('measure --help prints its usage; the proxy keeps its own --help', () => {
  const r = measure(['--help'])
  assert.equal(r.code, 0)
  assert.match(r.stdout, /mcp-snapshot-filter measure \[FILE\|DIR/)
  const proxy = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' })
  assert.equal(proxy.status, 0)
  assert.match(proxy.stdout, /-- <upstream command>/)
})

test('MCP_SNAPSHOT_FILTER_TOKENS=estimate uses the native estimate and says why, not "not installed"', () => {
  const r = measure([path.join(SAMPLES, 'app-grid.take_snapshot.json')], { MCP_SNAPSHOT_FILTER_TOKENS: 'estimate' })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /the proxy's own estimate .*MCP_SNAPSHOT_FILTER_TOKENS=estimate\)/)
  assert.doesNotMatch(r.stdout, /not installed/)
  const json = JSON.parse(measure([path.join(SAMPLES, 'app-grid.take_snapshot.json'), '--json'], { MCP_SNAPSHOT_FILTER_TOKENS: 'estimate' }).stdout)
  assert.equal(json.tokenizer.exact, false)
  const { estimateTokens } = require('../index.js')
  const { modelText } = require('../bin/measure.js')
  const doc = JSON.parse(fs.readFileSync(path.join(SAMPLES, 'app-grid.take_snapshot.json'), 'utf8'))
  assert.equal(json.rows[0].tokensBefore, estimateTokens(modelText(doc.result)))
})

test('a JSON-RPC log: responses are paired with requests by id to know the tool', () => {
  const snap = sample('app-grid.take_snapshot.json')
  const list = sample('chrome-devtools-mcp.tools-list.json')
  const net = sample('app-noisy.list_network_requests.json')
  const lines = [
    { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: snap.request.params },
    { jsonrpc: '2.0', id: 1, result: list.result },
    'a line that is not a message',
    { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } },
    { jsonrpc: '2.0', id: 'a', result: snap.result },
    { jsonrpc: '2.0', id: 7, result: net.result }, // no request in the log
    { jsonrpc: '2.0', id: 8, method: 'initialize', params: {} },
    { jsonrpc: '2.0', id: 8, result: { protocolVersion: '2025-11-25', capabilities: {} } },
  ]
  const dir = tmpDir()
  const log = path.join(dir, 'session.jsonl')
  fs.writeFileSync(log, `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`)
  const r = measure([log, '--json'])
  assert.equal(r.code, 0, r.stderr)
  const rows = JSON.parse(r.stdout).rows
  assert.deepEqual(
    rows.map((row) => [row.file.replace(/.*session/, 'session'), row.tool, row.kind, row.toolInferred]),
    [
      ['session.jsonl:3', 'tools/list', 'list', false],
      ['session.jsonl:6', 'take_snapshot', 'result', false],
      ['session.jsonl:7', 'list_network_requests', 'result', true],
    ],
  )
})

test('bare results, a single JSON-RPC response and bare snapshot text are measured; directories are walked', () => {
  const dir = tmpDir()
  fs.mkdirSync(path.join(dir, 'deep', 'er'), { recursive: true })
  const snap = sample('app-grid.take_snapshot.json')
  const text = snap.result.content[0].text
  fs.writeFileSync(path.join(dir, 'result.json'), JSON.stringify(sample('app-noisy.list_console_messages.json').result))
  fs.writeFileSync(path.join(dir, 'deep', 'response.json'), JSON.stringify({ jsonrpc: '2.0', id: 1, result: snap.result }))
  fs.writeFileSync(path.join(dir, 'deep', 'er', 'page.txt'), text)
  fs.writeFileSync(path.join(dir, 'deep', 'notes.md'), 'not walked')
  fs.writeFileSync(path.join(dir, 'stderr.txt'), 'Chrome started\n') // walked, not a result: noted only
  const r = measure([dir, '--json'])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stderr, /ignored .*stderr\.txt/)
  const rows = JSON.parse(r.stdout).rows
  const byName = Object.fromEntries(rows.map((row) => [path.basename(row.file), row]))
  assert.deepEqual(Object.keys(byName).sort(), ['page.txt', 'response.json', 'result.json'])
  assert.equal(byName['result.json'].tool, 'list_console_messages')
  assert.equal(byName['result.json'].toolInferred, true)
  assert.equal(byName['response.json'].tool, 'take_snapshot')
  assert.equal(byName['page.txt'].kind, 'snapshot')
  // The snapshot section's body: the text after the header line.
  assert.equal(byName['page.txt'].bytesBefore, Buffer.byteLength(text) - '## Latest page snapshot\n'.length)
})

test('an explicitly named file in no known format fails; one with nothing filtered is only noted', () => {
  const dir = tmpDir()
  const prose = path.join(dir, 'prose.txt')
  fs.writeFileSync(prose, 'just some words\n')
  const init = path.join(dir, 'init.json')
  fs.writeFileSync(init, JSON.stringify({ request: { method: 'initialize', params: {} }, result: { capabilities: {} } }))
  const r = measure([prose, init])
  assert.equal(r.code, 1)
  assert.match(r.stderr, /skipped .*prose\.txt: not a tool result/)
  assert.match(r.stderr, /ignored .*init\.json: nothing to measure/)
  assert.equal(measure([init]).code, 0)
})

test('uids hidden are the native filter\'s own count', () => {
  const native = require('..')
  const file = path.join(SAMPLES, 'app-grid.take_snapshot.json')
  const result = JSON.parse(fs.readFileSync(file, 'utf8')).result
  const text = result.content[0].text
  const body = text.slice(text.indexOf('\n') + 1)
  const expected = native.filterSnapshot(body, { level: 'moderate' }).uidsHidden
  assert.ok(expected > 0)
  const r = measure([file, '--json'])
  assert.equal(r.code, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout).rows[0].uidsHidden, expected)
})

test('parseInput tells corpus files, bare results and list results apart', () => {
  const corpus = parseInput(fs.readFileSync(path.join(SAMPLES, 'app-noisy.evaluate_script.html.json'), 'utf8'))
  assert.equal(corpus[0].tool, 'evaluate_script')
  assert.equal(JSON.parse(corpus[0].argsJson).function, '() => document.body.innerHTML')
  assert.equal(parseInput(JSON.stringify({ prompts: [] }))[0].tool, 'prompts/list')
  assert.equal(parseInput(JSON.stringify({ resourceTemplates: [] }))[0].tool, 'resources/templates/list')
  assert.equal(parseInput(JSON.stringify({ content: [{ type: 'image', data: '', mimeType: 'image/png' }] }))[0].tool, 'unknown')
})

test('without gpt-tokenizer (a registry install has no dev dependencies) the Tokens line says the counts are not o200k, and how to get them', (t) => {
  // The package as a registry user has it: its files, its addon, no node_modules of its own.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-measure-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const { platformSuffix } = require('../bin/native.js')
  const addon = `${require('../package.json').napi.binaryName}.${platformSuffix()}.node`
  for (const file of ['package.json', 'index.js', addon]) fs.copyFileSync(path.join(ROOT, file), path.join(dir, file))
  fs.cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true })
  const r = spawnSync(process.execPath, [path.join(dir, 'bin', 'cli.js'), 'measure', path.join(SAMPLES, 'app-grid.take_snapshot.json')], { cwd: dir, encoding: 'utf8', env: { ...process.env, MCP_SNAPSHOT_FILTER_TOKENS: '' } })
  assert.equal(r.status, 0, r.stderr)
  const [tokensLine] = r.stdout.split('\n')
  assert.match(tokensLine, /^Level: moderate\. Tokens: estimated tokens, the proxy's own estimate \(.*not o200k: gpt-tokenizer, a development dependency of this package, is not installed; `npx -p gpt-tokenizer -p mcp-snapshot-filter mcp-snapshot-filter measure`/)
})
