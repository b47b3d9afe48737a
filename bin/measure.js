// @ts-check
'use strict'

// `mcp-snapshot-filter measure`: runs the proxy's own native filters over saved results and
// prints what they would save. Nothing here filters: every figure comes from the native
// functions (FilterSession for tool and list results, exactly as bin/proxy.js calls them;
// filterSnapshot for bare snapshot text), so the table shows whatever the installed build does.

const fs = require('node:fs')
const path = require('node:path')

const { LEVELS, UsageError } = require('./options.js')

/** Levels shown by --all-levels (`off` saves nothing by definition). */
const ALL_LEVELS = ['light', 'moderate', 'aggressive']
const DEFAULT_LEVEL = 'moderate'
const WALKED_EXTENSIONS = new Set(['.json', '.jsonl', '.txt', '.log'])
const SAMPLES_DIR = path.join(__dirname, '..', 'samples')
// The list results the session compresses (crates/core/src/describe/mod.rs LIST_METHODS decides for the proxy):
// a recorded list is measured as one.
const LIST_METHODS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'])

const HELP = `mcp-snapshot-filter measure — what the filters save on your own saved results

Usage:
  mcp-snapshot-filter measure [FILE|DIR ...] [--level L | --all-levels] [--wide] [--json]

Runs the same native filters the proxy runs over saved MCP results and prints, per result:
bytes and tokens before and after, the saving, and how many uids were hidden behind markers.
With no FILE it measures the sample results bundled with the package (samples/).

Accepted inputs (directories are walked for *.json, *.jsonl, *.txt, *.log):
  - a corpus file: {"tool", "request": {"method", "params"}, "result", ...}
  - a bare CallToolResult ({"content": [...]}): the tool is inferred from its sections
  - a tools/list, prompts/list, resources/list or resources/templates/list result
  - a JSON-RPC response, or a log of JSON-RPC lines (requests and responses are paired by id
    to know each result's tool)
  - bare accessibility snapshot text

Options:
  --level=off|light|moderate|aggressive   Level to measure (default: ${DEFAULT_LEVEL}).
  --all-levels               Measure light, moderate and aggressive.
  --wide                     Every column (bytes too); the default table fits 100 columns.
  --json                     Print machine-readable JSON instead of the table.
  -h, --help                 Show this help and exit.

What is counted is what the model reads: the text blocks of a tool result (plus
structuredContent, if any; images are not counted), the JSON of a list result (after: the
whole list the client gets, with the proxy's expand_snapshot, search_snapshot and read_result
where the proxy adds them), the snapshot text. Tokens are o200k_base counts when the gpt-tokenizer
package is installed, otherwise the proxy's own estimate (the one its stats line uses: never
below o200k on the corpus, a median 18% above); the table header says which.
MCP_SNAPSHOT_FILTER_TOKENS=estimate forces the estimate.

"with deltas" (at moderate and aggressive): the same results through a session that sends a
later snapshot of a page the agent already holds as a delta (the proxy's default). "deltas
save" is a delta's share of the level's tokens; a snapshot the session sent whole (the first of
its page, or one after a navigation) says "full": it costs the one header line that says why.

Exit status: 0 when every file was measured, 1 when a file could not be parsed (it is
reported on stderr and skipped), 2 on a usage error or a path that does not exist.
`

// ---- options ----

function parseMeasureArgs(argv) {
  /** @type {{help: boolean, levels: string[] | null, allLevels: boolean, json: boolean, wide: boolean, paths: string[]}} */
  const opts = { help: false, levels: null, allLevels: false, json: false, wide: false, paths: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') {
      opts.paths.push(...argv.slice(i + 1))
      break
    }
    if (arg === '-h' || arg === '--help') opts.help = true
    else if (arg === '--json') opts.json = true
    else if (arg === '--wide') opts.wide = true
    else if (arg === '--all-levels') opts.allLevels = true
    else if (arg === '--level' || arg.startsWith('--level=')) {
      let value = arg === '--level' ? argv[++i] : arg.slice('--level='.length)
      if (value === undefined) throw new UsageError('--level needs a value')
      if (!LEVELS.includes(value)) {
        throw new UsageError(`invalid value ${JSON.stringify(value)} for --level: expected one of ${LEVELS.join(', ')}`)
      }
      if (opts.levels) throw new UsageError('--level given twice')
      opts.levels = [value]
    } else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg} (see measure --help)`)
    else opts.paths.push(arg)
  }
  if (opts.allLevels && opts.levels) throw new UsageError('--level and --all-levels exclude each other')
  opts.levels = opts.allLevels ? ALL_LEVELS : (opts.levels ?? [DEFAULT_LEVEL])
  return opts
}

// ---- token counting ----

/** o200k counts from gpt-tokenizer (a dev dependency), else the native estimate. */
function tokenCounter(native, env = process.env) {
  const forced = env.MCP_SNAPSHOT_FILTER_TOKENS === 'estimate'
  if (!forced) {
    try {
      // A dev dependency, resolved through its package exports (which tsc's node resolution does not read).
      // @ts-ignore
      const { countTokens } = require('gpt-tokenizer/encoding/o200k_base')
      return { name: 'o200k', description: 'o200k_base tokens (gpt-tokenizer)', exact: true, count: countTokens }
    } catch {
      // not installed (it is a dev dependency): fall through to the estimate
    }
  }
  // A registry install has no dev dependencies: say why the counts are not o200k, and how to get them.
  const why = forced
    ? 'MCP_SNAPSHOT_FILTER_TOKENS=estimate'
    : 'not o200k: gpt-tokenizer, a development dependency of this package, is not installed; `npx -p gpt-tokenizer -p mcp-snapshot-filter mcp-snapshot-filter measure`, or gpt-tokenizer installed beside the package, counts o200k'
  return {
    name: '~tokens',
    description: `estimated tokens, the proxy's own estimate (errs high: never below o200k on the corpus, a median 18% above; ${why})`,
    exact: false,
    count: (text) => native.estimateTokens(text),
  }
}

// ---- reading inputs ----

/** A file that was read but cannot be measured; `kind`: 'invalid' (broken JSON), 'unknown' (not a format this reads), 'nothing' (valid, but no result the proxy filters). */
class InputError extends Error {
  constructor(message, kind = 'unknown') {
    super(message)
    this.kind = kind
  }
}

/** Files to measure, in a stable order: [{ file, label, walked }], plus path errors. */
function collectFiles(paths) {
  /** @type {{file: string, label?: string, walked: boolean}[]} */
  const files = []
  const errors = []
  for (const given of paths) {
    let stat
    try {
      stat = fs.statSync(given)
    } catch (err) {
      errors.push({ file: given, error: `cannot read: ${err.code ?? err.message}` })
      continue
    }
    if (!stat.isDirectory()) {
      files.push({ file: given, walked: false })
      continue
    }
    const found = walk(given)
    if (found.length === 0) errors.push({ file: given, error: 'no .json, .jsonl, .txt or .log files in this directory' })
    for (const file of found) files.push({ file, walked: true })
  }
  return { files, errors }
}

/** Recursive, iterative (deep trees must not overflow), sorted; skips dot-dirs and node_modules. */
function walk(root) {
  const out = []
  const stack = [root]
  while (stack.length > 0) {
    const dir = stack.pop()
    let entries
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      out.push(dir) // reported as unreadable by the reader
      continue
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && entry.name !== 'node_modules') stack.push(full)
      } else if (WALKED_EXTENSIONS.has(path.extname(entry.name).toLowerCase())) {
        out.push(full)
      }
    }
  }
  return out.sort()
}

const SNAPSHOT_LINE = /^[ \t]*uid=\S+/m

/**
 * The tool a CallToolResult came from, told by its sections as the filters read them (the
 * native `inferTool`, crates/core/src/result/infer.rs): `unknown` when none says.
 */
function inferTool(result) {
  return require('../index.js').inferTool(textBlocks(result)) ?? 'unknown'
}

function listMethodOf(result) {
  if (Array.isArray(result?.tools)) return 'tools/list'
  if (Array.isArray(result?.prompts)) return 'prompts/list'
  if (Array.isArray(result?.resourceTemplates)) return 'resources/templates/list'
  if (Array.isArray(result?.resources)) return 'resources/list'
  return null
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/**
 * An item to measure from a result whose request is known or guessed.
 * @param {any} result
 * @param {{method?: string, tool?: string, args?: unknown, where: string}} request
 */
function resultItem(result, { method, tool, args, where }) {
  if (!isObject(result)) throw new InputError(`${where}: result is not an object`)
  if (method === 'tools/call' || (method === undefined && Array.isArray(result.content))) {
    const inferred = tool === undefined
    return {
      kind: 'result',
      tool: inferred ? inferTool(result) : tool,
      inferred,
      result,
      argsJson: args === undefined ? null : JSON.stringify(args),
    }
  }
  const list = method ?? listMethodOf(result)
  if (list && LIST_METHODS.has(list)) return { kind: 'list', tool: list, inferred: method === undefined, result }
  return null
}

/** Items of a sequence of JSON-RPC messages (a log or a batch): responses paired with requests by id. */
function itemsFromMessages(messages) {
  const requests = new Map()
  const items = []
  for (const { msg, line } of messages) {
    if (!isObject(msg)) continue
    const key = `${typeof msg.id}:${msg.id}`
    if (typeof msg.method === 'string' && 'id' in msg) {
      requests.set(key, msg)
      continue
    }
    if (!('result' in msg) || !('id' in msg)) continue
    const request = requests.get(key)
    requests.delete(key)
    const where = line === undefined ? `id ${msg.id}` : `line ${line}`
    const known = request
      ? { method: request.method, tool: request.params?.name, args: request.params?.arguments }
      : {}
    const item = isObject(msg.result) ? resultItem(msg.result, { ...known, where }) : null
    if (item) items.push({ ...item, where: line === undefined ? null : `:${line}` })
  }
  return items
}

/** Items of a parsed JSON document. */
function itemsFromJson(value) {
  if (Array.isArray(value)) return itemsFromMessages(value.map((msg) => ({ msg })))
  if (!isObject(value)) throw new InputError('JSON is neither an object nor an array')
  if (isObject(value.request) && 'result' in value) {
    // corpus format
    if (!isObject(value.result)) {
      throw new InputError(`corpus file without a result${value.jsonrpc_error ? ` (JSON-RPC error: ${JSON.stringify(value.jsonrpc_error).slice(0, 120)})` : ''}`, 'nothing')
    }
    const method = value.request.method
    const tool = value.tool ?? value.request.params?.name
    const item = resultItem(value.result, { method, tool, args: value.request.params?.arguments, where: 'result' })
    if (!item) throw new InputError(`nothing to measure: the proxy does not filter ${method} results`, 'nothing')
    return [item]
  }
  if (typeof value.jsonrpc === 'string') return itemsFromMessages([{ msg: value }])
  const item = resultItem(value, { where: 'document' })
  if (!item) throw new InputError('not a CallToolResult, a list result, a corpus file or a JSON-RPC message')
  return [item]
}

/**
 * Items of a recorded session (the JSONL of the corpus' sessions/: one `{step, tool, args,
 * result}` per line, in call order; `tool` is `tools/list` for the list), or null when the
 * lines are not that.
 */
function itemsFromSession(lines) {
  const items = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') continue
    let step
    try {
      step = JSON.parse(lines[i])
    } catch {
      return null
    }
    if (!isObject(step) || typeof step.tool !== 'string' || !('result' in step) || 'jsonrpc' in step) return null
    const where = `line ${i + 1}`
    const known = LIST_METHODS.has(step.tool) ? { method: step.tool } : { method: 'tools/call', tool: step.tool, args: step.args }
    const item = isObject(step.result) ? resultItem(step.result, { ...known, where }) : null
    if (item) items.push({ ...item, where: `:${i + 1}`, step: step.step })
  }
  return items.length > 0 ? items : null
}

/** Items of a log: one JSON-RPC message per line (text before the first `{` is ignored). */
function itemsFromLog(text) {
  const messages = []
  const lines = text.split('\n')
  const session = itemsFromSession(lines)
  if (session) return session
  for (let i = 0; i < lines.length; i++) {
    const brace = lines[i].indexOf('{')
    if (brace === -1) continue
    try {
      messages.push({ msg: JSON.parse(lines[i].slice(brace)), line: i + 1 })
    } catch {
      // not a message: logs carry other lines too
    }
  }
  if (messages.length === 0) return null
  return itemsFromMessages(messages)
}

/** Parses one file's text into the items to measure; throws InputError when it cannot. */
function parseInput(text) {
  const trimmed = text.trim()
  if (trimmed === '') throw new InputError('empty file')
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let value
    let jsonError = null
    try {
      value = JSON.parse(trimmed)
    } catch (err) {
      jsonError = err
    }
    if (!jsonError) return itemsFromJson(value)
    if (!trimmed.includes('\n')) throw new InputError(`not valid JSON: ${jsonError.message}`, 'invalid')
    const items = itemsFromLog(trimmed)
    if (items === null) throw new InputError(`not valid JSON: ${jsonError.message}`, 'invalid')
    return items
  }
  // A result's text with its snapshot section (crates/core/src/result/sections.rs reads it), or bare tree lines.
  const body = require('../index.js').snapshotBody(text)
  if (body !== null) return [{ kind: 'snapshot', tool: 'snapshot text', inferred: false, text: body }]
  if (SNAPSHOT_LINE.test(text)) return [{ kind: 'snapshot', tool: 'snapshot text', inferred: false, text }]
  const items = itemsFromLog(text)
  if (items !== null) return items
  throw new InputError('not a tool result, a JSON-RPC log or snapshot text')
}

// ---- measuring ----

/** The text the model reads from a CallToolResult. */
function textBlocks(result) {
  const parts = []
  for (const block of Array.isArray(result?.content) ? result.content : []) {
    if (block?.type === 'text' && typeof block.text === 'string') parts.push(block.text)
    else if (block?.type === 'resource' && typeof block.resource?.text === 'string') parts.push(block.resource.text)
  }
  return parts.join('\n')
}

function modelText(result) {
  const text = textBlocks(result)
  return result?.structuredContent === undefined ? text : `${text}\n${JSON.stringify(result.structuredContent)}`
}

/** Runs one item through the native filter at the session's level: { before, after, uidsHidden }. */
function runItem(native, session, level, item) {
  if (item.kind === 'snapshot') {
    const out = native.filterSnapshot(item.text, { level })
    return { before: item.text, after: out.text, uidsHidden: out.uidsHidden }
  }
  const json = JSON.stringify(item.result)
  if (item.kind === 'list') {
    const out = session.compressListResult(item.tool, json)
    return { before: json, after: out ?? json, uidsHidden: 0 }
  }
  const out = session.filterToolResult(item.tool, json, item.argsJson)
  const figures = session.lastFigures()
  const before = modelText(item.result)
  const after = out === null || out === undefined ? before : modelText(JSON.parse(out))
  return { before, after, uidsHidden: figures ? figures.uidsHidden : 0 }
}

/** How many of the tool's snapshots the session has sent as deltas so far. */
function deltasOf(session, tool) {
  return session.toolTotals().find((t) => t.tool === tool)?.deltas ?? 0
}

function percent(before, after) {
  return before === 0 ? 0 : Math.round(((before - after) / before) * 1000) / 10
}

/**
 * Measures files at the given levels. Returns { tokenizer, levels, rows, totals, errors, skipped }.
 * One FilterSession per file and level, fed in file order, as the proxy feeds one session.
 */
function measure(native, files, levels, counter) {
  const rows = []
  const errors = []
  const skipped = []
  const parsed = []
  for (const { file, label, walked } of files) {
    let items
    try {
      items = parseInput(fs.readFileSync(file, 'utf8'))
    } catch (err) {
      const reason = err instanceof InputError ? err.message : `cannot read: ${err.code ?? err.message}`
      // Unreadable files and broken JSON are failures. A file with nothing the proxy filters
      // (an initialize result), or one met while walking a directory that is not a result at
      // all (a stderr capture), is only noted.
      const kind = err instanceof InputError ? err.kind : 'unreadable'
      const noted = kind === 'nothing' || (walked && kind === 'unknown')
      ;(noted ? skipped : errors).push({ file: label, error: reason })
      continue
    }
    if (items.length === 0) {
      skipped.push({ file: label, error: 'nothing to measure: no result the proxy filters' })
      continue
    }
    parsed.push({ label, items })
  }
  for (const level of levels) {
    for (const { label, items } of parsed) {
      // As the proxy runs at that level: a tools/list row counts the whole list the client
      // gets, the proxy's own three tools included where it adds them. Snapshot deltas off here;
      // the same results through a session of the level's defaults give the with-deltas column
      // where that session sends deltas (the core decides which levels do: session.rs).
      const session = new native.FilterSession({ filter: { level }, snapshotDeltas: false })
      const defaults = new native.FilterSession({ filter: { level } })
      const deltaSession = defaults.snapshotDeltas ? defaults : null
      for (const item of items) {
        let m
        let withDelta = null
        let sentAsDelta = false
        try {
          m = runItem(native, session, level, item)
          if (deltaSession && item.kind === 'result') {
            const before = deltasOf(deltaSession, item.tool)
            withDelta = runItem(native, deltaSession, level, item).after
            sentAsDelta = deltasOf(deltaSession, item.tool) > before
          }
        } catch (err) {
          errors.push({ file: `${label}${item.where ?? ''}`, error: `filter failed: ${err.code ? `${err.code}: ` : ''}${err.message}` })
          continue
        }
        // The same input at every level: count it once.
        if (item.countedText !== m.before) {
          item.countedText = m.before
          item.countedTokens = counter.count(m.before)
        }
        const tokensBefore = item.countedTokens
        const tokensAfter = m.after === m.before ? tokensBefore : counter.count(m.after)
        const bytesBefore = Buffer.byteLength(m.before)
        const bytesAfter = m.after === m.before ? bytesBefore : Buffer.byteLength(m.after)
        const deltaAfter = withDelta ?? m.after
        const tokensDeltas = deltaAfter === m.after ? tokensAfter : counter.count(deltaAfter)
        rows.push({
          file: `${label}${item.where ?? ''}`,
          tool: item.tool,
          toolInferred: item.inferred,
          kind: item.kind,
          level,
          bytesBefore,
          bytesAfter,
          tokensBefore,
          tokensAfter,
          savedPercent: percent(tokensBefore, tokensAfter),
          bytesSavedPercent: percent(bytesBefore, bytesAfter),
          uidsHidden: m.uidsHidden,
          ...(deltaSession ? { tokensDeltas, bytesDeltas: Buffer.byteLength(deltaAfter), sentAsDelta } : {}),
        })
      }
    }
  }
  const totals = levels.map((level) => {
    const t = { level, results: 0, bytesBefore: 0, bytesAfter: 0, tokensBefore: 0, tokensAfter: 0, uidsHidden: 0 }
    let deltas = null
    for (const r of rows) {
      if (r.level !== level) continue
      t.results++
      t.bytesBefore += r.bytesBefore
      t.bytesAfter += r.bytesAfter
      t.tokensBefore += r.tokensBefore
      t.tokensAfter += r.tokensAfter
      t.uidsHidden += r.uidsHidden
      if (r.tokensDeltas !== undefined) {
        deltas ??= { tokensDeltas: 0, bytesDeltas: 0, deltasSent: 0 }
        deltas.tokensDeltas += r.tokensDeltas
        deltas.bytesDeltas += r.bytesDeltas
        if (r.sentAsDelta) deltas.deltasSent++
      }
    }
    const withDeltas = deltas ? { ...deltas, deltasSavedPercent: percent(t.tokensAfter, deltas.tokensDeltas) } : {}
    return { ...t, savedPercent: percent(t.tokensBefore, t.tokensAfter), bytesSavedPercent: percent(t.bytesBefore, t.bytesAfter), ...withDeltas }
  })
  return {
    tokenizer: { name: counter.name, description: counter.description, exact: counter.exact },
    levels,
    rows,
    totals,
    errors,
    skipped,
  }
}

// ---- output ----

/** The "deltas save" cell: a delta's saving, or "full" for a snapshot the session sent whole. */
function deltaCell(r) {
  if (r.tokensDeltas === undefined) return ''
  if (!r.sentAsDelta) return r.tokensDeltas > r.tokensAfter ? 'full' : '—'
  return `${percent(r.tokensAfter, r.tokensDeltas).toFixed(1)}%`
}

/** The directory every label starts with (`samples/`), or '' when they do not share one. */
function commonDir(labels) {
  if (labels.length === 0) return ''
  let dir = labels[0].slice(0, labels[0].lastIndexOf('/') + 1)
  while (dir && !labels.every((l) => l.startsWith(dir))) dir = dir.slice(0, dir.slice(0, -1).lastIndexOf('/') + 1)
  return dir
}

/** Shortens a label to `width` characters, keeping its start and its end (the line number). */
function elide(label, width) {
  if (label.length <= width) return label
  const tail = Math.ceil((width - 1) / 2)
  return `${label.slice(0, width - 1 - tail)}…${label.slice(label.length - tail)}`
}

/** The table: at most `maxWidth` columns unless `wide` (which adds the bytes and the uids hidden). */
function formatTable(report, { wide = false, maxWidth = 100, notes = true } = {}) {
  if (!wide && report.levels.length > 1) {
    // One narrow table per level (a level column would not fit), under one heading.
    const parts = report.levels.map((level, i) => {
      const one = { ...report, levels: [level], rows: report.rows.filter((r) => r.level === level), totals: report.totals.filter((x) => x.level === level) }
      // The notes once, after the last table (aggressive: it has every column the others have).
      return formatTable(one, { wide, maxWidth, notes: i === report.levels.length - 1 }).split('\n').slice(1).join('\n').trimEnd()
    })
    return `Levels: ${report.levels.join(', ')}. Tokens: ${report.tokenizer.description}.\n${parts.map((p, i) => `\n## ${report.levels[i]}\n${p}`).join('\n')}\n`
  }
  const multi = report.levels.length > 1
  const tok = report.tokenizer.name
  const deltas = report.rows.some((r) => r.tokensDeltas !== undefined)
  const n = (x) => x.toLocaleString('en-US')
  // The narrow table names files below their shared directory, said once above it.
  const dir = wide ? '' : commonDir(report.rows.map((r) => r.file))
  // [header, cell of a row, cell of a total, right-aligned]
  /** @type {any[][]} */
  const columns = [
    ['file', (r) => r.file.slice(dir.length), (t) => `**total** (${t.results})`, false],
    ['tool', (r) => `${r.tool}${r.toolInferred ? '*' : ''}`, () => '', false],
    ...(multi ? [['level', (r) => r.level, (t) => t.level, false]] : []),
    ...(wide ? [['bytes before', (r) => n(r.bytesBefore), (t) => n(t.bytesBefore), true], ['bytes after', (r) => n(r.bytesAfter), (t) => n(t.bytesAfter), true]] : []),
    [wide ? `${tok} before` : 'before', (r) => n(r.tokensBefore), (t) => n(t.tokensBefore), true],
    [wide ? `${tok} after` : 'after', (r) => n(r.tokensAfter), (t) => n(t.tokensAfter), true],
    ['saved', (r) => `${r.savedPercent.toFixed(1)}%`, (t) => `${t.savedPercent.toFixed(1)}%`, true],
    ...(wide ? [['uids hidden', (r) => n(r.uidsHidden), (t) => n(t.uidsHidden), true]] : []),
    ...(deltas
      ? [
          [wide ? `${tok} with deltas` : 'deltas', (r) => (r.tokensDeltas === undefined ? '' : n(r.tokensDeltas)), (t) => (t.tokensDeltas === undefined ? '' : n(t.tokensDeltas)), true],
          [wide ? 'deltas save' : 'by deltas', deltaCell, (t) => (t.tokensDeltas === undefined ? '' : t.deltasSent === 0 ? 'none sent' : `${t.deltasSavedPercent.toFixed(1)}%`), true],
        ]
      : []),
  ]
  const body = []
  for (const level of report.levels) {
    for (const r of report.rows.filter((row) => row.level === level)) body.push(columns.map(([, cell]) => cell(r)))
    const t = report.totals.find((x) => x.level === level)
    body.push(columns.map(([, , total]) => total(t)))
  }
  const widths = columns.map(([h], i) => Math.max(h.length, ...body.map((row) => row[i].length)))
  if (!wide) {
    // The file column gives way: every other column is short.
    const others = widths.slice(1).reduce((a, w) => a + w, 0) + 3 * columns.length + 1
    const room = Math.max('**total** (999)'.length, maxWidth - others)
    if (widths[0] > room) {
      widths[0] = room
      for (const row of body) row[0] = elide(row[0], room)
    }
  }
  const cell = (text, i) => (columns[i][3] ? text.padStart(widths[i]) : text.padEnd(widths[i]))
  const line = (cells) => `| ${cells.map(cell).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (columns[i][3] ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`
  const out = [`Level${multi ? 's' : ''}: ${report.levels.join(', ')}. Tokens: ${report.tokenizer.description}.`]
  if (!wide) out.push(`Token counts (${tok}) before and after the filters${dir ? `; files in ${dir}` : ''}.`)
  out.push('', line(columns.map(([h]) => h)), rule, ...body.map(line))
  if (notes && report.rows.some((r) => r.toolInferred)) out.push('', '* tool inferred from the content (no request in the file)')
  if (notes && deltas) {
    const [withName, saveName] = wide ? [`"${tok} with deltas"`, '"deltas save"'] : ['"deltas"', '"by deltas"']
    out.push(
      '',
      `${withName}: the same results through a session that sends a later snapshot of a page`,
      `as a delta (the default); ${saveName}: a delta's share of the level's ${tok}; "full": a`,
      'snapshot sent whole (the first of its page, or after a navigation), with one header line.',
    )
  }
  if (notes && !wide) out.push('', 'measure --wide adds bytes and uids hidden; --json gives every figure.')
  return `${out.join('\n')}\n`
}

function loadNative() {
  try {
    return require('../index.js')
  } catch (err) {
    // Same message as the proxy: which platform package is missing and how to fix it.
    throw new Error(require('./native.js').describeLoadFailure(err).join('\n'))
  }
}

/** Entry point; returns the exit code. */
function main(argv, { stdout = process.stdout, stderr = process.stderr, env = process.env } = {}) {
  let opts
  try {
    opts = parseMeasureArgs(argv)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    stderr.write(`mcp-snapshot-filter measure: error: ${err.message}\n`)
    return 2
  }
  if (opts.help) {
    stdout.write(HELP)
    return 0
  }
  let native
  try {
    native = loadNative()
  } catch (err) {
    stderr.write(`mcp-snapshot-filter measure: ${err.message}\n`)
    return 1
  }
  const usingSamples = opts.paths.length === 0
  // A path that is not there is a mistake in the command, like a bad option: nothing measured.
  const absent = opts.paths.filter((p) => !fs.existsSync(p))
  if (absent.length > 0) {
    for (const p of absent) stderr.write(`mcp-snapshot-filter measure: error: no such file or directory: ${p}\n`)
    return 2
  }
  const { files, errors: pathErrors } = collectFiles(usingSamples ? [SAMPLES_DIR] : opts.paths)
  const cwd = process.cwd()
  for (const f of files) {
    const rel = path.relative(usingSamples ? path.join(SAMPLES_DIR, '..') : cwd, f.file)
    f.label = rel.startsWith('..') || path.isAbsolute(rel) ? f.file : rel
  }
  const report = measure(native, files, opts.levels, tokenCounter(native, env))
  report.errors.unshift(...pathErrors)
  report.samples = usingSamples
  for (const e of report.errors) stderr.write(`mcp-snapshot-filter measure: skipped ${e.file}: ${e.error}\n`)
  for (const s of report.skipped) stderr.write(`mcp-snapshot-filter measure: ignored ${s.file}: ${s.error}\n`)
  if (opts.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`)
  else if (report.rows.length === 0) stderr.write('mcp-snapshot-filter measure: nothing measured\n')
  else {
    if (usingSamples) stdout.write('No files given: measuring the sample results bundled in samples/ (see samples/README.md).\n')
    stdout.write(formatTable(report, { wide: opts.wide }))
  }
  return report.errors.length > 0 ? 1 : 0
}

module.exports = { main, measure, parseInput, parseMeasureArgs, tokenCounter, collectFiles, modelText, inferTool, HELP, SAMPLES_DIR }
