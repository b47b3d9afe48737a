#!/usr/bin/env node
'use strict'

const { parseArgs, UsageError, HELP } = require('./options.js')
const { log } = require('./log.js')
const { loadNative } = require('./native.js')

/** The native session's configuration from the parsed options. */
function sessionConfig(options) {
  const config = {
    filter: { level: options['filter-level'] },
    stats: options.stats,
    compactSchemas: options['compact-schemas'],
  }
  if (options['describe-level'] !== undefined) config.describeLevel = options['describe-level']
  if (options['proxy-tools'] !== undefined) config.proxyTools = options['proxy-tools']
  if (options['filter-level'] === 'off' && options['proxy-tools']) {
    // At off results are forwarded untouched, so no snapshot is ever cached for the tools.
    log('warning: --proxy-tools is ignored at --filter-level=off')
    config.proxyTools = false
  }
  config.snapshotDeltas = options['snapshot-deltas'] === 'on'
  if (options['snapshot-deltas'] === 'on' && options['proxy-tools'] === false && ['moderate', 'aggressive'].includes(options['filter-level'])) {
    // A delta's unchanged lines are expanded through the proxy tools.
    log('warning: --snapshot-deltas needs the proxy tools: deltas are off with --no-proxy-tools')
  }
  config.snapshotCacheBytes = Math.min(options['snapshot-cache-bytes'], 2 ** 32 - 1)
  if (options['raw-snapshots-dir'] !== undefined) config.rawSnapshotsDir = prepareDir(options['raw-snapshots-dir'])
  return config
}

/** Creates the raw snapshots directory (with the user's umask) and returns its absolute path. */
function prepareDir(dir) {
  const path = require('node:path')
  const fs = require('node:fs')
  const abs = path.resolve(dir)
  try {
    fs.mkdirSync(abs, { recursive: true })
  } catch (err) {
    throw new UsageError(`cannot create --raw-snapshots-dir ${JSON.stringify(abs)}: ${err.message}`)
  }
  return abs
}

async function main(argv) {
  let parsed
  try {
    parsed = parseArgs(argv)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    log(`error: ${err.message}`)
    process.exitCode = 2
    return
  }
  if (parsed.mode === 'help') {
    process.stdout.write(HELP)
    return
  }
  if (parsed.mode === 'version') {
    process.stdout.write(`${require('../package.json').version}\n`)
    return
  }
  for (const warning of parsed.warnings) log(`warning: ${warning}`)

  const native = loadNative(log)
  let config
  try {
    config = sessionConfig(parsed.options)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    log(`error: ${err.message}`)
    process.exitCode = 2
    return
  }
  const session = new native.FilterSession(config)
  const { Proxy } = require('./proxy.js')
  const proxy = new Proxy({
    command: parsed.command,
    args: parsed.args,
    session,
    filtering: parsed.options['filter-level'] !== 'off' || session.describeLevel !== 'off',
    isFilteredTool: native.isFilteredTool,
    // The proxy's own tools (expand_snapshot, search_snapshot) are answered from the session.
    localTools: {
      has: (name) => session.isProxyTool(name),
      call: (name, args) => JSON.parse(session.callProxyTool(name, JSON.stringify(args))),
    },
  })
  process.once('SIGINT', () => proxy.shutdown(0, 'SIGINT'))
  process.once('SIGTERM', () => proxy.shutdown(0, 'SIGTERM'))
  await proxy.start()
}

const argv = process.argv.slice(2)
if (argv[0] === 'measure') {
  // A subcommand, not an upstream: an upstream executable named `measure` needs `-- measure`.
  // `measure | head` closes stdout early: that is not an error worth a stack trace.
  process.stdout.on('error', (err) => {
    if (err.code !== 'EPIPE') throw err
  })
  process.exitCode = require('./measure.js').main(argv.slice(1))
} else {
  main(argv).catch((err) => {
    log(`fatal: ${err.stack ?? err}`)
    process.exit(1)
  })
}
