'use strict'

// A remote browser upstream for real: Playwright MCP (pinned devDependency) started as an HTTP
// server (`--port`, on 127.0.0.1) driving Debian's Chromium, the proxy in front of it with
// `--upstream-url`, the client on stdio. A snapshot through the proxy is filtered, much smaller
// than the same snapshot taken direct, a ref read from the filtered text clicks, and an
// unchanged re-snapshot is a one-line delta.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { describe, test, before, after } = require('node:test')

const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js')

const { connect, BIN, ROOT } = require('./helpers.js')
const { freePort, startServer } = require('./http-servers.js')
const { serveDirectory, chromiumInstalled, resultText, CHROMIUM } = require('../bench/live-browser.js')

const PLAYWRIGHT_MCP = path.join(ROOT, 'node_modules', '@playwright', 'mcp', 'cli.js')
const CALL_TIMEOUT_MS = 120_000 // the first call starts the browser
/** Minimum fraction of the grid page's browser_snapshot text the proxy saves at moderate. */
const MIN_SNAPSHOT_SAVING = 0.6

const missing = !chromiumInstalled()
  ? `Chromium not found at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
  : !fs.existsSync(PLAYWRIGHT_MCP)
    ? `@playwright/mcp is not installed (npm install)`
    : null

if (missing) {
  const message = `the Playwright MCP over HTTP test cannot run: ${missing}`
  if (process.env.CI) test('Playwright MCP over HTTP', () => assert.fail(`${message} (CI is set: this is a failure)`))
  else {
    process.stderr.write(`\n!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!\n\n`)
    test('Playwright MCP over HTTP', { skip: message }, () => {})
  }
} else {
  describe('Playwright MCP over Streamable HTTP through the proxy', { timeout: 6 * 60_000 }, () => {
    let site
    let server
    let workDir
    let direct
    let proxied
    let filtered

    async function call(session, name, args = {}) {
      const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
      assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${resultText(result)}\nstderr:\n${session.stderr()}`)
      return resultText(result)
    }

    before(async () => {
      site = await serveDirectory()
      workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-playwright-'))
      const port = await freePort()
      // Playwright MCP checks the Host header against --allowed-hosts (default: the bound host).
      server = await startServer(
        [PLAYWRIGHT_MCP, '--port', String(port), '--host', '127.0.0.1', '--allowed-hosts', `127.0.0.1:${port}`, '--headless', '--browser', 'chromium', '--executable-path', CHROMIUM, '--isolated', '--output-dir', workDir],
        { port, cwd: workDir, env: { PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' }, readyMs: 60_000 },
      )
      const url = `http://127.0.0.1:${port}/mcp`
      const client = new Client({ name: 'direct', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      direct = { client, stderr: () => server.output() }
      proxied = await connect([process.execPath, BIN, '--filter-level=moderate', '--upstream-url', url])
    }, { timeout: 120_000 })

    after(async () => {
      await Promise.allSettled([direct?.client.close(), proxied?.client.close()])
      await server?.stop()
      await site?.close()
      if (workDir) fs.rmSync(workDir, { recursive: true, force: true })
      const stderr = proxied?.stderr() ?? ''
      assert.doesNotMatch(stderr, /filter failed|connection lost|unreachable/, `the proxy had trouble during the run:\n${stderr}`)
    })

    test('browser_snapshot through the proxy is filtered and much smaller than direct', { timeout: 4 * 60_000 }, async () => {
      const page = `${site.origin}/app/grid.html`
      await Promise.all([call(direct, 'browser_navigate', { url: page }), call(proxied, 'browser_navigate', { url: page })])
      const [plain, through] = await Promise.all([call(direct, 'browser_snapshot'), call(proxied, 'browser_snapshot')])
      filtered = through
      const saving = 1 - Buffer.byteLength(through) / Buffer.byteLength(plain)
      process.stderr.write(`  playwright-mcp over HTTP, grid browser_snapshot: direct ${Buffer.byteLength(plain)} B, proxied ${Buffer.byteLength(through)} B (saving ${(saving * 100).toFixed(1)}%)\n`)
      assert.match(plain, /### Snapshot/)
      assert.match(through, /^# snapshot-filter: /m, 'the filter legend opens the snapshot')
      assert.match(through, /expand_snapshot uid=e\d+/, 'hidden content is marked with the ref to expand')
      assert.match(through, /\[mcp-snapshot-filter: /, 'the stats line')
      assert.ok(saving >= MIN_SNAPSHOT_SAVING, `saving ${saving} < ${MIN_SNAPSHOT_SAVING}`)
      // Every ref shown is one of the upstream's.
      const upstreamRefs = new Set([...plain.matchAll(/\[ref=(e\d+)\]/g)].map((m) => m[1]))
      for (const [, ref] of through.matchAll(/\[ref=(e\d+)\]/g)) assert.ok(upstreamRefs.has(ref), `ref ${ref} is not in the upstream snapshot`)
    })

    test('a ref read from the filtered snapshot clicks: sorting by MRR', { timeout: 2 * 60_000 }, async () => {
      const m = /button "MRR"[^\n]*\[ref=(e\d+)\]/.exec(filtered)
      assert.ok(m, `no MRR button with a ref in:\n${filtered.slice(0, 3000)}`)
      // Playwright MCP 0.0.86 (as 0.0.83) takes the ref as `target`.
      await call(proxied, 'browser_click', { element: 'MRR sort button', target: m[1] })
      const state = await call(proxied, 'browser_evaluate', {
        function: "() => JSON.stringify({ live: document.getElementById('live').textContent, sorted: document.querySelector('th[aria-sort]')?.textContent.trim() })",
      })
      assert.match(state, /Sorted by mrr/)
      assert.match(state, /\\"sorted\\":\\"MRR\\"/)
    })

    test('search_snapshot answers from the remote snapshot with the upstream refs', { timeout: 60_000 }, async () => {
      const shown = /button "Export CSV"[^\n]*\[ref=(e\d+)\]/.exec(filtered)
      assert.ok(shown, filtered.slice(0, 3000))
      const hits = await call(proxied, 'search_snapshot', { query: 'Export CSV' })
      assert.match(hits, new RegExp(`button "Export CSV"[^\\n]*\\b${shown[1]}\\b`), hits)
    })

    test('a snapshot of a page the agent holds is a delta: an unchanged re-snapshot is one line', { timeout: 2 * 60_000 }, async () => {
      const first = await call(proxied, 'browser_snapshot')
      const again = await call(proxied, 'browser_snapshot')
      process.stderr.write(`  playwright-mcp over HTTP, unchanged re-snapshot: ${Buffer.byteLength(first)} B, then ${Buffer.byteLength(again)} B\n`)
      assert.match(again, /snapshot \d+: unchanged since snapshot \d+; expand_snapshot without uid shows it/, again)
      assert.ok(Buffer.byteLength(again) < Buffer.byteLength(first) / 10, again)
      // The whole page is one call away, with the upstream's refs.
      const whole = await call(proxied, 'expand_snapshot')
      const mrr = /button "MRR"[^\n]*\[ref=(e\d+)\]/.exec(whole)
      assert.ok(mrr, whole.slice(0, 2000))
      // A ref from the whole page still clicks (sorting again), and the next snapshot is a small delta.
      await call(proxied, 'browser_click', { element: 'MRR sort button', target: mrr[1] })
      const after = await call(proxied, 'browser_snapshot')
      // Sorting re-renders the rows: a delta, or a full snapshot saying why; never unchanged.
      assert.match(after, /snapshot \d+: delta against snapshot \d+|snapshot \d+, full: /, after.slice(0, 500))
      assert.doesNotMatch(after, /unchanged since snapshot/, after.slice(0, 500))
    })
  })
}
