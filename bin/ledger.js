// @ts-check
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

const RUNNERS = new Set(['npx', 'node', 'bunx', 'bun', 'pnpm', 'dlx', 'yarn', 'uvx', 'uv', 'pipx', 'deno', 'run', 'exec', 'tool', '-y', '--yes'])
/**
 * Options of those runners that take the next word as their value (npm/npx, pnpm, yarn, uv,
 * pipx, deno, node): that word is never the package. `--package`/`--from` name the package.
 */
const VALUE_OPTIONS = new Set(['--registry', '--cache', '--userconfig', '--globalconfig', '--prefix', '--call', '-c', '--workspace', '-w', '--node-options', '--script-shell', '--index-url', '--extra-index-url', '--index', '--default-index', '--find-links', '-f', '--with', '--python', '--config', '--import-map', '--env-file', '--cert', '--location', '-r', '--require', '--import', '--loader', '--inspect-port', '--cwd', '--dir', '-C', '--filter', '--pip-args', '--spec'])
const PACKAGE_OPTIONS = new Set(['--package', '-p', '--from'])
/** What a package or command name looks like: an option's value (a URL, a credential, key=value) does not. */
const NAME = /^(?:@[\w.-]+\/)?[\w.-]+(?:@[\w.^~<>=*|-]*)?$/

/**
 * A short name for the upstream: the package or executable it runs, without a version or a
 * path (`npx -y chrome-devtools-mcp@latest` -> `chrome-devtools-mcp`). Only this word of the
 * command line goes to the ledger: arguments may hold paths or secrets, and so may an option's
 * value (`npx --registry https://user:TOKEN@host/ pkg`): values of the runners' options are
 * skipped, and a word that is no package name is never taken.
 */
function upstreamLabel(command, args = []) {
  const base = (w) => path.basename(w).replace(/\.(exe|cmd)$/i, '')
  let word = command
  if (RUNNERS.has(base(command))) word = runnerTarget(args) ?? command
  // A scoped package keeps its scope (`@playwright/mcp`); a path becomes its last component.
  const scoped = /^(@[\w.-]+\/[\w.-]+)/.exec(word)
  // `node …/node_modules/chrome-devtools-mcp/build/src/index.js` is chrome-devtools-mcp.
  const installed = /node_modules[\\/]((?:@[\w.-]+[\\/])?[\w.-]+)/.exec(word)
  const name = scoped ? scoped[1] : installed ? installed[1].replace('\\', '/') : base(word).replace(/^([^@]+)@.*$/, '$1').replace(/\.(c?js|mjs)$/, '')
  return NAME.test(name) ? name.slice(0, 64) : 'upstream'
}

/** The package (or script) a runner's arguments start, or null: options and their values skipped. */
function runnerTarget(args) {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (PACKAGE_OPTIONS.has(arg)) return plausible(args[i + 1]) ? args[i + 1] : null
    const eq = /^(--package|--from)=(.*)$/s.exec(arg)
    if (eq) return plausible(eq[2]) ? eq[2] : null
    if (VALUE_OPTIONS.has(arg)) {
      i++
      continue
    }
    if (arg.startsWith('-') || RUNNERS.has(arg)) continue
    if (plausible(arg)) return arg
  }
  return null
}

/** A package spec or a path to a script; never a URL, a credential or a `key=value`. */
function plausible(word) {
  if (typeof word !== 'string' || /[:=\s]/.test(word)) return false
  if (word.includes('/') || word.includes('\\')) return /node_modules[\\/]/.test(word) || /^@[\w.-]+\/[\w.-]+(@[\w.^~<>=*|-]*)?$/.test(word) || /\.(c?js|mjs|ts|py)$/.test(word)
  return NAME.test(word)
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
    // Lines written before deltas were counted per tool have neither field.
    if (t.deltas > 0) Object.assign(tools[t.tool], { deltas: t.deltas, deltaBytesSaved: t.deltaBytesSaved })
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

const COUNTS = ['results', 'shrunk', 'bytesIn', 'bytesOut', 'tokensIn', 'tokensOut']
const OPTIONAL_COUNTS = ['deltas', 'deltaBytesSaved']
const isCount = (n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A ledger line as this version writes it, every field of its type (else `stats` would sum `"abc"`). */
function isEntry(e) {
  if (!isPlainObject(e) || e.v !== VERSION || typeof e.day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(e.day)) return false
  if ((e.upstream !== undefined && typeof e.upstream !== 'string') || (e.level !== undefined && typeof e.level !== 'string')) return false
  if (!isPlainObject(e.tools)) return false
  return Object.values(e.tools).every((t) => isPlainObject(t) && COUNTS.every((k) => isCount(t[k])) && OPTIONAL_COUNTS.every((k) => t[k] === undefined || isCount(t[k])))
}

/** Reads the ledger: { entries, bad } (bad: lines that are not ledger entries, or hold a field of the wrong type), or null when absent. */
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
      if (isEntry(e)) entries.push(e)
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
