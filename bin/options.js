// @ts-check
'use strict'

// Command-line and environment options of the proxy. Flags win over environment variables;
// environment variables exist for MCP clients that cannot pass flags.

const LEVELS = ['off', 'light', 'moderate', 'aggressive']
const DEFAULT_UPSTREAM = ['npx', '-y', 'chrome-devtools-mcp@latest']
/**
 * Added to the default upstream unless the level is off: chrome-devtools-mcp then also gives
 * each snapshot as an exact tree (structuredContent.snapshot), which the filter reads instead
 * of the text, where page text can look like nodes. The client did not ask for it, so the proxy
 * drops structuredContent from every result (README: structuredContent).
 */
const STRUCTURED_FLAG = '--experimentalStructuredContent'

/**
 * The mark `install` writes before the `--` of an entry it wraps, so that `uninstall` restores
 * only what `install` wrote (an entry the user wrapped by hand looks the same otherwise). The
 * proxy accepts it and does nothing with it.
 */
const INSTALL_MARK = '--installed'

class UsageError extends Error {}

/** The bin's subcommands (bin/cli.js runs them); any other first word starts an upstream. */
const SUBCOMMANDS = ['measure', 'stats', 'install', 'uninstall']

/** Edit distance (adjacent swaps count one), for telling a mistyped subcommand from an upstream. */
function editDistance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  return d[a.length][b.length]
}

/** The subcommand a bare first word is a typo of (`instal`, `stat`, `meausre`), or null. */
function mistypedSubcommand(word) {
  if (word.length < 4 || /[\\/.@]/.test(word)) return null
  const lower = word.toLowerCase()
  return SUBCOMMANDS.find((s) => s === lower || editDistance(lower, s) <= 2) ?? null
}

/** Every option: flag name, env var, kind, default, help. */
const OPTIONS = [
  {
    name: 'filter-level',
    env: 'MCP_SNAPSHOT_FILTER_LEVEL',
    kind: 'choice',
    choices: LEVELS,
    default: 'moderate',
    help: 'How much to filter: off (forward unchanged), light (lossless), moderate, aggressive.',
  },
  {
    name: 'describe-level',
    env: 'MCP_SNAPSHOT_FILTER_DESCRIBE_LEVEL',
    kind: 'choice',
    choices: LEVELS,
    default: undefined,
    defaultHelp: 'the filter level',
    help: 'How much to compress descriptions in tools/list, prompts/list, resources/list.',
  },
  {
    name: 'stats',
    env: 'MCP_SNAPSHOT_FILTER_STATS',
    kind: 'choice',
    choices: ['inline', 'stderr', 'off'],
    default: 'inline',
    help: 'Where the savings line of each filtered result goes: appended to the result, stderr, or nowhere.',
  },
  {
    name: 'proxy-tools',
    env: 'MCP_SNAPSHOT_FILTER_PROXY_TOOLS',
    kind: 'flag',
    default: undefined,
    defaultHelp: 'on at moderate and aggressive, and at light under a token budget (--max-tokens); off at off',
    help: 'Add expand_snapshot, search_snapshot and read_result, answered by the proxy from the raw snapshots and cut results. --no-proxy-tools turns them off.',
  },
  {
    name: 'max-tokens',
    env: 'MCP_SNAPSHOT_FILTER_MAX_TOKENS',
    kind: 'count',
    metavar: 'N',
    default: 25000,
    help: 'Token budget of each result the client receives (estimated; stats line and markers included): over it a result gives way step by step, last cut at a line with a marker, and read_result / expand_snapshot / search_snapshot read the rest. 0: no budget. Not at --filter-level=off.',
  },
  {
    name: 'max-chars',
    env: 'MCP_SNAPSHOT_FILTER_MAX_CHARS',
    kind: 'count',
    metavar: 'N',
    default: 50000,
    help: "Character bound of each result's text the client receives (UTF-16 units, stats line and markers included), given way to as the token budget is: Claude Code writes a text result over 50,000 characters to a file and shows the model a preview. 0: no bound. None with --max-tokens=0 (no budget at all); not at --filter-level=off.",
  },
  {
    name: 'snapshot-cache-bytes',
    env: 'MCP_SNAPSHOT_FILTER_SNAPSHOT_CACHE_BYTES',
    kind: 'bytes',
    metavar: 'N',
    default: 32 * 1024 * 1024,
    defaultHelp: '32M',
    help: 'Memory for the raw snapshots the proxy tools read (latest per page, oldest evicted first).',
  },
  {
    name: 'raw-snapshots-dir',
    env: 'MCP_SNAPSHOT_FILTER_RAW_SNAPSHOTS_DIR',
    kind: 'string',
    metavar: 'DIR',
    default: undefined,
    help: 'Also write each raw snapshot to a file in DIR and name the file in the result.',
  },
  {
    name: 'snapshot-deltas',
    env: 'MCP_SNAPSHOT_FILTER_SNAPSHOT_DELTAS',
    kind: 'choice',
    choices: ['on', 'off'],
    default: 'on',
    defaultHelp: 'on (at moderate and aggressive, with the proxy tools)',
    help: 'Send a later snapshot of a page the agent already holds as a delta: what changed, in the same notation, unchanged runs as one line each; expand_snapshot without uid gives the whole page.',
  },
  {
    name: 'ledger',
    env: 'MCP_SNAPSHOT_FILTER_LEDGER',
    kind: 'flag',
    default: true,
    defaultHelp: 'on',
    help: 'At the end of the session, append what it saved (counts only, per tool) to the ledger that `mcp-snapshot-filter stats` reads. --no-ledger turns it off.',
  },
  {
    name: 'compact-schemas',
    env: 'MCP_SNAPSHOT_FILTER_COMPACT_SCHEMAS',
    kind: 'flag',
    default: false,
    help: 'At describe level aggressive only: drop JSON-schema keywords that change no validation outcome.',
  },
  {
    name: 'upstream-restarts',
    env: 'MCP_SNAPSHOT_FILTER_UPSTREAM_RESTARTS',
    kind: 'count',
    metavar: 'N',
    default: 3,
    help: 'Restart an upstream command that exits or breaks its pipe, at most N times within --upstream-restart-window (backoff 0.25 s, doubling): requests in flight get an error naming the exit, the client\'s initialize, log level and subscriptions are replayed. Past N the proxy stops trying and answers requests with the error. 0: never restart (the proxy exits with the upstream).',
  },
  {
    name: 'upstream-restart-window',
    env: 'MCP_SNAPSHOT_FILTER_UPSTREAM_RESTART_WINDOW',
    kind: 'seconds',
    metavar: 'SECONDS',
    default: 300,
    help: 'The window --upstream-restarts counts restarts in.',
  },
  {
    name: 'upstream-restart-timeout',
    env: 'MCP_SNAPSHOT_FILTER_UPSTREAM_RESTART_TIMEOUT',
    kind: 'seconds',
    metavar: 'SECONDS',
    default: 60,
    help: 'How long a restarted upstream may take to answer the replayed initialize (and each request of the replay and of reopening pages); past it the restart counts as failed, and the calls waiting on it get an error saying so. At least 1.',
  },
  {
    name: 'restore-pages',
    env: 'MCP_SNAPSHOT_FILTER_RESTORE_PAGES',
    kind: 'flag',
    default: true,
    defaultHelp: 'on',
    help: 'After a restart, reopen the pages a browser upstream (chrome-devtools-mcp, Playwright MCP) had open at their last listed URLs, the selected one selected; forms and in-page state are not restored. --no-restore-pages turns it off.',
  },
  {
    name: 'upstream-url',
    env: 'MCP_SNAPSHOT_FILTER_UPSTREAM_URL',
    kind: 'string',
    metavar: 'URL',
    default: undefined,
    help: 'A remote upstream instead of a command: MCP over Streamable HTTP (or the older HTTP+SSE) at URL.',
  },
  {
    name: 'upstream-transport',
    env: 'MCP_SNAPSHOT_FILTER_UPSTREAM_TRANSPORT',
    kind: 'choice',
    choices: ['auto', 'streamable-http', 'sse'],
    default: 'auto',
    help: 'With --upstream-url: auto tries Streamable HTTP and falls back to HTTP+SSE.',
  },
  {
    name: 'header',
    env: 'MCP_SNAPSHOT_FILTER_HEADERS',
    kind: 'list',
    metavar: "'NAME: VALUE'",
    default: [],
    defaultHelp: 'none',
    help: 'With --upstream-url: an HTTP header for every request (repeatable; one per line in the variable). ${VAR} in VALUE is the environment variable VAR. Never logged.',
  },
  {
    name: 'upstream-retry-seconds',
    env: 'MCP_SNAPSHOT_FILTER_UPSTREAM_RETRY_SECONDS',
    kind: 'seconds',
    metavar: 'N',
    default: 30,
    help: 'With --upstream-url: how long a lost upstream is reconnected (with backoff) before requests get an error.',
  },
  {
    name: 'port',
    env: 'MCP_SNAPSHOT_FILTER_PORT',
    kind: 'port',
    metavar: 'N',
    default: undefined,
    defaultHelp: 'none: the client speaks stdio',
    help: 'Serve MCP over Streamable HTTP at http://HOST:N/mcp instead of stdio: one upstream, many clients, each with its own session and its own snapshots and deltas. 0: any free port (logged).',
  },
  {
    name: 'host',
    env: 'MCP_SNAPSHOT_FILTER_HOST',
    kind: 'string',
    metavar: 'ADDRESS',
    default: '127.0.0.1',
    help: 'With --port: the address to listen on. On a loopback address the Host header must name localhost; elsewhere use --auth-token.',
  },
  {
    name: 'allowed-origin',
    env: 'MCP_SNAPSHOT_FILTER_ALLOWED_ORIGINS',
    kind: 'list',
    metavar: 'HOSTNAME',
    default: [],
    defaultHelp: 'localhost, 127.0.0.1, [::1] and the --host',
    help: 'With --port: a hostname whose pages may call the server (an Origin header of any other is refused with 403: DNS rebinding protection; repeatable; one per line in the variable).',
  },
  {
    name: 'auth-token',
    env: 'MCP_SNAPSHOT_FILTER_AUTH_TOKEN',
    kind: 'string',
    metavar: 'TOKEN',
    default: undefined,
    help: 'With --port: every HTTP request must carry `Authorization: Bearer TOKEN` (else 401). Prefer the variable: a flag shows in the process list. Never logged.',
  },
  {
    name: 'session-idle-seconds',
    env: 'MCP_SNAPSHOT_FILTER_SESSION_IDLE_SECONDS',
    kind: 'seconds',
    metavar: 'N',
    default: 1800,
    help: 'With --port: a client session with no request for this long and no call in flight is ended and its state dropped (a client that vanished without DELETE). 0: never.',
  },
]

const HELP = `mcp-snapshot-filter — a token-saving MCP stdio proxy for browser MCP servers

Usage:
  mcp-snapshot-filter [options] [-- <upstream command> [args...]]
  mcp-snapshot-filter [options] --upstream-url URL [--header 'NAME: VALUE' ...]
  mcp-snapshot-filter --port N [--host ADDRESS] [options] [-- <upstream command> [args...]]
                                               serve clients over Streamable HTTP at /mcp
  mcp-snapshot-filter measure [FILE|DIR ...]   what the filters save (see measure --help)
  mcp-snapshot-filter stats                    what the proxy saved, per day and tool (stats --help)
  mcp-snapshot-filter install [--client claude|cursor] [NAME]
                                               run an MCP server already configured in Claude
                                               Code or Cursor through the proxy (install --help);
                                               \`uninstall\` restores it

With no upstream command it starts: ${DEFAULT_UPSTREAM.join(' ')} ${STRUCTURED_FLAG}
(the flag left out at --filter-level=off)

The proxy forwards every MCP message between the client (its stdin/stdout) and the upstream
server unchanged, except the results it knows how to shrink: accessibility snapshots, network and
console lists, large evaluate_script output (tools/call), and the prose descriptions of
tools/list, prompts/list, resources/list and resources/templates/list.

Options:
${OPTIONS.map(optionHelp).join('\n')}
  -h, --help                 Show this help and exit.
  -v, --version              Print the version and exit.
  ${INSTALL_MARK}                Written by \`install\` into the entries it wraps, so that \`uninstall\`
                             restores those only; changes nothing else.

Example (Claude Code, from a clone):
  claude mcp add chrome-devtools -- node ${require('node:path').join(__dirname, 'cli.js')} -- npx -y chrome-devtools-mcp@latest ${STRUCTURED_FLAG}
${STRUCTURED_FLAG} makes chrome-devtools-mcp send each snapshot also as
an exact tree, which the proxy reads instead of the text. On Linux with Chromium and no Google Chrome, add
--executablePath=/usr/bin/chromium --headless --isolated (and --chromeArg=--no-sandbox when the
client runs as root). "Connected" does not prove the browser starts: it starts at the first
tool call.

Logs go to stderr; stdout carries MCP messages only.
`

function optionHelp(opt) {
  const value = opt.kind === 'choice' ? `=${opt.choices.join('|')}` : opt.kind === 'flag' ? '' : `=${opt.metavar ?? 'VALUE'}`
  const name = opt.kind === 'flag' ? `[no-]${opt.name}` : opt.name
  const shown = opt.defaultHelp ?? opt.default
  const notes = [shown === undefined ? null : `default: ${shown}`, `env: ${opt.env}`].filter(Boolean).join('; ')
  return `  --${name}${value}\n${wrap(`${opt.help} (${notes})`, 6, 96)}`
}

function wrap(text, indent, width) {
  const lines = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(line)
  return lines.map((l) => `${' '.repeat(indent)}${l}`).join('\n')
}

function coerce(opt, raw, source) {
  if (opt.kind === 'choice') {
    if (!opt.choices.includes(raw)) {
      throw new UsageError(`invalid value ${JSON.stringify(raw)} for ${source}: expected one of ${opt.choices.join(', ')}`)
    }
    return raw
  }
  if (opt.kind === 'flag') {
    if (['1', 'true', 'yes', 'on', ''].includes(raw)) return true
    if (['0', 'false', 'no', 'off'].includes(raw)) return false
    throw new UsageError(`invalid value ${JSON.stringify(raw)} for ${source}: expected true or false`)
  }
  if (opt.kind === 'list') {
    return raw.split(/\r?\n/).filter((line) => line.trim() !== '')
  }
  if (opt.kind === 'seconds') {
    if (!/^\d+$/.test(raw)) throw new UsageError(`invalid value ${JSON.stringify(raw)} for ${source}: expected a whole number of seconds`)
    return Number(raw)
  }
  if (opt.kind === 'bytes') {
    const n = parseSize(raw)
    if (n === null) throw new UsageError(`invalid value ${JSON.stringify(raw)} for ${source}: expected a number of bytes (K, M and G suffixes allowed)`)
    return n
  }
  if (opt.kind === 'port') {
    if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new UsageError(`invalid value ${JSON.stringify(raw)} for ${source}: expected a port number from 0 to 65535`)
    return Number(raw)
  }
  if (opt.kind === 'count') {
    if (!/^\d+$/.test(raw) || Number(raw) > 2 ** 32 - 1) throw new UsageError(`invalid value ${JSON.stringify(raw)} for ${source}: expected a whole number from 0 to ${2 ** 32 - 1}`)
    return Number(raw)
  }
  if (raw === '') throw new UsageError(`${source} needs a value`)
  return raw
}

function parseSize(raw) {
  const m = /^(\d+)([kKmMgG]?)[bB]?$/.exec(raw)
  if (!m) return null
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase()]
  return Number(m[1]) * unit
}

/** @typedef {{mode: 'help'} | {mode: 'version'}} InfoArgs */

/**
 * @typedef {object} ProxyArgs
 * @property {'proxy'} mode
 * @property {Record<string, any>} options by option name (OPTIONS), coerced
 * @property {string | null} command the upstream command (null with --upstream-url)
 * @property {string[]} args
 * @property {string[]} warnings
 * @property {boolean} [dropStructuredContent] the proxy asked the default upstream for structuredContent
 */

/**
 * Parses argv (without node and the script), or throws UsageError.
 * @param {string[]} argv
 * @returns {InfoArgs | ProxyArgs}
 */
function parseArgs(argv, env = process.env) {
  const byName = new Map(OPTIONS.map((o) => [o.name, o]))
  /** @type {Record<string, any>} */
  const options = {}
  for (const opt of OPTIONS) {
    if (env[opt.env] !== undefined) options[opt.name] = coerce(opt, env[opt.env], `environment variable ${opt.env}`)
    else options[opt.name] = opt.default
  }
  let upstream = null
  const listFromFlags = new Set()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--') {
      upstream = argv.slice(i + 1)
      break
    }
    if (arg === '-h' || arg === '--help') return { mode: 'help' }
    if (arg === '-v' || arg === '--version') return { mode: 'version' }
    if (arg === INSTALL_MARK) continue
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      let name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      let value = eq === -1 ? undefined : arg.slice(eq + 1)
      let negated = false
      if (!byName.has(name) && name.startsWith('no-') && byName.get(name.slice(3))?.kind === 'flag') {
        name = name.slice(3)
        negated = true
      }
      const opt = byName.get(name)
      if (!opt) throw new UsageError(`unknown option ${arg.slice(0, eq === -1 ? undefined : eq)} (see --help)`)
      if (opt.kind === 'flag') {
        if (negated && value !== undefined) throw new UsageError(`--no-${name} takes no value`)
        options[name] = negated ? false : value === undefined ? true : coerce(opt, value, `--${name}`)
        continue
      }
      if (value === undefined) {
        if (i + 1 >= argv.length || argv[i + 1] === '--') throw new UsageError(`--${name} needs a value`)
        value = argv[++i]
      }
      if (opt.kind === 'list') {
        // Repeatable: each flag adds one entry (the environment's entries are replaced).
        if (value === '') throw new UsageError(`--${name} needs a value`)
        options[name] = [...(listFromFlags.has(name) ? options[name] : []), value]
        listFromFlags.add(name)
        continue
      }
      options[name] = coerce(opt, value, `--${name}`)
      continue
    }
    if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg} (see --help)`)
    // The first bare word starts the upstream command, as if '--' stood before it; a typo of a
    // subcommand would otherwise be spawned (and fail as a missing executable).
    // (bin/cli.js runs a subcommand only as the first argument.)
    const meant = mistypedSubcommand(arg)
    if (meant === arg) throw new UsageError(`${arg} is a subcommand and comes first: mcp-snapshot-filter ${arg} … (an upstream named ${arg} goes after --)`)
    if (meant !== null) throw new UsageError(`unknown command ${JSON.stringify(arg)}: did you mean \`${meant}\`? (an upstream of that name goes after --: mcp-snapshot-filter -- ${arg})`)
    upstream = argv.slice(i)
    break
  }
  if (upstream !== null && upstream.length === 0) throw new UsageError("no upstream command after '--'")
  const warnings = []
  if (options['upstream-url'] !== undefined) {
    if (upstream !== null) throw new UsageError('give either --upstream-url or an upstream command, not both')
    let url
    try {
      url = new URL(options['upstream-url'])
    } catch {
      throw new UsageError('--upstream-url is not a URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--upstream-url must be http:// or https://, not ${url.protocol}`)
    return { mode: 'proxy', options, command: null, args: [], warnings }
  }
  if (options.port === undefined) {
    for (const name of ['allowed-origin', 'auth-token']) {
      if (name === 'allowed-origin' ? options[name].length > 0 : options[name] !== undefined) warnings.push(`--${name} is ignored without --port`)
    }
    if (options.host !== '127.0.0.1') warnings.push('--host is ignored without --port')
  }
  for (const name of ['header', 'upstream-transport']) {
    const given = name === 'header' ? options[name].length > 0 : options[name] !== 'auto'
    if (given) warnings.push(`--${name} is ignored without --upstream-url`)
  }
  // The proxy asks the default upstream for the snapshot tree (not at off: nothing is read).
  const askStructured = upstream === null && options['filter-level'] !== 'off'
  const [command, ...args] = upstream ?? (askStructured ? [...DEFAULT_UPSTREAM, STRUCTURED_FLAG] : DEFAULT_UPSTREAM)
  if (args.includes('--slim')) {
    warnings.push('the upstream runs with --slim: its results carry little for this proxy to filter')
  }
  return { mode: 'proxy', options, command, args, warnings, dropStructuredContent: askStructured }
}

module.exports = { parseArgs, UsageError, HELP, INSTALL_MARK, SUBCOMMANDS, LEVELS, OPTIONS, DEFAULT_UPSTREAM, STRUCTURED_FLAG, parseSize }
