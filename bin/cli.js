#!/usr/bin/env node
'use strict'

const { parseArgs, UsageError, HELP } = require('./options.js')
const { log } = require('./log.js')

function loadNative() {
  try {
    return require('../index.js')
  } catch (err) {
    log(`cannot load the native filter: ${err.message.split('\n')[0]}`)
    log('reinstall the package so npm fetches the prebuilt binary for this platform, or build it from source with `npm install` in a clone (needs Rust).')
    process.exit(1)
  }
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

  const { FilterSession } = loadNative()
  const level = parsed.options['filter-level']
  const session = new FilterSession({ filter: { level } })
  const { Proxy } = require('./proxy.js')
  const proxy = new Proxy({
    command: parsed.command,
    args: parsed.args,
    session,
    filtering: level !== 'off',
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
