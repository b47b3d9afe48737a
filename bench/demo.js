#!/usr/bin/env node
'use strict'

// `npm run demo`: the before/after of a real page. Starts chrome-devtools-mcp (the pinned dev
// dependency) driving headless Chromium twice, once directly and once behind the proxy, takes
// the same snapshot through both and prints sizes (bytes, o200k tokens) and the first lines of
// each. Needs a clone with dev dependencies installed and Chromium (Debian: apt-get install chromium).
//
//   npm run demo                           the bundled data-grid page, served from 127.0.0.1
//   npm run demo -- megamenu               another bundled page: grid, megamenu, noisy
//   npm run demo -- https://example.org/   any URL (this one leaves the machine)
//   npm run demo -- --level=aggressive --lines=50

const path = require('node:path')
const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js')

const { ROOT, CHROMIUM, serveDirectory, chromeDevtoolsCommand, upstreamEnv, chromiumInstalled, resultText } = require('./live-browser.js')

const BIN = path.join(ROOT, 'bin', 'cli.js')
const BUNDLED_PAGES = ['grid', 'megamenu', 'noisy']
const CALL_TIMEOUT_MS = 120_000

const USAGE = `usage: npm run demo -- [grid|megamenu|noisy|URL] [--level=off|light|moderate|aggressive] [--lines=N]`

function parseDemoArgs(argv) {
  const opts = { page: 'grid', url: null, level: 'moderate', lines: 30 }
  for (const arg of argv) {
    if (arg === '-h' || arg === '--help') return null
    const m = /^--(level|lines)=(.+)$/.exec(arg)
    if (m && m[1] === 'level') opts.level = m[2]
    else if (m) opts.lines = Number(m[2])
    else if (/^https?:\/\//.test(arg)) opts.url = arg
    else if (BUNDLED_PAGES.includes(arg)) opts.page = arg
    else throw new Error(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`)
  }
  if (!Number.isInteger(opts.lines) || opts.lines < 0) throw new Error(`--lines needs a whole number\n${USAGE}`)
  return opts
}

/** o200k token counter when gpt-tokenizer (a dev dependency) is installed, else the proxy's own estimate. */
function tokenCounter() {
  try {
    const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')
    return { label: 'o200k tokens', count: (text) => encode(text).length }
  } catch {
    const { estimateTokens } = require('../index.js')
    return { label: "tokens (the proxy's estimate, errs high; install gpt-tokenizer for o200k counts)", count: estimateTokens }
  }
}

async function connect(command, env) {
  const [cmd, ...args] = command
  const transport = new StdioClientTransport({ command: cmd, args, env, stderr: 'pipe' })
  let stderr = ''
  transport.stderr?.on('data', (d) => {
    stderr += d
  })
  const client = new Client({ name: 'mcp-snapshot-filter-demo', version: '1.0.0' }, { capabilities: {} })
  await client.connect(transport)
  return { client, stderr: () => stderr }
}

/** Navigates the selected page to `url` and returns the take_snapshot text. */
async function snapshotOf(session, url) {
  const call = async (name, args) => {
    const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
    if (result.isError) throw new Error(`${name} failed: ${resultText(result)}\n${session.stderr()}`)
    return resultText(result)
  }
  const pages = await call('list_pages', {})
  const selected = /^(\d+): .*\[selected\]$/m.exec(pages)
  const pageId = selected ? Number(selected[1]) : 1
  await call('navigate_page', { pageId, url })
  return call('take_snapshot', { pageId })
}

/** Decimal units, as the stats line and the README: 1 KB = 1000 bytes. */
function kb(bytes) {
  return bytes < 1000 ? `${bytes} B` : `${(bytes / 1000).toFixed(1)} KB`
}

function head(text, lines) {
  const all = text.split('\n')
  const shown = all.slice(0, lines).map((line) => (line.length > 160 ? `${line.slice(0, 157)}...` : line))
  if (all.length > lines) shown.push(`[... ${all.length - lines} more lines]`)
  return shown.join('\n')
}

async function main(argv) {
  const opts = parseDemoArgs(argv)
  if (!opts) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  if (!chromiumInstalled()) {
    throw new Error(`Chromium not found at ${CHROMIUM} (Debian/Ubuntu: apt-get install chromium; or set CHROMIUM_PATH)`)
  }
  // Bundled pages are served locally and the browser is kept offline; a URL given by the user
  // is fetched from wherever it lives.
  const site = opts.url ? null : await serveDirectory()
  const url = opts.url ?? `${site.origin}/app/${opts.page}.html`
  const upstream = chromeDevtoolsCommand({ offline: !opts.url })
  const env = upstreamEnv()
  const sessions = []
  try {
    process.stderr.write(`starting Chromium twice (direct, and behind mcp-snapshot-filter --filter-level=${opts.level})...\n`)
    const started = await Promise.allSettled([connect(upstream, env), connect([process.execPath, BIN, `--filter-level=${opts.level}`, '--no-ledger', '--', ...upstream], env)])
    for (const s of started) if (s.status === 'fulfilled') sessions.push(s.value)
    const failed = started.find((s) => s.status === 'rejected')
    if (failed) throw failed.reason
    const [direct, proxied] = sessions
    const [before, after] = await Promise.all([snapshotOf(direct, url), snapshotOf(proxied, url)])

    const tokens = tokenCounter()
    const row = (label, text) => `${label.padEnd(30)}${kb(Buffer.byteLength(text)).padStart(10)}${String(tokens.count(text)).padStart(10)}${String(text.split('\n').length).padStart(8)}`
    const bytesBefore = Buffer.byteLength(before)
    const bytesAfter = Buffer.byteLength(after)
    const tokensBefore = tokens.count(before)
    const tokensAfter = tokens.count(after)
    const pct = (a, b) => (b === 0 ? '0' : ((1 - a / b) * 100).toFixed(1))
    const out = [
      `take_snapshot of ${url}`,
      '',
      `${''.padEnd(30)}${'size'.padStart(10)}${'tokens'.padStart(10)}${'lines'.padStart(8)}`,
      row('direct (chrome-devtools)', before),
      row(`through the proxy (${opts.level})`, after),
      '',
      `saved: ${kb(bytesBefore - bytesAfter)} (${pct(bytesAfter, bytesBefore)}% of bytes), ${tokensBefore - tokensAfter} ${tokens.label} (${pct(tokensAfter, tokensBefore)}%)`,
      '',
      `---- before: direct, first ${opts.lines} lines ----`,
      head(before, opts.lines),
      '',
      `---- after: through mcp-snapshot-filter, first ${opts.lines} lines ----`,
      head(after, opts.lines),
      '',
    ]
    process.stdout.write(out.join('\n'))
  } finally {
    await Promise.allSettled(sessions.map((s) => s.client.close()))
    await site?.close()
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`demo: ${err.message}\n`)
  process.exit(1)
})
