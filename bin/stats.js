// @ts-check
'use strict'

// `mcp-snapshot-filter stats`: what the proxy saved per day and per upstream tool, from the
// ledger the proxy appends to at the end of each session (bin/ledger.js). Sizes and counts are
// written by the native formatters, the stats line's own (crates/core/src/stats.rs).

const { UsageError } = require('./options.js')
const ledger = require('./ledger.js')

const HELP = `mcp-snapshot-filter stats — what the proxy saved, per day and per upstream tool

Usage:
  mcp-snapshot-filter stats [--days N] [--json]

Reads the ledger the proxy appends one line to at the end of each session:
  ${'$'}XDG_STATE_HOME/mcp-snapshot-filter/ledger.jsonl (default ~/.local/state/mcp-snapshot-filter/)
It holds counts only (results, bytes and estimated tokens before and after, per upstream tool
and session), never page content. The proxy's --no-ledger (or MCP_SNAPSHOT_FILTER_LEDGER=off)
turns it off; delete the file to start over.

Options:
  --days N     Only the last N days (today included).
  --json       Machine-readable output.
  -h, --help   Show this help and exit.

Columns: "results shrunk" of the results of that tool that reached the filter; "before" and
"after" the bytes of the shrunk ones; "deltas" the snapshots sent as a delta against the page
the agent already held, and the bytes that saved (inside "after" already). Tools whose results
never shrank (all under what the level cuts) are named below the table, not listed in it.
A ledger line that is not JSON or holds a field of the wrong type is left out and counted.

Sizes are decimal (1 KB = 1000 bytes). Tokens are the proxy's own estimate, which errs high
(a median 18% above o200k on the corpus).
`

function parseStatsArgs(argv) {
  /** @type {{help: boolean, json: boolean, days: number | null}} */
  const opts = { help: false, json: false, days: null }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '-h' || arg === '--help') opts.help = true
    else if (arg === '--json') opts.json = true
    else if (arg === '--days' || arg.startsWith('--days=')) {
      const value = arg === '--days' ? argv[++i] : arg.slice('--days='.length)
      if (!/^[1-9]\d*$/.test(value ?? '')) throw new UsageError(`--days needs a whole number of days, got ${JSON.stringify(value ?? '')}`)
      opts.days = Number(value)
    } else throw new UsageError(`unknown argument ${arg} (see stats --help)`)
  }
  return opts
}

const empty = () => ({ sessions: 0, results: 0, shrunk: 0, bytesIn: 0, bytesOut: 0, tokensIn: 0, tokensOut: 0, deltas: 0, deltaBytesSaved: 0 })

function add(into, t) {
  into.results += t.results || 0
  into.shrunk += t.shrunk || 0
  into.bytesIn += t.bytesIn || 0
  into.bytesOut += t.bytesOut || 0
  into.tokensIn += t.tokensIn || 0
  into.tokensOut += t.tokensOut || 0
  into.deltas += t.deltas || 0
  into.deltaBytesSaved += t.deltaBytesSaved || 0
}

/**
 * Per-day and per-(upstream, tool) totals of the entries since `firstDay` (inclusive).
 * @param {string | null} [firstDay]
 */
function summarize(entries, firstDay = null) {
  const days = new Map()
  const tools = new Map()
  const total = empty()
  for (const e of entries) {
    if (firstDay && e.day < firstDay) continue
    const day = days.get(e.day) ?? empty()
    days.set(e.day, day)
    day.sessions++
    total.sessions++
    for (const [tool, t] of Object.entries(e.tools)) {
      const key = `${e.upstream ?? 'upstream'}\u0000${tool}`
      const row = tools.get(key) ?? { upstream: e.upstream ?? 'upstream', tool, ...empty() }
      tools.set(key, row)
      // Sessions in which the tool had results (an entry names each tool once).
      row.sessions++
      add(day, t)
      add(row, t)
      add(total, t)
    }
  }
  return {
    days: [...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, t]) => ({ day, ...t })),
    tools: [...tools.values()].sort((a, b) => b.bytesIn - b.bytesOut - (a.bytesIn - a.bytesOut) || a.tool.localeCompare(b.tool)),
    total,
  }
}

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells) => `| ${cells.map((c, i) => (i === 0 || (head[i] === 'tool' && i === 1) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (i === 0 || (head[i] === 'tool' && i === 1) ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`
  return [line(head), rule, ...rows.map(line)].join('\n')
}

function figures(fmt, t) {
  const pct = t.bytesIn === 0 ? '—' : `−${Math.round(((t.bytesIn - t.bytesOut) * 100) / t.bytesIn)}%`
  const deltas = t.deltas === 0 ? '—' : `${t.deltas}: ${fmt.formatBytes(t.deltaBytesSaved)}`
  return [`${t.shrunk} of ${t.results}`, fmt.formatBytes(t.bytesIn), fmt.formatBytes(t.bytesOut), pct, fmt.formatCount(Math.max(0, t.tokensIn - t.tokensOut)), deltas]
}

const FIGURE_HEAD = ['results shrunk', 'before', 'after', 'saved', '~tokens saved', 'deltas']

/** The table report; `fmt` holds the native formatBytes and formatCount. */
function formatReport(fmt, file, summary, bad) {
  const { days, total } = summary
  const tools = summary.tools.filter((t) => t.shrunk > 0)
  const never = summary.tools.filter((t) => t.shrunk === 0)
  const out = [`Savings recorded in ${file}: ${total.sessions} session${total.sessions === 1 ? '' : 's'}${days.length ? `, ${days[0].day} to ${days.at(-1).day}` : ''}.`]
  if (bad > 0) out.push(`(${bad} line${bad === 1 ? '' : 's'} of the file ${bad === 1 ? 'is' : 'are'} not a ledger entry (not JSON, or a field of the wrong type) and ${bad === 1 ? 'was' : 'were'} left out.)`)
  out.push('"before"/"after": the shrunk results only; "deltas": snapshots sent as a delta, and the bytes that saved (inside "after"). Sizes decimal (1 KB = 1000 bytes); tokens estimated, erring high.', '')
  out.push(table(['day', 'sessions', ...FIGURE_HEAD], [...days.map((d) => [d.day, String(d.sessions), ...figures(fmt, d)]), ['**total**', String(total.sessions), ...figures(fmt, total)]]))
  if (tools.length > 0) out.push('', table(['upstream', 'tool', ...FIGURE_HEAD], tools.map((t) => [t.upstream, t.tool, ...figures(fmt, t)])))
  if (never.length > 0) {
    const names = never.map((t) => `${t.upstream} ${t.tool} (${t.results} result${t.results === 1 ? '' : 's'})`).join(', ')
    out.push('', `Never shrunk, so not listed: ${names}. Their results were all under what the level cuts (short lists, small script output) and went out as they came.`)
  }
  return `${out.join('\n')}\n`
}

/** Entry point; returns the exit code. */
function main(argv, { stdout = process.stdout, stderr = process.stderr, env = process.env, now = new Date() } = {}) {
  let opts
  try {
    opts = parseStatsArgs(argv)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    stderr.write(`mcp-snapshot-filter stats: error: ${err.message}\n`)
    return 2
  }
  if (opts.help) {
    stdout.write(HELP)
    return 0
  }
  const file = ledger.ledgerPath(env)
  let data
  try {
    data = ledger.read(file)
  } catch (err) {
    stderr.write(`mcp-snapshot-filter stats: cannot read ${file}: ${err.code ?? err.message}\n`)
    return 1
  }
  let firstDay = null
  if (opts.days !== null) {
    const start = new Date(now)
    start.setDate(start.getDate() - (opts.days - 1))
    firstDay = ledger.localDay(start)
  }
  const summary = summarize(data?.entries ?? [], firstDay)
  if (opts.json) {
    stdout.write(`${JSON.stringify({ file, exists: data !== null, unreadableLines: data?.bad ?? 0, ...summary }, null, 2)}\n`)
    return 0
  }
  if (data === null || summary.total.sessions === 0) {
    const why = data === null ? `no ledger yet at ${file}` : `nothing recorded${firstDay ? ` since ${firstDay}` : ''} in ${file}`
    stdout.write(`${why}: the proxy appends one line there at the end of each session that filtered a result (unless run with --no-ledger or MCP_SNAPSHOT_FILTER_LEDGER=off).\n`)
    return 0
  }
  const fmt = require('./native.js').tryLoadNative((line) => stderr.write(`mcp-snapshot-filter stats: ${line}\n`))
  if (!fmt) return 1
  stdout.write(formatReport(fmt, file, summary, data.bad))
  return 0
}

module.exports = { main, summarize, parseStatsArgs, HELP }
