// @ts-check
'use strict'

// `mcp-snapshot-filter install` / `uninstall`: rewrites an MCP server entry the user already has
// in Claude Code (~/.claude.json: top-level and per-project `mcpServers`; a project's .mcp.json) or Cursor
// (~/.cursor/mcp.json, <project>/.cursor/mcp.json) so that it runs through this proxy, and back.
//
// The wrapped entry runs this proxy, then `--installed` (options.js: INSTALL_MARK), `--` and the
// original command with its args. How it runs the proxy is what lasts: run from npx's cache
// (`npx mcp-snapshot-filter install`), `npx -y mcp-snapshot-filter@<this version>`, since npm may
// prune that cache and the path in it with it; run from anywhere else (a clone, a global or a
// project install), `node <absolute path of this bin/cli.js>`, which works whatever directory the
// client starts servers in. Everything else in the entry (type, env, other keys) and in the file
// stays as it was, byte for byte: only the values of "command" and "args" are replaced in the
// file's own text (bin/json-edit.js), and the original command's strings are moved as the bytes
// they were. `uninstall` restores only entries that carry the mark, taking the original command
// back from after the `--`: the entry itself is the record, nothing is stored elsewhere, and an
// entry the user wrapped by hand (the README's line) is left alone. Each write is preceded by a
// backup copy of the file (its bytes as read) and done atomically (a temporary file renamed over
// the real one, its mode kept); `uninstall` then removes the older backups of that file, keeping
// the one it just made.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { UsageError, STRUCTURED_FLAG, INSTALL_MARK } = require('./options.js')
const json = require('./json-edit.js')
const PACKAGE = require('../package.json')

const CLI = path.join(__dirname, 'cli.js')
/** npm's npx cache: <cache>/_npx/<hash>/node_modules/<package>; npm may prune it at any time. */
const NPX_CACHE = /[\\/]_npx[\\/][^\\/]+[\\/]node_modules[\\/]/

/**
 * How a wrapped entry starts this proxy: { command, args } before the mark. From npx's cache,
 * npx with this very version (what ran `install` is what the entry runs); else this bin by its
 * absolute path, with `node` (or, when the upstream's command is itself an absolute path, the
 * Node that runs `install`).
 */
function launcher(entry, cli = CLI) {
  if (NPX_CACHE.test(cli)) return { command: 'npx', args: ['-y', `${PACKAGE.name}@${PACKAGE.version}`] }
  return { command: nodeCommand(entry), args: [cli] }
}
const CLIENTS = ['claude', 'cursor']
/** What a browser MCP server's command line contains; others are wrapped only when named. */
const BROWSER_SERVERS = [/(^|[\s/@])chrome-devtools-mcp(@|\s|$|\/)/, /@playwright\/mcp(@|\s|$|\/)/]

const HELP = `mcp-snapshot-filter install — run an MCP server you already configured through the proxy

Usage:
  mcp-snapshot-filter install   [--client claude|cursor] [--project DIR] [--dry-run] [NAME]
  mcp-snapshot-filter uninstall [--client claude|cursor] [--project DIR] [--dry-run] [NAME]

install rewrites the stdio entries of chrome-devtools-mcp and Playwright MCP (or the one
named NAME, whatever it runs) so that the client starts them through the proxy:
${NPX_CACHE.test(CLI) ? `  "command": "npx", "args": ["-y", "${PACKAGE.name}@${PACKAGE.version}", "${INSTALL_MARK}", "--", <the original command and args>]
(run from npx's cache, which npm may prune: the entry names this version, not this path)` : `  "command": "node", "args": ["${CLI}", "${INSTALL_MARK}", "--", <the original command and args>]`}
uninstall puts the original command back, in the entries that carry ${INSTALL_MARK} only (an
entry you wrapped by hand is yours). Files (both clients when --client is not given):
  claude  ~/.claude.json (the top-level "mcpServers" and every project's) and DIR/.mcp.json
  cursor  ~/.cursor/mcp.json and DIR/.cursor/mcp.json
(DIR: --project, default: the current directory)
Before a file changes it is copied to FILE.bak-mcp-snapshot-filter-<time>. A file that is
not valid JSON, or an entry that is not a stdio command, is left alone with a message.
Restart the client (quit Claude Code first: it rewrites ~/.claude.json while it runs).
For chrome-devtools-mcp, ${STRUCTURED_FLAG} in the entry's args makes it send each
snapshot also as an exact tree, which the proxy reads instead of the text; install says so
for an entry without it (add it by hand: uninstall then keeps it).
${NPX_CACHE.test(CLI) ? 'npx fetches that version again whenever its cache lost it.' : 'The entry points at this copy of the package: moving or deleting it breaks the entry.'}

Options:
  --client claude|cursor   Only this client's files.
  --project DIR            The project whose .mcp.json and .cursor/mcp.json to change (default: cwd).
  --dry-run                Print the changes, write nothing.
  -h, --help               Show this help and exit.

The rewrite changes only the "command" and "args" of the entries it wraps: every other byte of
the file stays as it was (numbers, escapes, key order, duplicate keys, bytes that are not UTF-8),
and the backup is the file's bytes as read. uninstall keeps only its own backup of each file it
restores, removing the older FILE.bak-mcp-snapshot-filter-* copies.

Exit status: 0 when an entry changed (or would, with --dry-run) or every entry found already
runs through the proxy, 1 when none did or a file could not be read, 2 on a usage error.
`

function parseInstallArgs(argv) {
  const [action, ...rest] = argv
  const opts = { action, clients: CLIENTS, project: process.cwd(), dryRun: false, name: null, help: false }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    const [flag, inline] = arg.startsWith('--') ? arg.split(/=(.*)/s) : [arg]
    const value = () => {
      const v = inline ?? rest[++i]
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`)
      return v
    }
    if (arg === '-h' || arg === '--help') opts.help = true
    else if (arg === '--dry-run') opts.dryRun = true
    else if (flag === '--client') {
      const client = value()
      if (!CLIENTS.includes(client)) throw new UsageError(`invalid value ${JSON.stringify(client)} for --client: expected claude or cursor`)
      opts.clients = [client]
    } else if (flag === '--project') opts.project = path.resolve(value())
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${flag} (see ${action} --help)`)
    else if (opts.name !== null) throw new UsageError(`one NAME only (got ${JSON.stringify(opts.name)} and ${JSON.stringify(arg)})`)
    else opts.name = arg
  }
  return opts
}

/** The config files of the chosen clients: [{ client, file, servers(doc) -> [{ scope, map }] }]. */
function configFiles(clients, home, project) {
  const files = []
  if (clients.includes('claude')) {
    files.push({
      client: 'claude',
      file: path.join(home, '.claude.json'),
      scopes(root) {
        const out = [{ scope: 'top-level', holder: root }]
        const projects = json.member(root, 'projects')?.value
        if (projects?.type === 'object') {
          for (const [dir, p] of entries(projects)) if (p.type === 'object') out.push({ scope: `project ${dir}`, holder: p })
        }
        return out
      },
    })
    // `claude mcp add --scope project` writes the project's own .mcp.json (shared in its repo).
    files.push({ client: 'claude', file: path.join(project, '.mcp.json'), scopes: (doc) => [{ scope: 'mcpServers', holder: doc }] })
  }
  if (clients.includes('cursor')) {
    const scopes = (doc) => [{ scope: 'mcpServers', holder: doc }]
    files.push({ client: 'cursor', file: path.join(home, '.cursor', 'mcp.json'), scopes })
    const local = path.join(project, '.cursor', 'mcp.json')
    if (local !== path.join(home, '.cursor', 'mcp.json')) files.push({ client: 'cursor', file: local, scopes })
  }
  return files
}

/** An object node's members as JSON.parse sees them: each key once, in first-seen order, with its last value. */
function entries(node) {
  const byKey = new Map()
  for (const m of node.members) byKey.set(m.key, m.value)
  return [...byKey]
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

function isStringArray(v) {
  return Array.isArray(v) && v.every((a) => typeof a === 'string')
}

/** The wrapped form's `--` position, or -1 when the entry does not run this proxy. */
function proxySeparator(entry) {
  if (!isStringArray(entry.args)) return -1
  const first = entry.args[0] ?? ''
  // This bin (or another copy of it, maybe moved since), the global bin, or `npx mcp-snapshot-filter[@version]`.
  const runsProxy =
    first === CLI || (/mcp-snapshot-filter/.test(first) && /[\\/]bin[\\/]cli\.js$/.test(first)) || entry.command === 'mcp-snapshot-filter' || entry.args.some((a) => /^mcp-snapshot-filter(@[^\s]*)?$/.test(a))
  if (!runsProxy) return -1
  return entry.args.indexOf('--')
}

/** How the entry names node: `node` when the upstream already relies on PATH (npx, …), else this very node. */
function nodeCommand(entry) {
  const bare = !entry.command.includes('/') && !entry.command.includes('\\')
  return bare ? 'node' : process.execPath
}

/** The change to one entry, or a reason it is left alone: { after } | { skip }. */
function planEntry(action, entry, named) {
  if (!isObject(entry)) return { skip: 'not an object' }
  // Unless named, only browser servers are looked at (and reported).
  const words = [entry.command, ...(Array.isArray(entry.args) ? entry.args : []), entry.url].filter((w) => typeof w === 'string').join(' ')
  if (!named && action === 'install' && !BROWSER_SERVERS.some((re) => re.test(words))) return { skip: null }
  if (entry.url !== undefined || (entry.type !== undefined && entry.type !== 'stdio')) return { skip: `not a stdio server (type ${JSON.stringify(entry.type ?? 'url')}): only stdio servers can run through the proxy` }
  if (typeof entry.command !== 'string' || entry.command === '') return { skip: 'no "command" string' }
  if (entry.args !== undefined && !isStringArray(entry.args)) return { skip: '"args" is not an array of strings' }
  const args = entry.args ?? []
  const sep = proxySeparator(entry)
  if (action === 'install') {
    if (sep !== -1 || entry.command === 'mcp-snapshot-filter') return { skip: 'already runs through mcp-snapshot-filter', already: true }
    const run = launcher(entry)
    return { after: { ...entry, command: run.command, args: [...run.args, INSTALL_MARK, '--', entry.command, ...args] } }
  }
  if (sep === -1) return named ? { skip: 'does not run through mcp-snapshot-filter' } : { skip: null }
  if (!entry.args.slice(0, sep).includes(INSTALL_MARK)) return { skip: `runs through mcp-snapshot-filter, but install did not write it (no ${INSTALL_MARK} before "--"): yours to change` }
  const original = entry.args.slice(sep + 1)
  if (original.length === 0) return { skip: 'nothing after "--" to restore' }
  return { after: { ...entry, command: original[0], args: original.slice(1) } }
}

/** For a chrome-devtools-mcp entry without the flag: what adding it gives (the snapshot as an exact tree). */
function structuredHint(entry) {
  const args = entry.args ?? []
  if (!BROWSER_SERVERS[0].test([entry.command, ...args].join(' ')) || args.includes(STRUCTURED_FLAG)) return null
  return `tip: add ${STRUCTURED_FLAG} after chrome-devtools-mcp in its args: the proxy then reads each snapshot from an exact tree instead of the text`
}

function commandLine(entry) {
  return [entry.command, ...(entry.args ?? [])].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ')
}

/**
 * Reads and plans one file: { file, client, changes: [{ scope, name, before, after, edits }],
 * notes, already, error, bytes }.
 */
function planFile(action, spec, name) {
  const out = { ...spec, changes: [], notes: [], already: 0, error: null, bytes: null, exists: true }
  try {
    out.bytes = fs.readFileSync(spec.file)
  } catch (err) {
    if (err.code === 'ENOENT') out.exists = false
    else out.error = `cannot read: ${err.code ?? err.message}`
    return out
  }
  let root
  try {
    root = json.parse(out.bytes)
  } catch (err) {
    if (!(err instanceof json.JsonSyntaxError)) throw err
    out.error = `not valid JSON (${err.message}): left unchanged; fix or edit it by hand`
    return out
  }
  if (root.type !== 'object') {
    out.error = 'not a JSON object: left unchanged'
    return out
  }
  for (const { scope, holder } of spec.scopes(root)) {
    const servers = json.member(holder, 'mcpServers')?.value
    if (servers === undefined) continue
    if (servers.type !== 'object') {
      out.notes.push(`${scope}: "mcpServers" is not an object: left unchanged`)
      continue
    }
    for (const [server, node] of entries(servers)) {
      if (name !== null && server !== name) continue
      const entry = json.plain(out.bytes, node)
      const plan = planEntry(action, entry, name !== null)
      if (plan.after) out.changes.push({ scope, name: server, before: entry, after: plan.after, edits: entryEdits(action, out.bytes, node, plan.after), hint: action === 'install' ? structuredHint(entry) : null })
      else if (plan.skip) {
        if (plan.already) out.already++
        out.notes.push(`${scope} "${server}": ${plan.skip}: left unchanged`)
      }
    }
  }
  return out
}

/**
 * The byte edits that turn one entry into `after`: its "command" and "args" values replaced
 * (an "args" added after "command" when it had none); the original command's own strings go
 * into the new array as the bytes they were.
 */
function entryEdits(action, buf, node, after) {
  const raw = (n) => buf.subarray(n.start, n.end)
  const command = json.member(node, 'command')
  const args = json.member(node, 'args')
  const argItems = args?.value.items ?? []
  let commandText
  let items
  if (action === 'install') {
    commandText = Buffer.from(JSON.stringify(after.command))
    const ours = after.args.slice(0, after.args.indexOf('--') + 1)
    items = [...ours.map((a) => Buffer.from(JSON.stringify(a))), raw(command.value), ...argItems.map(raw)]
  } else {
    const sep = json.plain(buf, args.value).indexOf('--')
    commandText = raw(argItems[sep + 1])
    items = argItems.slice(sep + 2).map(raw)
  }
  const argsText = arrayText(buf, args?.value, items)
  const edits = [{ start: command.value.start, end: command.value.end, text: commandText }]
  if (args) edits.push({ start: args.value.start, end: args.value.end, text: argsText })
  else edits.push({ start: command.value.end, end: command.value.end, text: Buffer.concat([Buffer.from(', "args": '), argsText]) })
  return edits
}

/**
 * An array of the given item bytes, laid out as the array `like` was (its whitespace after
 * `[`, between items and before `]`), so that install then uninstall gives back the file's
 * own bytes, pretty-printed or not.
 */
function arrayText(buf, like, items) {
  if (items.length === 0) return Buffer.from('[]')
  let open = ''
  let sep = ', '
  let close = ''
  if (like !== undefined && like.items.length > 0) {
    open = buf.toString('latin1', like.start + 1, like.items[0].start)
    close = buf.toString('latin1', like.items.at(-1).end, like.end - 1)
    if (like.items.length > 1) sep = buf.toString('latin1', like.items[0].end, like.items[1].start)
    else if (open.includes('\n')) sep = `,${open}`
  }
  const parts = [Buffer.from(`[${open}`)]
  items.forEach((item, i) => parts.push(...(i === 0 ? [] : [Buffer.from(sep)]), item))
  parts.push(Buffer.from(`${close}]`))
  return Buffer.concat(parts)
}

function timestamp(date = new Date()) {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')
}

const BACKUP_TAG = '.bak-mcp-snapshot-filter-'

/** The rewritten bytes, checked: they parse, and each changed entry now reads as planned. */
function rewritten(plan) {
  const bytes = json.applyEdits(plan.bytes, plan.changes.flatMap((c) => c.edits))
  const root = json.parse(bytes)
  for (const c of plan.changes) {
    const found = plan.scopes(root).map(({ holder }) => json.member(json.member(holder, 'mcpServers')?.value, c.name)?.value)
    const now = found.map((n) => n && json.plain(bytes, n)).find((e) => e && e.command === c.after.command && JSON.stringify(e.args) === JSON.stringify(c.after.args))
    if (!now) throw new Error(`the rewrite of "${c.name}" did not read back as planned`)
  }
  return bytes
}

/** Backup copy (exclusive create, the file's own mode), then an atomic replace of the real file. */
function writeFile(plan) {
  const real = fs.realpathSync(plan.file) // a symlinked config (dotfiles) stays a symlink
  const { mode } = fs.statSync(real)
  const text = rewritten(plan)
  let backup = `${plan.file}${BACKUP_TAG}${timestamp()}`
  for (let n = 1; fs.existsSync(backup); n++) backup = `${plan.file}${BACKUP_TAG}${timestamp()}-${n}`
  fs.writeFileSync(backup, plan.bytes, { flag: 'wx', mode: mode & 0o777 })
  const tmp = path.join(path.dirname(real), `.${path.basename(real)}.mcp-snapshot-filter-${process.pid}.tmp`)
  fs.writeFileSync(tmp, text, { flag: 'wx', mode: mode & 0o777 })
  try {
    fs.renameSync(tmp, real)
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    throw err
  }
  return backup
}

/** Removes the file's older backups (ours by name only), keeping `keep`; returns how many went. */
function pruneBackups(file, keep) {
  const dir = path.dirname(file)
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const ours = new RegExp(`^${escape(path.basename(file) + BACKUP_TAG)}\\d{8}T\\d{6}Z(-\\d+)?$`)
  let removed = 0
  for (const name of fs.readdirSync(dir)) {
    const full = path.join(dir, name)
    if (name === path.basename(keep) || !ours.test(name)) continue
    try {
      if (!fs.lstatSync(full).isFile()) continue
      fs.rmSync(full)
      removed++
    } catch {
      // gone already, or not ours to remove: the backup stays
    }
  }
  return removed
}

/** Entry point; returns the exit code. */
function main(argv, { stdout = process.stdout, stderr = process.stderr, home = os.homedir() } = {}) {
  let opts
  try {
    opts = parseInstallArgs(argv)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    stderr.write(`mcp-snapshot-filter ${argv[0]}: error: ${err.message}\n`)
    return 2
  }
  if (opts.help) {
    stdout.write(HELP)
    return 0
  }
  const say = (line) => stdout.write(`${line}\n`)
  const plans = configFiles(opts.clients, home, opts.project).map((spec) => planFile(opts.action, spec, opts.name))
  let changed = 0
  let failed = false
  for (const plan of plans) {
    if (!plan.exists) continue
    if (plan.error) {
      stderr.write(`mcp-snapshot-filter ${opts.action}: ${plan.file}: ${plan.error}\n`)
      failed = true
      continue
    }
    for (const note of plan.notes) say(`${plan.file}: ${note}`)
    if (plan.changes.length === 0) continue
    for (const c of plan.changes) {
      say(`${plan.file}: ${c.scope} "${c.name}"${opts.dryRun ? ' (dry run, not written)' : ''}`)
      say(`  - ${commandLine(c.before)}`)
      say(`  + ${commandLine(c.after)}`)
      if (c.hint) say(`  ${c.hint}`)
    }
    changed += plan.changes.length
    if (opts.dryRun) continue
    try {
      const backup = writeFile(plan)
      const pruned = opts.action === 'uninstall' ? pruneBackups(plan.file, backup) : 0
      say(`  written; the previous file is kept as ${backup}${pruned > 0 ? ` (${pruned} older backup${pruned === 1 ? '' : 's'} of it removed)` : ''}`)
    } catch (err) {
      stderr.write(`mcp-snapshot-filter ${opts.action}: cannot write ${plan.file}: ${err.code ?? err.message}\n`)
      failed = true
    }
  }
  const already = plans.reduce((n, p) => n + p.already, 0)
  if (changed === 0 && already > 0 && !failed) return 0 // each one said so above
  if (changed === 0) {
    const looked = plans.map((p) => `${p.file}${p.exists ? '' : ' (absent)'}`).join(', ')
    const what = opts.name !== null ? `no entry named ${JSON.stringify(opts.name)} to ${opts.action === 'install' ? 'wrap' : 'restore'}` : opts.action === 'install' ? 'no chrome-devtools-mcp or Playwright MCP stdio entry to wrap (name another server: install NAME)' : 'no entry running through mcp-snapshot-filter'
    stderr.write(`mcp-snapshot-filter ${opts.action}: ${what} in ${looked}\n`)
    return 1
  }
  if (!opts.dryRun && !failed) say(`Restart ${opts.clients.length === 1 ? (opts.clients[0] === 'claude' ? 'Claude Code' : 'Cursor') : 'the client'} to use the change.`)
  return failed ? 1 : 0
}

module.exports = { main, parseInstallArgs, planEntry, launcher, HELP, CLI }
