#!/usr/bin/env node
// @ts-check
'use strict'

const { parseArgs, UsageError, HELP, SUBCOMMANDS } = require('./options.js')
const { log } = require('./log.js')
const { loadNative } = require('./native.js')

/**
 * The native session's configuration from the parsed options.
 * @returns {import('../index').SessionConfig}
 */
function sessionConfig(options, { dropStructuredContent = false } = {}) {
  /** @type {import('../index').SessionConfig} */
  const config = {
    filter: { level: options['filter-level'], maxTokens: options['max-tokens'], maxChars: options['max-chars'] },
    stats: options.stats,
    compactSchemas: options['compact-schemas'],
  }
  // The proxy asked the default upstream for structuredContent; the client did not.
  if (dropStructuredContent) config.dropStructuredContent = true
  if (options['describe-level'] !== undefined) config.describeLevel = options['describe-level']
  if (options['proxy-tools'] !== undefined) config.proxyTools = options['proxy-tools']
  config.snapshotDeltas = options['snapshot-deltas'] === 'on'
  config.snapshotCacheBytes = Math.min(options['snapshot-cache-bytes'], 2 ** 32 - 1)
  if (options['raw-snapshots-dir'] !== undefined) config.rawSnapshotsDir = prepareDir(options['raw-snapshots-dir'])
  return config
}

/** The raw snapshots directory, checked and created (bin/raw-dir.js). */
function prepareDir(dir) {
  try {
    return require('./raw-dir.js').prepareRawSnapshotsDir(dir)
  } catch (err) {
    throw new UsageError(`--raw-snapshots-dir: ${err.message}`)
  }
}

/** What the ledger names the upstream by: its command, or the remote URL's host (never its path, query or credentials). */
function ledgerUpstream(parsed, remote) {
  if (!remote) return { command: parsed.command, args: parsed.args }
  let host = 'remote'
  try {
    host = new URL(parsed.options['upstream-url']).hostname
  } catch {
    // fromOptions already refused a bad URL; the label stays generic
  }
  return { command: host, args: [] }
}

async function main(argv) {
  /** @type {import('./options.js').InfoArgs | import('./options.js').ProxyArgs} */
  let read
  try {
    read = parseArgs(argv)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    log(`error: ${err.message}`)
    process.exitCode = 2
    return
  }
  if (read.mode === 'help') {
    process.stdout.write(HELP)
    return
  }
  if (read.mode === 'version') {
    process.stdout.write(`${require('../package.json').version}\n`)
    return
  }
  const parsed = read
  for (const warning of parsed.warnings) log(`warning: ${warning}`)

  const native = loadNative(log)
  let config
  let remote = null
  try {
    config = sessionConfig(parsed.options, parsed)
    // What the options ask for that the session will not do (the core decides: config.rs).
    for (const warning of native.sessionWarnings(config)) log(`warning: ${warning}`)
    if (parsed.options['upstream-url'] !== undefined) remote = require('./upstream-http.js').fromOptions(parsed.options, UsageError)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    log(`error: ${err.message}`)
    process.exitCode = 2
    return
  }
  const { Proxy } = require('./proxy.js')
  /** A Proxy with a FilterSession of its own (one per client in serve mode). */
  const makeProxy = (io = {}) => {
    const session = new native.FilterSession(config)
    return new Proxy({
      command: parsed.command,
      args: parsed.args,
      session,
      upstream: remote,
      ...io,
      // The session's counts go to the ledger (`stats`) once the proxy is done, before it exits.
      exit: (code) => {
        if (parsed.options.ledger) require('./ledger.js').recordSession({ session, level: parsed.options['filter-level'], ...ledgerUpstream(parsed, remote), log })
        ;(io.exit ?? process.exit)(code)
      },
      filtering: session.filtering,
      // A dead upstream command is restarted (bin/restart.js); a remote one reconnects itself.
      // (In serve mode each Proxy gets a view of the shared upstream, which it never restarts.)
      restart: { max: parsed.options['upstream-restarts'], windowMs: parsed.options['upstream-restart-window'] * 1000, restorePages: parsed.options['restore-pages'] },
      // The calls whose answer may carry a page snapshot, which expand_snapshot and
      // search_snapshot wait for (crates/core/src/proxy_tools.rs decides).
      returnsSnapshot: (tool, argumentsJson) => native.returnsSnapshot(tool, argumentsJson),
      // The proxy's own tools (expand_snapshot, search_snapshot, read_result) are answered from the session.
      localTools: {
        has: (name) => session.isProxyTool(name),
        readsSnapshots: (name) => native.readsSnapshots(name),
        // In the upstream's protocol era, for the client the request's _meta names.
        answer: (name, argumentsJson, metaJson) => session.answerProxyTool(name, argumentsJson, metaJson),
      },
    })
  }
  if (parsed.options.port !== undefined) return serveHttp(parsed, remote, makeProxy)
  const proxy = makeProxy()
  process.once('SIGINT', () => proxy.shutdown(0, 'SIGINT'))
  process.once('SIGTERM', () => proxy.shutdown(0, 'SIGTERM'))
  await proxy.start()
}

/** Serve mode: one upstream, a Proxy per HTTP client session (bin/serve-http.js). */
async function serveHttp(parsed, remote, makeProxy) {
  const { StdioUpstream } = require('./upstream-stdio.js')
  const upstream = remote ?? new StdioUpstream({ command: /** @type {string} */ (parsed.command), args: parsed.args })
  const o = parsed.options
  let served
  try {
    served = await require('./serve-http.js').serve({
      upstream,
      makeProxy,
      port: o.port,
      host: o.host,
      allowedOrigins: o['allowed-origin'],
      token: o['auth-token'],
      idleSeconds: o['session-idle-seconds'],
      exit: (code) => process.exit(code),
    })
  } catch (err) {
    log(`cannot serve: ${err.message}`)
    await upstream.close().catch(() => {})
    process.exit(1)
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      log(`shutting down: ${signal}`)
      served.close(0)
    })
  }
}

// Subcommands, not upstreams: an upstream executable of one of these names needs `-- NAME`.
// The names are options.js' SUBCOMMANDS (which also tells a typo of one from an upstream).
const RUN = {
  measure: () => require('./measure.js').main,
  stats: () => require('./stats.js').main,
  install: () => (args) => require('./install.js').main(['install', ...args]),
  uninstall: () => (args) => require('./install.js').main(['uninstall', ...args]),
}

const argv = process.argv.slice(2)
if (SUBCOMMANDS.includes(argv[0])) {
  // `measure | head` closes stdout early: that is not an error worth a stack trace.
  process.stdout.on('error', (err) => {
    if (err.code !== 'EPIPE') throw err
  })
  process.exitCode = RUN[argv[0]]()(argv.slice(1))
} else {
  main(argv).catch((err) => {
    log(`fatal: ${err.stack ?? err}`)
    process.exit(1)
  })
}
