'use strict'
// Where the corpus keeps the list results the description benches read: chrome-devtools-mcp's
// default and all-categories tools/list, Playwright MCP's, and every list of the reference
// servers. One place, so the level table and the dump read the same lists.

const fs = require('node:fs')
const path = require('node:path')

const METHOD_OF = {
  'tools-list.json': 'tools/list',
  'prompts-list.json': 'prompts/list',
  'resources-list.json': 'resources/list',
  'resources-templates-list.json': 'resources/templates/list',
}

/** The key of a list result's items, per method. */
const ITEMS = { 'tools/list': 'tools', 'prompts/list': 'prompts', 'resources/list': 'resources', 'resources/templates/list': 'resourceTemplates' }

/** Servers as { name, lists: [{ method, file }] }; each file wraps the result in {request, result, ...}. */
function listServers(corpus) {
  const out = []
  const cdp = path.join(corpus, 'chrome-devtools-mcp', '_tools-list-variants')
  for (const [name, file] of [
    ['chrome-devtools-mcp (default)', 'default.json'],
    ['chrome-devtools-mcp (all categories)', 'all-optional-categories.json'],
  ]) {
    out.push({ name, lists: [{ method: 'tools/list', file: path.join(cdp, file) }] })
  }
  out.push({ name: 'playwright-mcp', lists: [{ method: 'tools/list', file: path.join(corpus, 'playwright-mcp', 'tools-list.json') }] })
  const dir = path.join(corpus, 'servers')
  for (const server of fs.readdirSync(dir).sort()) {
    const lists = Object.entries(METHOD_OF)
      .map(([file, method]) => ({ method, file: path.join(dir, server, file) }))
      .filter((l) => fs.existsSync(l.file))
    out.push({ name: `server-${server}`, lists })
  }
  return out
}

module.exports = { ITEMS, listServers }
