'use strict'

// Issue 24 items 1 and 7, through the real browser: a board whose script moves a card (an
// `<li>`) from one `<ul>` to the other, as drag and drop does (the same DOM node, so it keeps its
// uid and is now out of the uids' order). chrome-devtools-mcp 1.11.0 (text only, no
// --experimentalStructuredContent) driving headless Chromium behind the real bin at moderate:
// the next snapshot is never "unchanged", the moved button is a node (not text of the node
// before it) in the delta and in expand_snapshot, and its uid, read from the proxy's output,
// clicks that button.

const assert = require('node:assert/strict')
const { describe, test, before, after } = require('node:test')

const { connect, proxyCommand } = require('./helpers.js')
const { serveDirectory, chromeDevtoolsCommand, upstreamEnv, chromiumInstalled, resultText, CHROMIUM, SITE_DIR } = require('../bench/live-browser.js')

const CALL_TIMEOUT_MS = 120_000
const PAGE = '/moves/kanban.html'

if (!chromiumInstalled()) {
  const message = `Chromium not found at ${CHROMIUM}: the moved-node end-to-end test cannot run. Install it (apt-get install chromium) or set CHROMIUM_PATH.`
  if (process.env.CI) {
    test('moved node through Chromium', () => assert.fail(`${message} (CI is set: this is a failure)`))
  } else {
    process.stderr.write(`\n!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!\n\n`)
    test('moved node through Chromium', { skip: message }, () => {})
  }
} else {
  describe('a DOM node moved keeps its uid (real chrome-devtools-mcp + Chromium)', { timeout: 10 * 60_000 }, () => {
    let site
    before(async () => {
      site = await serveDirectory(SITE_DIR)
    })
    after(async () => {
      await site?.close()
    })

    test('the snapshot after the move is a delta that shows it, and the moved uid clicks the card', { timeout: 300_000 }, async () => {
      const session = await connect(proxyCommand(chromeDevtoolsCommand(), ['--filter-level=moderate', '--proxy-tools', '--stats=off']), { env: upstreamEnv() })
      try {
        const call = async (name, args = {}) => {
          const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
          assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${resultText(result)}\nstderr:\n${session.stderr()}`)
          return resultText(result)
        }
        const pages = await call('list_pages')
        const pageId = Number(/^(\d+): .*\[selected\]$/m.exec(pages)[1])
        await call('navigate_page', { pageId, url: `${site.origin}${PAGE}` })
        const first = await call('take_snapshot', { pageId })
        assert.match(first, /full: first snapshot of this page/)
        const buttonA = /(\d+_\d+) button "Task A: book the flights"/.exec(first)
        assert.ok(buttonA, `Task A shown:\n${first}`)

        await call('evaluate_script', { pageId, function: "() => moveCard('Task A', 'done')" })
        const moved = await call('take_snapshot', { pageId })
        assert.doesNotMatch(moved, /unchanged since/, 'a move is a change')
        assert.match(moved, /delta against snapshot 1, .*\b1 moved\b/, moved)

        // The moved button is a node of the Done list, in the delta and in the whole page.
        const whole = await call('expand_snapshot', { pageId })
        for (const [what, text] of [['delta', moved], ['whole page', whole]]) {
          const lines = text.split('\n')
          const at = lines.findIndex((l) => new RegExp(`(^|[ >|])${buttonA[1]} button "Task A: book the flights"`).test(l))
          assert.ok(at !== -1, `${what}: ${buttonA[1]} is not a node:\n${text}`)
          // Under Done: on a later line, or after it on its line (siblings joined by `|`).
          const done = lines.findIndex((l) => /list "Done"|region "Done"/.test(l))
          const after = done < at || (done === at && lines[at].indexOf('"Done"') < lines[at].indexOf('Task A'))
          assert.ok(done !== -1 && after, `${what}: Task A is not under Done:\n${text}`)
          assert.doesNotMatch(text, /"Task [A-E][^"\n]*\\"/, `${what}: a node line read as text of the one before:\n${text}`)
        }

        // Its uid, as the proxy showed it, clicks that card.
        await call('click', { pageId, uid: buttonA[1] })
        const clicked = await call('evaluate_script', { pageId, function: '() => window.__clicked' })
        assert.match(clicked, /"Task A"/)
      } finally {
        await session.client.close()
      }
      assert.doesNotMatch(session.stderr(), /filter failed/, `the proxy failed open:\n${session.stderr()}`)
    })
  })
}
