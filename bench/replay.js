'use strict'

// Replays recorded sessions (JSONL of {step, tool, args, result}) through the real bin in front
// of a replaying upstream (__test__/fixtures/fixture-server.js answering each step with its
// recorded result). Shared by bench/sessions.js (tokens the agent receives) and bench/reach.js
// (whether each uid the agent acted on was in what it held).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

const { lineClient } = require('./line-client.js')

const ROOT = path.resolve(__dirname, '..')
const FIXTURE_SERVER = path.join(ROOT, '__test__', 'fixtures', 'fixture-server.js')
const BIN = path.join(ROOT, 'bin', 'cli.js')
const SNAPSHOT_HEADER = '## Latest page snapshot\n'

/** Session files of each set: [{ set, dir, files }]; sets whose directory is absent or empty are left out. */
function sessionSets(dirs) {
  const sets = []
  for (const { set, dir } of dirs) {
    if (!dir || !fs.existsSync(dir)) continue
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort().map((f) => path.join(dir, f))
    if (files.length > 0) sets.push({ set, dir, files })
  }
  return sets
}

function readSession(file) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
}

/** Sequential JSON-RPC over a child's stdio: call(method, params) resolves with the parsed response. */
function rpcClient(child) {
  const lines = lineClient(child.stdout, (line) => child.stdin.write(line))
  let id = 0
  return {
    async call(method, params) {
      const msgId = ++id
      return JSON.parse(await lines.call(`${JSON.stringify({ jsonrpc: '2.0', id: msgId, method, params })}\n`, msgId))
    },
  }
}

/** The text the model reads from a result (text blocks, plus structuredContent). */
function modelText(result) {
  const parts = []
  for (const block of Array.isArray(result?.content) ? result.content : []) {
    if (block?.type === 'text' && typeof block.text === 'string') parts.push(block.text)
  }
  const text = parts.join('\n')
  return result?.structuredContent === undefined ? text : `${text}\n${JSON.stringify(result.structuredContent)}`
}

/** The snapshot section of a result's text (after `## Latest page snapshot`), or null. */
function snapshotBody(result) {
  return snapshotSection(modelText(result))
}

function snapshotSection(text) {
  const at = text.indexOf(SNAPSHOT_HEADER)
  if (at === -1) return null
  const rest = text.slice(at + SNAPSHOT_HEADER.length)
  const end = rest.indexOf('\n## ')
  return end === -1 ? rest : rest.slice(0, end + 1)
}

/**
 * Replays one session through the bin with `args` (null: the upstream directly). Returns per
 * step { step, text }: the text the agent received.
 *
 * With `probe` ({ step, args }): replays the steps before `probe.step`, then sends that step's
 * tool with `probe.args` instead (no recorded result: the fixture echoes it) and returns
 * { arrived }: the arguments the upstream received for it (its FIXTURE_RECORD), or null.
 */
async function replay(steps, args, probe = null) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-session-'))
  const recordFile = path.join(dir, 'received.jsonl')
  try {
    const list = steps.find((s) => s.tool === 'tools/list')
    const listFile = path.join(dir, 'tools-list.json')
    fs.writeFileSync(listFile, JSON.stringify({ result: list ? list.result : { tools: [] } }))
    for (const s of steps) {
      if (s.tool === 'tools/list') continue
      const doc = { tool: s.tool, request: { method: 'tools/call', params: { name: s.tool, arguments: s.args } }, result: s.result }
      fs.writeFileSync(path.join(dir, `step-${s.step}.json`), JSON.stringify(doc))
    }
    const command = args ? [process.execPath, BIN, ...args, '--', process.execPath, FIXTURE_SERVER] : [process.execPath, FIXTURE_SERVER]
    const child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, FIXTURE_REPLAY_DIR: dir, FIXTURE_TOOLS_LIST: listFile, FIXTURE_RECORD: recordFile } })
    const client = rpcClient(child)
    await client.call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-sessions', version: '1' } })
    await client.call('tools/list', {})
    const out = []
    let arrived = null
    for (const s of steps) {
      if (s.tool === 'tools/list') continue
      if (probe !== null && s.step === probe.step) {
        await client.call('tools/call', { name: s.tool, arguments: probe.args })
        arrived = lastCallArguments(recordFile)
        break
      }
      const res = await client.call('tools/call', { name: s.tool, arguments: { ...s.args, fixture: `step-${s.step}` } })
      out.push({ step: s, text: res.result ? modelText(res.result) : JSON.stringify(res.error) })
    }
    child.stdin.end()
    await new Promise((resolve) => child.once('exit', resolve))
    return probe === null ? out : { arrived }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** The arguments of the last tools/call line in a FIXTURE_RECORD file, or null. */
function lastCallArguments(file) {
  if (!fs.existsSync(file)) return null
  const calls = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
    .filter((m) => m.method === 'tools/call')
  return calls.length === 0 ? null : (calls[calls.length - 1].params?.arguments ?? null)
}

/** The default session sets: the corpus' sessions, then captured ones (MCP_SESSIONS_DIR, else /work/captured). */
function defaultDirs(corpusDir) {
  const dirs = [{ set: 'shared', dir: corpusDir ? path.join(corpusDir, 'sessions') : null }]
  // Sessions recorded with bench/record-session.js on pages the corpus does not hold (Python,
  // PostgreSQL and Rust docs served locally): MCP_SESSIONS_DIR, else /work/captured.
  dirs.push({ set: 'captured (pages the corpus does not hold)', dir: process.env.MCP_SESSIONS_DIR ?? '/work/captured' })
  return dirs
}

module.exports = { ROOT, SNAPSHOT_HEADER, sessionSets, readSession, modelText, snapshotBody, snapshotSection, replay, defaultDirs }
