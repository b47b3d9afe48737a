'use strict'

// Issue 44 through the real browser: chrome-devtools-mcp 1.11.0 driving headless Chromium
// behind the real bin. The agent has two pages open; then the browser process is killed
// (chrome-devtools-mcp relaunches it and says so), and later chrome-devtools-mcp itself (the
// proxy restarts it). Each time the proxy reopens both pages, the agent's old page ids still
// reach them, the next snapshot is whole (never a delta against the dead browser's), and a uid
// read from it clicks its button.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const { describe, test, before, after } = require('node:test')

const { connect, proxyCommand, waitUntil } = require('./helpers.js')
const { serveDirectory, chromeDevtoolsCommand, upstreamEnv, chromiumInstalled, resultText, CHROMIUM, SITE_DIR } = require('../bench/live-browser.js')

const CALL_TIMEOUT_MS = 120_000

/** Processes whose command line holds `marker` (a switch Chromium ignores), by pid. */
function processes(marker) {
  const found = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (argv.some((a) => a.includes(marker))) found.push({ pid: Number(entry), argv })
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/** The pids of `pid`'s children. */
function children(pid) {
  const found = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // `pid (comm) state ppid …`; comm may hold spaces and parentheses: read after the last ')'.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

if (!chromiumInstalled()) {
  const message = `Chromium not found at ${CHROMIUM}: the restart end-to-end test cannot run. Install it (apt-get install chromium) or set CHROMIUM_PATH.`
  if (process.env.CI) {
    test('restart through Chromium', () => assert.fail(`${message} (CI is set: this is a failure)`))
  } else {
    process.stderr.write(`\n!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!\n\n`)
    test('restart through Chromium', { skip: message }, () => {})
  }
} else {
  describe('a dead browser or upstream: pages reopened, a fresh snapshot clicks (real chrome-devtools-mcp + Chromium)', { timeout: 10 * 60_000 }, () => {
    let site
    before(async () => {
      site = await serveDirectory(SITE_DIR)
    })
    after(async () => {
      await site?.close()
    })

    test('the browser killed, then chrome-devtools-mcp killed', { timeout: 480_000 }, async () => {
      const marker = `--msf-restart-e2e-${process.pid}`
      const upstream = [...chromeDevtoolsCommand(), `--chromeArg=${marker}`]
      const session = await connect(proxyCommand(upstream, ['--filter-level=moderate', '--stats=off']), { env: upstreamEnv() })
      try {
        const call = async (name, args = {}) => {
          const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
          assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${resultText(result)}\nstderr:\n${session.stderr()}`)
          return resultText(result)
        }
        await session.client.listTools()
        const kanban = `${site.origin}/moves/kanban.html`
        const grid = `${site.origin}/app/grid.html`
        const pages = await call('list_pages')
        const board = Number(/^(\d+): .*\[selected\]$/m.exec(pages)[1])
        await call('navigate_page', { pageId: board, type: 'url', url: kanban })
        const opened = await call('new_page', { url: grid })
        const second = Number(new RegExp(`^(\\d+): .*${grid.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm').exec(opened)[1])
        await call('select_page', { pageId: board })
        assert.match(await call('take_snapshot', { pageId: board }), /full: first snapshot of this page/)
        assert.match(await call('take_snapshot', { pageId: board }), /unchanged since snapshot 1/)

        /** The agent's next calls, with its old page ids: a whole snapshot whose uid clicks. */
        const snapshotAndClick = async (what, expectNotice) => {
          const snapshot = await call('take_snapshot', { pageId: board })
          assert.match(snapshot, expectNotice, `${what}: the notice:\n${snapshot}`)
          assert.doesNotMatch(snapshot, /unchanged since|delta against/, `${what}: a delta against the dead browser's snapshot`)
          assert.match(snapshot, /full:/)
          const button = /(\d+_\d+) button "Task B: renew the passport"/.exec(snapshot)
          assert.ok(button, `${what}: Task B shown:\n${snapshot}`)
          await call('click', { pageId: board, uid: button[1] })
          assert.match(await call('evaluate_script', { pageId: board, function: '() => window.__clicked' }), /"Task B"/)
          // The other page was reopened too, and is reached by its old id.
          assert.match(await call('evaluate_script', { pageId: second, function: '() => location.href' }), /\/app\/grid\.html/)
        }

        // 1. The browser dies; chrome-devtools-mcp relaunches it at the next call and says so
        // (once it noticed the lost connection: the calls before still list the old pages).
        const browser = processes(marker).filter((p) => !p.argv.some((a) => a.startsWith('--type=') || a.startsWith('--executablePath=')))
        assert.equal(browser.length, 1, JSON.stringify(browser.map((p) => p.argv[0])))
        process.kill(browser[0].pid, 'SIGKILL')
        let noted = ''
        assert.ok(
          await waitUntil(async () => /Note: the browser was restarted or reconnected/.test((noted = await call('list_pages'))), 30000, 500),
          `no reconnect note: ${noted}\n${session.stderr()}`,
        )
        assert.match(noted, /^\[mcp-snapshot-filter: the upstream's browser was restarted or reconnected: uids changed/)
        await snapshotAndClick('browser killed', /^\[mcp-snapshot-filter: after the browser restarted; pages reopened: .*moves\/kanban\.html, .*app\/grid\.html/)

        // 2. chrome-devtools-mcp itself dies: the proxy restarts it and reopens the pages.
        // (It sets its process title, so it is found as the proxy's child.)
        const server = children(session.transport.pid)
        assert.equal(server.length, 1)
        process.kill(server[0], 'SIGKILL')
        // A call sent before the proxy notices goes to the dead process and gets the error.
        assert.ok(await waitUntil(() => /upstream exited \(signal SIGKILL[^\n]*: restarting it/.test(session.stderr()), 30000), session.stderr())
        await snapshotAndClick('chrome-devtools-mcp killed', /^\[mcp-snapshot-filter: the upstream MCP server died \(signal SIGKILL.*\) and was restarted; pages reopened: .*moves\/kanban\.html, .*app\/grid\.html/)
      } finally {
        await session.client.close()
      }
      assert.doesNotMatch(session.stderr(), /filter failed/, `the proxy failed open:\n${session.stderr()}`)
      assert.match(session.stderr(), /upstream exited \(signal SIGKILL[^\n]*: restarting it/)
    })
  })
}
