#!/usr/bin/env node
'use strict'

const { parseArgs, UsageError, HELP } = require('./options.js')
const { log } = require('./log.js')
const { loadNative } = require('./native.js')

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

  const { FilterSession } = loadNative(log)
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

main(process.argv.slice(2)).catch((err) => {
  log(`fatal: ${err.stack ?? err}`)
  process.exit(1)
})
