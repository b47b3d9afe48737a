#!/usr/bin/env node
'use strict'

// The sessions part of `npm run bench` (also `node bench/sessions.js [DIR ...]`): replays every
// recorded session (the JSONL of ../shared/corpus/sessions/, and /work/captured when present,
// or the directories given) through the real bin in front of a replaying upstream
// (__test__/fixtures/fixture-server.js answering each step with its recorded result), at each
// level, with snapshot deltas off and on, and prints the o200k tokens the agent receives:
// direct (no proxy), light, moderate, moderate with deltas, aggressive, aggressive with deltas;
// over whole sessions and over the snapshots that had a predecessor of the same page. Judged
// against the targets of the deltas issue; a benchmark, never a test.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

const ROOT = path.resolve(__dirname, '..')
const FIXTURE_SERVER = path.join(ROOT, '__test__', 'fixtures', 'fixture-server.js')
const BIN = path.join(ROOT, 'bin', 'cli.js')
const SNAPSHOT_HEADER = '## Latest page snapshot\n'

const CONFIGS = [
  { name: 'direct', args: null },
  { name: 'light', args: ['--filter-level=light'] },
  { name: 'moderate', args: ['--filter-level=moderate', '--snapshot-deltas=off'] },
  { name: 'moderate + deltas', args: ['--filter-level=moderate', '--snapshot-deltas=on'] },
  { name: 'aggressive', args: ['--filter-level=aggressive', '--snapshot-deltas=off'] },
  { name: 'aggressive + deltas', args: ['--filter-level=aggressive', '--snapshot-deltas=on'] },
]

/** Session files of each set: [{ set, files }]. */
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

/** Sequential JSON-RPC over a line stream: call(message) resolves with the parsed response. */
function lineClient(child) {
  let buf = ''
  const waiting = new Map()
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk) => {
    buf += chunk
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      let msg
      try {
        msg = JSON.parse(line)
      } catch {
        continue
      }
      const w = waiting.get(msg.id)
      if (w) {
        waiting.delete(msg.id)
        w(msg)
      }
    }
  })
  let id = 0
  return {
    call(method, params) {
      const msgId = ++id
      return new Promise((resolve) => {
        waiting.set(msgId, resolve)
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: msgId, method, params })}\n`)
      })
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

function snapshotBody(result) {
  const text = modelText(result)
  const at = text.indexOf(SNAPSHOT_HEADER)
  if (at === -1) return null
  const rest = text.slice(at + SNAPSHOT_HEADER.length)
  const end = rest.indexOf('\n## ')
  return end === -1 ? rest : rest.slice(0, end + 1)
}

/**
 * Replays one session through `args` (null: the upstream directly). Returns per step the text
 * the agent received.
 */
async function replay(steps, args) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-session-'))
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
    const child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, FIXTURE_REPLAY_DIR: dir, FIXTURE_TOOLS_LIST: listFile } })
    const client = lineClient(child)
    await client.call('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-sessions', version: '1' } })
    await client.call('tools/list', {})
    const out = []
    for (const s of steps) {
      if (s.tool === 'tools/list') continue
      const res = await client.call('tools/call', { name: s.tool, arguments: { ...s.args, fixture: `step-${s.step}` } })
      out.push({ step: s, text: res.result ? modelText(res.result) : JSON.stringify(res.error) })
    }
    child.stdin.end()
    await new Promise((resolve) => child.once('exit', resolve))
    return out
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** Which steps carry a snapshot with a predecessor of the same page, and which repeat it unchanged. */
function classify(steps) {
  const last = new Map()
  const kinds = new Map()
  for (const s of steps) {
    if (s.tool === 'tools/list') continue
    const body = snapshotBody(s.result)
    if (body === null) continue
    const page = JSON.stringify(s.args?.pageId ?? null)
    if (last.has(page)) kinds.set(s.step, last.get(page) === body ? 'unchanged' : 'predecessor')
    else kinds.set(s.step, 'first')
    last.set(page, body)
  }
  return kinds
}

function pct(before, after) {
  return before === 0 ? 0 : ((before - after) / before) * 100
}

async function runSessions({ dirs, write = (s) => process.stdout.write(s) }) {
  let count
  try {
    ;({ countTokens: count } = require('gpt-tokenizer/encoding/o200k_base'))
  } catch {
    write('(gpt-tokenizer is not installed: run npm install for the o200k counts)\n')
    return
  }
  const sets = sessionSets(dirs)
  if (sets.length === 0) {
    write('(no recorded sessions found)\n')
    return
  }
  for (const { set, dir, files } of sets) {
    write(`\n### Sessions: ${set} (${dir}, ${files.length} sessions)\n\n`)
    const totals = CONFIGS.map(() => ({ all: 0, predecessor: 0 }))
    const unchangedMax = CONFIGS.map(() => 0)
    let predecessors = 0
    let unchanged = 0
    const rows = []
    for (const file of files) {
      const steps = readSession(file)
      const kinds = classify(steps)
      const perConfig = []
      for (const [i, config] of CONFIGS.entries()) {
        const got = await replay(steps, config.args)
        const t = { all: 0, predecessor: 0 }
        for (const { step, text } of got) {
          const tokens = count(text)
          t.all += tokens
          const kind = kinds.get(step.step)
          if (kind === 'predecessor' || kind === 'unchanged') t.predecessor += tokens
          if (kind === 'unchanged') unchangedMax[i] = Math.max(unchangedMax[i], tokens)
        }
        totals[i].all += t.all
        totals[i].predecessor += t.predecessor
        perConfig.push(t)
      }
      for (const kind of kinds.values()) {
        if (kind !== 'first') predecessors++
        if (kind === 'unchanged') unchanged++
      }
      rows.push([path.basename(file), ...perConfig.map((t) => t.all.toLocaleString('en-US'))])
    }
    const head = ['session', ...CONFIGS.map((c) => c.name)]
    const line = (cells) => `| ${cells.join(' | ')} |`
    write(`${line(head)}\n${line(head.map(() => '---'))}\n`)
    for (const r of rows) write(`${line(r)}\n`)
    write(`${line(['**all sessions**', ...totals.map((t) => `**${t.all.toLocaleString('en-US')}**`)])}\n`)
    write(`${line([`snapshots with a predecessor (${predecessors})`, ...totals.map((t) => t.predecessor.toLocaleString('en-US'))])}\n`)
    write(`${line([`largest unchanged re-snapshot (${unchanged})`, ...unchangedMax.map((m) => (unchanged ? m.toLocaleString('en-US') : '–'))])}\n`)
    const idx = (name) => CONFIGS.findIndex((c) => c.name === name)
    for (const level of ['moderate', 'aggressive']) {
      const off = totals[idx(level)]
      const on = totals[idx(`${level} + deltas`)]
      const session = pct(off.all, on.all)
      const pred = pct(off.predecessor, on.predecessor)
      const worst = unchangedMax[idx(`${level} + deltas`)]
      write(
        `\n${level} + deltas vs ${level}: sessions −${session.toFixed(1)}% (target ≥ 40%: ${session >= 40 ? 'met' : 'NOT met'}), ` +
          `snapshots with a predecessor −${pred.toFixed(1)}% (target ≥ 60%: ${pred >= 60 ? 'met' : 'NOT met'}), ` +
          `largest unchanged re-snapshot ${unchanged ? `${worst} tokens (target ≤ 60: ${worst <= 60 ? 'met' : 'NOT met'})` : 'none in these sessions'}.`,
      )
    }
    write('\n')
  }
  write(
    '\nTokens: o200k (gpt-tokenizer) of the text blocks of every tools/call result the client receives, stats line included (the default --stats=inline). ' +
      'Each session is replayed step by step through `node bin/cli.js` in front of the fixture server answering every call with its recorded result.\n',
  )
}

function defaultDirs(corpusDir) {
  const dirs = [{ set: 'shared', dir: corpusDir ? path.join(corpusDir, 'sessions') : null }]
  // Sessions recorded with bench/record-session.js on pages the corpus does not hold (Python,
  // PostgreSQL and Rust docs served locally): MCP_SESSIONS_DIR, else /work/captured.
  dirs.push({ set: 'captured (pages the corpus does not hold)', dir: process.env.MCP_SESSIONS_DIR ?? '/work/captured' })
  return dirs
}

if (require.main === module) {
  const given = process.argv.slice(2)
  const corpus = process.env.MCP_CORPUS_DIR ?? path.join(ROOT, '..', 'shared', 'corpus')
  const dirs = given.length > 0 ? given.map((d) => ({ set: d, dir: d })) : defaultDirs(corpus)
  runSessions({ dirs }).catch((err) => {
    process.stderr.write(`bench sessions: ${err.stack ?? err}\n`)
    process.exit(1)
  })
}

module.exports = { runSessions, defaultDirs }
