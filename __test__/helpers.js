'use strict'

const path = require('node:path')
const { spawn } = require('node:child_process')

const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js')

const ROOT = path.resolve(__dirname, '..')
const BIN = path.join(ROOT, 'bin', 'cli.js')
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
const FIXTURES = path.join(__dirname, 'fixtures')

// The bins these tests start must not append to the user's own savings ledger (`stats`);
// the ledger's own test aims it at a scratch XDG_STATE_HOME.
process.env.MCP_SNAPSHOT_FILTER_LEDGER ??= 'off'

/** The upstream command for server-everything over stdio. */
function everythingCommand() {
  return [process.execPath, EVERYTHING, 'stdio']
}

/** The command line that runs the real bin in front of `upstream`. */
function proxyCommand(upstream, proxyArgs = []) {
  return [process.execPath, BIN, ...proxyArgs, '--', ...upstream]
}

/**
 * Connects an SDK Client over stdio to `command`, collecting the child's stderr.
 * Returns { client, transport, stderr: () => string }.
 */
async function connect(command, { capabilities = {}, handlers = {}, env } = {}) {
  const [cmd, ...args] = command
  const transport = new StdioClientTransport({ command: cmd, args, stderr: 'pipe', env: env ?? { ...process.env } })
  let stderr = ''
  transport.stderr.on('data', (d) => {
    stderr += d
  })
  const client = new Client({ name: 'fidelity-test', version: '1.0.0' }, { capabilities })
  for (const [schema, handler] of handlers.requests ?? []) client.setRequestHandler(schema, handler)
  for (const [schema, handler] of handlers.notifications ?? []) client.setNotificationHandler(schema, handler)
  await client.connect(transport)
  return { client, transport, stderr: () => stderr }
}

/**
 * Spawns the bin with raw pipes, for tests that speak JSON-RPC lines directly.
 * Returns { child, send(obj|string), messages, waitFor(pred, ms), stderr(), exited }.
 */
function spawnRaw(command, { env, cwd } = {}) {
  const [cmd, ...args] = command
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? { ...process.env }, cwd })
  const messages = []
  const rawLines = []
  let stderr = ''
  let buf = ''
  const waiters = new Set()
  const check = () => {
    for (const w of waiters) {
      const found = messages.find(w.pred)
      if (found) {
        waiters.delete(w)
        clearTimeout(w.timer)
        w.resolve(found)
      }
    }
  }
  // Decoded as a stream (a multi-byte character may straddle two chunks); each chunk is searched
  // for newlines on its own so a 50 MB line costs linear time.
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (d) => {
    let start = 0
    let nl
    while ((nl = d.indexOf('\n', start)) !== -1) {
      const line = buf + d.slice(start, nl)
      buf = ''
      start = nl + 1
      rawLines.push(line)
      messages.push(JSON.parse(line))
    }
    buf += d.slice(start)
    check()
  })
  child.stderr.on('data', (d) => {
    stderr += d
  })
  // 'close', not 'exit': by then stdout and stderr are fully read.
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })))
  child.stdin.on('error', () => {})
  return {
    child,
    messages,
    rawLines,
    exited,
    stderr: () => stderr,
    send(msg) {
      child.stdin.write(typeof msg === 'string' ? msg : `${JSON.stringify(msg)}\n`)
    },
    waitFor(pred, ms = 10000) {
      return new Promise((resolve, reject) => {
        const w = { pred, resolve }
        w.timer = setTimeout(() => {
          waiters.delete(w)
          reject(new Error(`timed out after ${ms} ms waiting for a message; stderr:\n${stderr}`))
        }, ms)
        waiters.add(w)
        check()
      })
    },
  }
}

/** True when a process with this pid is still alive. */
function isAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function waitUntil(pred, ms = 10000, step = 50) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await pred()) return true
    await new Promise((r) => setTimeout(r, step))
  }
  return false
}

const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-test', version: '1' } },
}

/**
 * A filtered text with its tables (`… table of N records, a line each: checkbox "Select {name}" |
 * text | …`, then one row per record, cells split by `|`) written out as ordinary lines of
 * nodes (`1_69 checkbox "Select Ava"|1_71 link "Ava"|…`), so that tests reading nodes by uid,
 * role and name read table rows too. Text cells (no uid) and options are left out.
 */
function expandTables(text) {
  const lines = text.split('\n')
  const out = []
  for (let i = 0; i < lines.length; i++) {
    const m = /^( *)… table of (\d+) records, a line each: (.*)$/.exec(lines[i])
    out.push(lines[i])
    if (!m) continue
    const [, indent, count, rest] = m
    const specs = rest.split(/; \d+ text cells each not written| \(uid /)[0].split(' | ')
    let keyed = false
    const columns = specs.map((spec) => {
      const role = spec.split(' ')[0]
      const pattern = /^\S+ "((?:[^"\\]|\\.)*)"/.exec(spec)?.[1]
      const key = pattern === '{name}' && !keyed
      if (key) keyed = true
      return { role, pattern, key, value: / value=\*/.test(spec) }
    })
    for (const row of lines.slice(i + 1, i + 1 + Number(count))) {
      i++
      const cells = row.slice(indent.length).split(/(?<!\\)\|/)
      let recordName = ''
      const parsed = cells.map((cell, k) => {
        const col = columns[k] ?? { role: 'text' }
        const c = /^(\d+_\d+)?(?: ?"((?:[^"\\]|\\.)*)")?(.*)$/.exec(cell) ?? []
        if (col.key) recordName = col.role === 'text' ? cell : (c[2] ?? '')
        return { col, uid: c[1], name: c[2], rest: c[3] ?? '' }
      })
      const segments = parsed
        .filter((p) => p.uid && p.col.role !== 'text')
        .map(({ col, uid, name, rest }) => {
          const full = name ?? (col.pattern ? col.pattern.replace('{name}', recordName) : '')
          return `${uid} ${col.role} "${full}"${rest}`
        })
      out.push(`${indent}${segments.join('|')}`)
    }
  }
  return out.join('\n')
}

module.exports = { ROOT, BIN, EVERYTHING, FIXTURES, INIT, everythingCommand, proxyCommand, connect, spawnRaw, isAlive, waitUntil, expandTables }
