'use strict'

// Snapshot deltas in a real browser: the real bin (moderate, deltas on by default) in front of
// the real chrome-devtools-mcp 1.11.0 driving Chromium, on the bundled grid page served from
// 127.0.0.1. Tick a row's checkbox with includeSnapshot, then take_snapshot: the first shows
// the checkbox checked and little else, the second is the short form; a uid from an unchanged
// region clicks; after a navigation the snapshot is full again; expand_snapshot without uid
// returns the whole page.

const assert = require('node:assert/strict')
const { describe, test, before, after } = require('node:test')

const { connect, proxyCommand, expandTables } = require('./helpers.js')
const { serveDirectory, chromeDevtoolsCommand, upstreamEnv, chromiumInstalled, resultText, CHROMIUM } = require('../bench/live-browser.js')

const CALL_TIMEOUT_MS = 120_000
const STEP_TIMEOUT_MS = 180_000
const SNAPSHOT_HEADER = '## Latest page snapshot\n'

/** The snapshot body of a result text (without the stats line). */
function body(text) {
  const at = text.indexOf(SNAPSHOT_HEADER)
  assert.ok(at !== -1, `no snapshot in:\n${text.slice(0, 1000)}`)
  return text
    .slice(at + SNAPSHOT_HEADER.length)
    .split('\n')
    .filter((l) => !l.startsWith('[mcp-snapshot-filter:'))
    .join('\n')
}

/** `uid role "name…"` nodes of the light notation (on their own line or after `|` / ` > `). */
function nodes(text, role) {
  text = expandTables(text)
  const re = new RegExp(`(?:^|[\\s|>])(\\d+_\\d+) ${role} "([^"]*)"([^|\\n]*)`, 'gm')
  return [...text.matchAll(re)].map((m) => ({ uid: m[1], name: m[2], attrs: m[3] }))
}

if (!chromiumInstalled()) {
  const message = `Chromium not found at ${CHROMIUM}: the real-browser deltas test cannot run. Install it (apt-get install chromium) or set CHROMIUM_PATH.`
  if (process.env.CI) {
    test('snapshot deltas through Chromium', () => assert.fail(`${message} (CI is set: this is a failure)`))
  } else {
    process.stderr.write(`\n!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!\n\n`)
    test('snapshot deltas through Chromium', { skip: message }, () => {})
  }
} else {
  describe('snapshot deltas through chrome-devtools-mcp and Chromium (moderate)', { timeout: 10 * 60_000 }, () => {
    let site
    let proxied
    let pageId
    let full

    async function call(name, args = {}) {
      const pageScoped = !['list_pages', 'expand_snapshot'].includes(name)
      const fullArgs = pageScoped ? { pageId, ...args } : args
      const result = await proxied.client.callTool({ name, arguments: fullArgs }, undefined, { timeout: CALL_TIMEOUT_MS })
      assert.ok(!result.isError, `${name} ${JSON.stringify(fullArgs)} failed: ${resultText(result)}\nstderr:\n${proxied.stderr()}`)
      return resultText(result)
    }

    before(async () => {
      site = await serveDirectory()
      proxied = await connect(proxyCommand(chromeDevtoolsCommand(), ['--filter-level=moderate']), { env: upstreamEnv() })
      const pages = await call('list_pages')
      pageId = Number(/^(\d+): .*\[selected\]$/m.exec(pages)?.[1])
      assert.ok(Number.isInteger(pageId), pages)
      await call('navigate_page', { url: `${site.origin}/app/grid.html` })
    }, { timeout: STEP_TIMEOUT_MS })

    after(async () => {
      await proxied?.client.close()
      await site?.close()
    })

    test('the first snapshot of the page is full and says so', { timeout: STEP_TIMEOUT_MS }, async () => {
      full = body(await call('take_snapshot'))
      assert.match(full.split('\n')[0], /^#snapshot-filter snapshot \d+, full: first snapshot of this page$/)
      assert.ok(nodes(full, 'checkbox').length >= 3, `no row checkboxes in:\n${full.slice(0, 2000)}`)
    })

    test('ticking a checkbox with includeSnapshot sends it checked and little else; take_snapshot then is the short form', { timeout: STEP_TIMEOUT_MS }, async () => {
      const box = nodes(full, 'checkbox').find((n) => n.name.startsWith('Select ') && !/^Select all/.test(n.name) && !/checked/.test(n.attrs))
      assert.ok(box, `no unticked row checkbox in:\n${full.slice(0, 2000)}`)
      const delta = body(await call('click', { uid: box.uid, includeSnapshot: true }))
      process.stderr.write(`  e2e deltas: full ${Buffer.byteLength(full)} B, delta after the click ${Buffer.byteLength(delta)} B\n`)
      assert.match(delta.split('\n')[0], /^#snapshot-filter snapshot \d+: delta against snapshot \d+, \d+ added, \d+ changed, \d+ removed/)
      const ticked = nodes(delta, 'checkbox').find((n) => n.uid === box.uid)
      assert.ok(ticked && /\bchecked\b/.test(ticked.attrs), `the delta does not show ${box.uid} checked:\n${delta}`)
      assert.ok(Buffer.byteLength(delta) * 4 < Buffer.byteLength(full), `the delta is not small:\n${delta}`)
      assert.match(delta, /… \d+ unchanged \(uid /)

      const again = body(await call('take_snapshot'))
      assert.equal(again.trim().split('\n').length, 1, `not the short form:\n${again}`)
      assert.match(again, /^#snapshot-filter snapshot \d+: unchanged since snapshot \d+/)
    })

    test('a uid from an unchanged region clicks', { timeout: STEP_TIMEOUT_MS }, async () => {
      // An Edit button of another row: in the unchanged runs of the delta, shown in the full one.
      const edit = nodes(full, 'button').filter((n) => n.name.startsWith('Edit ')).at(-1)
      assert.ok(edit, `no Edit button in:\n${full.slice(0, 2000)}`)
      await call('click', { uid: edit.uid })
      const focused = await call('evaluate_script', { function: "() => document.activeElement?.getAttribute('aria-label') ?? null" })
      assert.match(focused, new RegExp(`"${edit.name}"`))
    })

    test('expand_snapshot without uid returns the whole page at the level', { timeout: STEP_TIMEOUT_MS }, async () => {
      const whole = await call('expand_snapshot', { pageId })
      assert.match(whole, /^#snapshot-filter: /)
      assert.match(whole, /RootWebArea "Customers/)
      assert.ok(nodes(whole, 'checkbox').length >= 3)
      assert.doesNotMatch(whole, /unchanged/)
    })

    test('after a navigation the snapshot is full again', { timeout: STEP_TIMEOUT_MS }, async () => {
      await call('navigate_page', { type: 'reload' })
      const reloaded = body(await call('take_snapshot'))
      assert.match(reloaded.split('\n')[0], /^#snapshot-filter snapshot \d+, full: the page navigated or reloaded$/)
      await call('navigate_page', { url: `${site.origin}/app/megamenu.html` })
      const other = body(await call('take_snapshot'))
      assert.match(other.split('\n')[0], /, full: the page navigated or reloaded$/)
    })
  })
}
