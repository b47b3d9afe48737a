'use strict'

// Issue 42 item 4, through the real browser: chrome-devtools-mcp 1.11.0 renumbers every node of
// a page whose previous snapshot did not hold it (a modal dialog's snapshot holds only the
// dialog; a re-render gives the rows new DOM nodes). Behind the real bin at moderate, the agent
// keeps using the uids it was shown before: the page after the dialog closed is the short
// form, a button clicked by its pre-dialog uid does its action, row 13's "Edit" clicked by its
// old uid after the rows re-rendered edits row 13, and after a sort the old uid either edits
// that same row or passes unchanged (the upstream then says it does not know it).

const assert = require('node:assert/strict')
const { describe, test, before, after } = require('node:test')

const { connect, proxyCommand } = require('./helpers.js')
const { serveDirectory, chromeDevtoolsCommand, upstreamEnv, chromiumInstalled, resultText, CHROMIUM, SITE_DIR } = require('../bench/live-browser.js')

const CALL_TIMEOUT_MS = 120_000
const PAGE = '/app/rerender.html'

if (!chromiumInstalled()) {
  const message = `Chromium not found at ${CHROMIUM}: the identity end-to-end test cannot run. Install it (apt-get install chromium) or set CHROMIUM_PATH.`
  if (process.env.CI) {
    test('identity through Chromium', () => assert.fail(`${message} (CI is set: this is a failure)`))
  } else {
    process.stderr.write(`\n!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!\n\n`)
    test('identity through Chromium', { skip: message }, () => {})
  }
} else {
  describe('uids the agent holds survive re-renders (real chrome-devtools-mcp + Chromium)', { timeout: 10 * 60_000 }, () => {
    let site
    before(async () => {
      site = await serveDirectory(SITE_DIR)
    })
    after(async () => {
      await site?.close()
    })

    test('a dialog, a re-render and a sort: the old uids click what they named, or pass unchanged', { timeout: 300_000 }, async () => {
      const session = await connect(proxyCommand(chromeDevtoolsCommand(), ['--filter-level=moderate', '--proxy-tools', '--stats=off']), { env: upstreamEnv() })
      try {
        const callRaw = (name, args = {}) => session.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
        const call = async (name, args = {}) => {
          const result = await callRaw(name, args)
          assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${resultText(result)}\nstderr:\n${session.stderr()}`)
          return resultText(result)
        }
        const pages = await call('list_pages')
        const pageId = Number(/^(\d+): .*\[selected\]$/m.exec(pages)[1])
        const status = async () => call('evaluate_script', { pageId, function: "() => document.getElementById('status').textContent" })
        await call('navigate_page', { pageId, url: `${site.origin}${PAGE}` })
        const first = await call('take_snapshot', { pageId })
        assert.match(first, /full: first snapshot of this page/)
        const uidOf = (re, text) => {
          const m = re.exec(text)
          assert.ok(m, `${re} not in:\n${text}`)
          return m[1]
        }
        const account = uidOf(/(\d+_\d+) button "Account"/, first)
        const refresh = uidOf(/(\d+_\d+) button "Refresh"/, first)
        const sortTotal = uidOf(/(\d+_\d+) button "Total"/, first)
        // Row 13 of the table (#1014, Niklaus Wirth): its cells read
        // `Niklaus Wirth|$41.25|Pending|<disclosure>|<Edit>|<Cancel> "Cancel"`.
        const edit13 = uidOf(/Niklaus Wirth\|[^|]*\|[^|]*\|\d+_\d+\|(\d+_\d+)\|/, first)

        // A modal dialog opens and closes: the page comes back renumbered, unchanged.
        await call('evaluate_script', { pageId, function: "() => { document.getElementById('edit').showModal() }" })
        const dialog = await call('take_snapshot', { pageId })
        assert.match(dialog, /dialog "Edit order"/)
        assert.doesNotMatch(dialog, /button "Account"/, 'the dialog covers the page')
        await call('evaluate_script', { pageId, function: "() => { document.getElementById('edit').close() }" })
        const back = await call('take_snapshot', { pageId })
        const body = back.slice(back.indexOf('## Latest page snapshot'))
        assert.match(body, /snapshot 3: unchanged since snapshot 1/, back)
        assert.ok(body.split('\n').filter((l) => l.trim() !== '').length <= 2, back)
        await call('click', { pageId, uid: account })
        assert.match(await status(), /Account opened/)

        // The rows re-render (new DOM nodes, the same rows): row 13's old Edit edits row 13.
        await call('click', { pageId, uid: refresh, includeSnapshot: true })
        assert.match(await status(), /Refreshed/)
        await call('click', { pageId, uid: edit13 })
        assert.match(await status(), /Editing #1014 \(Niklaus Wirth\)/)
        await call('evaluate_script', { pageId, function: "() => { document.getElementById('edit').close() }" })
        await call('take_snapshot', { pageId })

        // Sorted: the rows move. The old uid edits that same row, or the upstream does not
        // know it (it passed unchanged); never another row.
        await call('click', { pageId, uid: sortTotal, includeSnapshot: true })
        const before = await status()
        const result = await callRaw('click', { pageId, uid: edit13 })
        const now = await status()
        if (result.isError) {
          assert.match(resultText(result), new RegExp(edit13), 'an error names the uid the agent sent')
          assert.equal(now, before)
        } else {
          assert.match(now, /Editing #1014 \(Niklaus Wirth\)/)
        }
      } finally {
        await session.client.close()
      }
      assert.doesNotMatch(session.stderr(), /filter failed|uid rewrite failed/, `the proxy failed open:\n${session.stderr()}`)
    })
  })
}
