// @ts-check
'use strict'

// Everything the proxy says goes to stderr: stdout carries MCP messages only.
const PREFIX = '[mcp-snapshot-filter]'

function log(message) {
  try {
    process.stderr.write(`${PREFIX} ${message}\n`)
  } catch {
    // stderr gone: nothing left to tell
  }
}

module.exports = { log, PREFIX }
