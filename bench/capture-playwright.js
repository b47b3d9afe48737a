#!/usr/bin/env node
// Captures Playwright MCP snapshots of our own app pages (`__test__/site/app/`, served from
// 127.0.0.1) as fixtures in the corpus' file format: `<outDir>/<page>/browser_snapshot.json`.
// Pages the shared corpus does not have, so the Playwright tables are tested and measured on
// pages they were not made on.
//
//   node bench/capture-playwright.js [--prefix P] [--click NAME] [outDir] [page.html …]
//     (default outDir: __test__/fixtures/playwright-own; needs Chromium and @playwright/mcp,
//     or PLAYWRIGHT_MCP_CLI=/path/to/@playwright/mcp/cli.js)
//   --prefix P    names each page's directory P<page> (the corpus names them app-<page>)
//   --click NAME  also writes the navigation's result (browser_navigate.json) and, after the
//                 snapshot, a click on the button of that name, by the ref the snapshot gives
//                 it (browser_click.json), as the corpus has them
//
//   The shipped copy of the corpus' megamenu page: node bench/capture-playwright.js --prefix app-
//     --click "Accept all" __test__/fixtures/playwright megamenu.html
'use strict'
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { ROOT, SITE_DIR, serveDirectory, playwrightMcpTransport } = require('./live-browser.js')

const DEFAULT_PAGES = ['admin.html', 'users.html', 'products.html', 'orders.html', 'inbox.html', 'docs-index.html']

/** `--name value` taken out of `args`, or undefined. */
function takeOption(args, name) {
  const at = args.indexOf(name)
  if (at < 0) return undefined
  return args.splice(at, 2)[1]
}

async function main() {
  const args = process.argv.slice(2)
  const prefix = takeOption(args, '--prefix') ?? ''
  const click = takeOption(args, '--click')
  const outDir = args[0] || path.join(ROOT, '__test__', 'fixtures', 'playwright-own')
  const pages = args.length > 1 ? args.slice(1) : DEFAULT_PAGES
  const site = await serveDirectory(SITE_DIR)
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-pw-capture-'))
  const transport = playwrightMcpTransport(workDir)

  const client = new Client({ name: 'capture', version: '1.0.0' })
  try {
    await client.connect(transport)
    const version = client.getServerVersion()?.version ?? '?'
    for (const page of pages) {
      const dir = path.join(outDir, prefix + page.replace(/\.html$/, ''))
      fs.mkdirSync(dir, { recursive: true })
      // The port changes per run: the corpus' (8765) is written, so captures compare across runs.
      const write = (tool, params, result) => {
        const text = JSON.stringify(result).split(site.origin).join('http://127.0.0.1:8765')
        const record = { server: `@playwright/mcp@${version}`, tool, request: { method: 'tools/call', params: JSON.parse(JSON.stringify(params).split(site.origin).join('http://127.0.0.1:8765')) }, result: JSON.parse(text) }
        fs.writeFileSync(path.join(dir, `${tool}.json`), JSON.stringify(record, null, 2) + '\n')
        process.stdout.write(`${page} ${tool}: ${text.length} bytes\n`)
      }
      const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
      const navigate = { name: 'browser_navigate', arguments: { url: `${site.origin}/app/${page}` } }
      const navigated = await call(navigate.name, navigate.arguments)
      if (click !== undefined) write('browser_navigate', navigate, navigated)
      const snapshot = { name: 'browser_snapshot', arguments: {} }
      const snapped = await call(snapshot.name, snapshot.arguments)
      write('browser_snapshot', snapshot, snapped)
      if (click === undefined) continue
      const text = snapped.content?.map((/** @type {{text?: string}} */ b) => b.text ?? '').join('\n') ?? ''
      const ref = new RegExp(`- button ${JSON.stringify(click).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\[ref=([^\\]]+)\\]`).exec(text)?.[1]
      if (!ref) throw new Error(`${page}: no button ${JSON.stringify(click)} in the snapshot`)
      const press = { name: 'browser_click', arguments: { element: `button ${JSON.stringify(click)}`, target: ref } }
      write('browser_click', press, await call(press.name, press.arguments))
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
