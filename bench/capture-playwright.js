#!/usr/bin/env node
// Captures Playwright MCP snapshots of our own app pages (`__test__/site/app/`, served from
// 127.0.0.1) as fixtures in the corpus' file format: `<outDir>/<page>/browser_snapshot.json`.
// Pages the shared corpus does not have, so the Playwright tables are tested and measured on
// pages they were not made on.
//
//   node bench/capture-playwright.js [outDir] [page.html …]
//     (default outDir: __test__/fixtures/playwright-own; needs Chromium and @playwright/mcp,
//     or PLAYWRIGHT_MCP_CLI=/path/to/@playwright/mcp/cli.js)
'use strict'
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { ROOT, SITE_DIR, serveDirectory, playwrightMcpTransport } = require('./live-browser.js')

const DEFAULT_PAGES = ['admin.html', 'users.html', 'products.html', 'orders.html', 'inbox.html', 'docs-index.html']

async function main() {
  const outDir = process.argv[2] || path.join(ROOT, '__test__', 'fixtures', 'playwright-own')
  const pages = process.argv.length > 3 ? process.argv.slice(3) : DEFAULT_PAGES
  const site = await serveDirectory(SITE_DIR)
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-pw-capture-'))
  const transport = playwrightMcpTransport(workDir)

  const client = new Client({ name: 'capture', version: '1.0.0' })
  try {
    await client.connect(transport)
    const version = client.getServerVersion()?.version ?? '?'
    for (const page of pages) {
      const url = `${site.origin}/app/${page}`
      await client.callTool({ name: 'browser_navigate', arguments: { url } }, undefined, { timeout: 120_000 })
      const params = { name: 'browser_snapshot', arguments: {} }
      const result = await client.callTool(params, undefined, { timeout: 120_000 })
      // The port changes per run: write the corpus' (8765), so captures compare across runs.
      const text = JSON.stringify(result).split(site.origin).join('http://127.0.0.1:8765')
      const record = { server: `@playwright/mcp@${version}`, tool: 'browser_snapshot', request: { method: 'tools/call', params }, result: JSON.parse(text) }
      const dir = path.join(outDir, page.replace(/\.html$/, ''))
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(path.join(dir, 'browser_snapshot.json'), JSON.stringify(record, null, 2) + '\n')
      process.stdout.write(`${page}: ${text.length} bytes\n`)
    }
  } finally {
    await client.close().catch(() => {})
    await site.close()
    fs.rmSync(workDir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`)
  process.exit(1)
})
