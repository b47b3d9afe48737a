'use strict'

// The savings ledger: one JSON line per proxy session, appended when the session ends, read by
// `mcp-snapshot-filter stats`. It holds counts only (per upstream tool: results, bytes and
// estimated tokens before and after), a day, the level and a short upstream label; never page
// content, arguments or the upstream's full command line.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const FILE_NAME = 'ledger.jsonl'
const VERSION = 1

/** `$XDG_STATE_HOME/mcp-snapshot-filter` (default `~/.local/state/…`; Windows: `%LOCALAPPDATA%\…`). */
function stateDir(env = process.env, platform = process.platform) {
  if (env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME)) return path.join(env.XDG_STATE_HOME, 'mcp-snapshot-filter')
  if (platform === 'win32' && env.LOCALAPPDATA) return path.join(env.LOCALAPPDATA, 'mcp-snapshot-filter')
  return path.join(env.HOME || os.homedir(), '.local', 'state', 'mcp-snapshot-filter')
}

function ledgerPath(env = process.env) {
  return path.join(stateDir(env), FILE_NAME)
}

const RUNNERS = new Set(['npx', 'node', 'bunx', 'bun', 'pnpm', 'dlx', 'yarn', 'uvx', 'deno', 'run', 'exec', '-y', '--yes'])

/**
 * A short name for the upstream: the package or executable it runs, without a version or a
 * path (`npx -y chrome-devtools-mcp@latest` -> `chrome-devtools-mcp`). Only this word of the
 * command line goes to the ledger: arguments may hold paths or secrets.
 */
function upstreamLabel(command, args = []) {
  const base = (w) => path.basename(w).replace(/\.(exe|cmd)$/i, '')
  let word = command
  if (RUNNERS.has(base(command))) word = args.find((a) => !a.startsWith('-') && !RUNNERS.has(a)) ?? command
  // A scoped package keeps its scope (`@playwright/mcp`); a path becomes its last component.
  const scoped = /^(@[\w.-]+\/[\w.-]+)/.exec(word)
  // `node …/node_modules/chrome-devtools-mcp/build/src/index.js` is chrome-devtools-mcp.
  const installed = /node_modules[\\/]((?:@[\w.-]+[\\/])?[\w.-]+)/.exec(word)
  const name = scoped ? scoped[1] : installed ? installed[1].replace('\\', '/') : base(word).replace(/^([^@]+)@.*$/, '$1').replace(/\.(c?js|mjs)$/, '')
  return name.replace(/[^\w@./-]/g, '').slice(0, 64) || 'upstream'
}

/** Local calendar day, `YYYY-MM-DD`. */
function localDay(date) {
  const pad = (n) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}

/** The ledger line of a session, or null when it saw no result of a filtered tool. */
function entryOf({ toolTotals, level, upstream, date = new Date() }) {
  const tools = {}
  for (const t of toolTotals) {
    tools[t.tool] = { results: t.results, shrunk: t.shrunk, bytesIn: t.bytesIn, bytesOut: t.bytesOut, tokensIn: t.tokensIn, tokensOut: t.tokensOut }
  }
  if (Object.keys(tools).length === 0) return null
  return { v: VERSION, day: localDay(date), end: date.toISOString(), upstream, level, tools }
}

/**
 * Appends one line to the ledger. The directory is created private (0700); the file is opened
 * append-only, created 0600, never through a symlink (O_NOFOLLOW), and must be a regular file
 * owned by us. Throws on any problem: the caller logs one line and carries on.
 */
function append(entry, file = ledgerPath()) {
  const dir = path.dirname(file)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const dirStat = fs.lstatSync(dir)
  if (!dirStat.isDirectory()) throw new Error(`${dir} is not a directory (a symlink?)`)
  const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW = 0 } = fs.constants
  const fd = fs.openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0o600)
  try {
    const st = fs.fstatSync(fd)
    if (!st.isFile()) throw new Error(`${file} is not a regular file`)
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new Error(`${file} belongs to another user`)
    // One write of one line: appends of concurrent sessions do not interleave.
    fs.writeSync(fd, `${JSON.stringify(entry)}\n`)
  } finally {
    fs.closeSync(fd)
  }
}

/** Reads the ledger: { entries, bad } (bad: lines that are not ledger entries), or null when absent. */
function read(file = ledgerPath()) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  const entries = []
  let bad = 0
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      const e = JSON.parse(line)
      if (e && e.v === VERSION && typeof e.day === 'string' && e.tools && typeof e.tools === 'object') entries.push(e)
      else bad++
    } catch {
      bad++
    }
  }
  return { entries, bad }
}

/**
 * Appends the session's counts to the ledger at the end of a proxy session; one stderr line on
 * failure (the ledger is never worth failing the exit for). Tests aim it with XDG_STATE_HOME.
 */
function recordSession({ session, level, command, args, log, env = process.env }) {
  let entry
  try {
    entry = entryOf({ toolTotals: session.toolTotals(), level, upstream: upstreamLabel(command, args) })
  } catch (err) {
    log(`ledger: not written: ${err.message}`)
    return
  }
  if (!entry) return
  const file = ledgerPath(env)
  try {
    append(entry, file)
  } catch (err) {
    log(`ledger: not written to ${file}: ${err.code ?? err.message} (--no-ledger turns it off)`)
  }
}

module.exports = { recordSession, stateDir, ledgerPath, upstreamLabel, entryOf, append, read, localDay, FILE_NAME }
