#!/usr/bin/env node
// Do Playwright MCP's refs renumber on a re-render, as chrome-devtools-mcp's uids do? (issue 42
// item 2: measure before rewriting `ref`). Drives Playwright MCP (the dev dependency, headless
// Debian Chromium) on the re-rendering app page (`__test__/site/app/rerender.html`: a modal
// dialog opened and closed, a refresh that replaces every row's DOM nodes, a disclosure, a
// sort) and prints, for each snapshot against the one before it, how many of the lines both
// show (the same text but for the ref) kept their ref and how many got another.
//
//   node bench/playwright-refs.js
'use strict'
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { CHROMIUM, SITE_DIR, serveDirectory, playwrightMcpTransport } = require('./live-browser.js')

const REF = /\[ref=([^\]]+)\]/

function text(result) {
  return (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n')
}

/** The YAML snapshot's lines with a ref: line without the ref -> refs (in order). */
function refLines(snapshot) {
  const out = new Map()
  for (const line of snapshot.split('\n')) {
    const m = REF.exec(line)
    if (!m) continue
    const key = line.replace(REF, '[ref]').trim()
    if (!out.has(key)) out.set(key, [])
    out.get(key).push(m[1])
  }
  return out
}

function compare(before, after) {
  let kept = 0
  let changed = 0
  for (const [key, refs] of after) {
    const old = before.get(key)
    if (!old || old.length !== 1 || refs.length !== 1) continue
    if (old[0] === refs[0]) kept++
    else changed++
  }
  return { kept, changed }
}

async function main() {
  const site = await serveDirectory(SITE_DIR)
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-pw-refs-'))
  const transport = playwrightMcpTransport(workDir)

  const client = new Client({ name: 'playwright-refs', version: '1.0.0' })
  const call = async (name, args) => text(await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 }))
  try {
    await client.connect(transport)
    process.stdout.write(`Playwright MCP ${client.getServerVersion()?.version ?? '?'}, ${CHROMIUM}\n\n| step | lines in both, unique | same ref | another ref |\n| --- | ---: | ---: | ---: |\n`)
    await call('browser_navigate', { url: `${site.origin}/app/rerender.html` })
    let last = refLines(await call('browser_snapshot', {}))
    const refOf = (snapshot, pattern) => {
      for (const [key, refs] of snapshot) if (pattern.test(key)) return refs[0]
      throw new Error(`no line matches ${pattern} in:\n${[...snapshot.keys()].join("\n")}`)
    }
    const steps = [
      ['open a modal dialog (Edit of row 1)', () => ({ element: 'Edit', target: refOf(last, /^- button "Edit"/) })],
      ['close it', () => ({ element: 'Close', target: refOf(last, /^- button "Close"/) })],
      ['Refresh (every row re-rendered)', () => ({ element: 'Refresh', target: refOf(last, /^- button "Refresh"/) })],
      ['open one row\'s disclosure (rows re-rendered)', () => ({ element: 'Items', target: refOf(last, /^- group:|^- generic.*Items|"Items"/) })],
      ['sort by Total (rows re-rendered, reordered)', () => ({ element: 'Total', target: refOf(last, /^- button "Total"/) })],
    ]
    for (const [what, target] of steps) {
      await call('browser_click', target())
      const now = refLines(await call('browser_snapshot', {}))
      const { kept, changed } = compare(last, now)
      process.stdout.write(`| ${what} | ${kept + changed} | ${kept} | ${changed} |\n`)
      last = now
    }
  } finally {
    await client.close().catch(() => {})
    await site.close()
    fs.rmSync(workDir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`)
  process.exit(1)
})
