'use strict'

// Real end to end (issue 8): the real bin in front of the real chrome-devtools-mcp 1.11.0
// driving Debian's headless Chromium, against the app pages served from 127.0.0.1, compared
// with a direct session (no proxy) doing the same steps. Nothing leaves 127.0.0.1: the pages
// are local and Chromium resolves every other host name to nothing.

const assert = require('node:assert/strict')
const { describe, test, before, after } = require('node:test')

const { connect, proxyCommand, expandTables } = require('./helpers.js')
const { serveDirectory, chromeDevtoolsCommand, upstreamEnv, chromiumInstalled, resultText, CHROMIUM } = require('../bench/live-browser.js')

// ---- Margins the filters must make (measured on these pages with the corpus bench). ----
/** Minimum fraction of the grid page's take_snapshot text the proxy saves at `moderate`. */
const MIN_SNAPSHOT_SAVING = 0.6
/** Minimum fraction of all tool description text (tools/list) the proxy saves. */
const MIN_DESCRIPTION_SAVING = 0.1
/** The filtered take_snapshot must carry the `[mcp-snapshot-filter: …]` stats line. */
const EXPECT_STATS_LINE = true
/** The proxy must offer its retrieval tools (issue 4): step 3 uses them. */
const EXPECT_RETRIEVAL_TOOLS = true

/** Tools the proxy adds to the upstream's list (issue 4). */
const PROXY_TOOLS = new Set(['expand_snapshot', 'search_snapshot', 'read_result'])

const CALL_TIMEOUT_MS = 120_000 // the first call starts the browser: 10+ s on a busy machine
const STEP_TIMEOUT_MS = 180_000
/** Long enough for the noisy page's timers (polling 12 × 60 ms, a 100 ms uncaught error). */
const NOISY_SETTLE_MS = 2500

const STATS_LINE = /\[mcp-snapshot-filter:[^\n]*\]/

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * The snapshot nodes with this role and name, as [{ uid, name }], in either notation: the
 * upstream's `uid=1_23 button "Edit"` or the filter's shortened one (a legend at the top
 * explains it), e.g. `1_23 button "Edit"`, after `|` or ` > ` when it shares a line, and a link
 * as `1_24 [Edit](#edit)`. Only the uid value pattern `\d+_\d+` is relied on, immediately
 * followed by the role and the quoted name (or, for links, the bracketed name); marker lines
 * (`… expand_snapshot uid=7_118`) have no role after the uid and do not match. `name` is the
 * exact name (a string) or a RegExp the whole name must match.
 */
function findNodes(text, role, name) {
  text = expandTables(text)
  const namePattern = name instanceof RegExp ? `(?:${name.source})` : escapeRegExp(name)
  const uid = '(?:^|[\\s\\[(=#@|])(\\d+_\\d+)[\\]):]*'
  const patterns = [new RegExp(`${uid}\\s+${escapeRegExp(role)}\\s+"(${namePattern})"`, 'gm')]
  if (role === 'link') patterns.push(new RegExp(`${uid} \\[(${namePattern})\\]\\(`, 'gm'))
  const found = patterns.flatMap((pattern) => [...text.matchAll(pattern)])
  return found.sort((a, b) => a.index - b.index).map((m) => ({ uid: m[1], name: m[2] }))
}

function findUids(text, role, name) {
  return findNodes(text, role, name).map((node) => node.uid)
}

function oneUid(text, role, name) {
  const uids = findUids(text, role, name)
  assert.ok(uids.length > 0, `no ${role} "${name}" in:\n${text.slice(0, 3000)}`)
  return uids[0]
}

/** The value an evaluate_script result returned (the fenced JSON block). */
function evaluated(result) {
  const text = resultText(result)
  assert.ok(!result.isError, `evaluate_script failed: ${text}`)
  const m = /```json\n([\s\S]*?)\n```/.exec(text)
  assert.ok(m, `no json block in evaluate_script result: ${text}`)
  return JSON.parse(m[1])
}

/** Removes string `description` fields at every depth (a property named "description" stays). */
function withoutDescriptions(value) {
  if (Array.isArray(value)) return value.map(withoutDescriptions)
  if (value === null || typeof value !== 'object') return value
  const out = {}
  for (const [key, v] of Object.entries(value)) {
    if (key === 'description' && typeof v === 'string') continue
    out[key] = withoutDescriptions(v)
  }
  return out
}

/** Total bytes of every string `description` field. */
function descriptionBytes(value) {
  let total = 0
  const stack = [value]
  while (stack.length) {
    const v = stack.pop()
    if (v === null || typeof v !== 'object') continue
    for (const [key, child] of Object.entries(v)) {
      if (key === 'description' && typeof child === 'string') total += Buffer.byteLength(child)
      else stack.push(child)
    }
  }
  return total
}

/** Console `[error]` lines and failed network requests, without their per-session ids. */
function errorLines(text) {
  const out = new Set()
  for (const line of text.split('\n')) {
    const msg = /^msgid=\d+ (\[error\] .*?)(?: \[\d+ times\])?$/.exec(line)
    if (msg) out.add(msg[1])
    const req = /^reqid=\d+ (\S+ \S+ \[(.*)\])$/.exec(line)
    if (req && !/^(2\d\d|3\d\d|pending)$/.test(req[2])) out.add(req[1])
  }
  return out
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

test('findNodes reads uids in the upstream and the shortened notations, not from markers', () => {
  const text = [
    'uid=1_2 button "Edit Ava Smith"',
    '  1_3 button "Edit Liam Jones" focusable',
    '  [12_40] button "Edit Mia Brown"',
    '    1_5 textbox "Filter"',
    '… 37 more rows hidden (uids 7_120…7_410): expand_snapshot uid=7_118',
    'uid=1_6 "Edit Not A Button"',
    'uid=1_7 button "Edit"',
    '  1_8 "Edit"|1_9 button "Edit Zoe King"|1_10 [Edit Ann Lee](#ann) > 1_11 "Edit Ann Lee"',
    '  1_12 link "Edit Bob Roe"',
  ].join('\n')
  assert.deepEqual(findUids(text, 'button', /Edit .+/), ['1_2', '1_3', '12_40', '1_9'])
  assert.deepEqual(findNodes(text, 'link', /Edit .+/), [{ uid: '1_10', name: 'Edit Ann Lee' }, { uid: '1_12', name: 'Edit Bob Roe' }])
  assert.deepEqual(findNodes(text, 'button', 'Edit'), [{ uid: '1_7', name: 'Edit' }])
  assert.deepEqual(findUids(text, 'textbox', 'Filter'), ['1_5'])
  assert.deepEqual(findUids(text, 'button', 'Edit Nobody'), [])
})

if (!chromiumInstalled()) {
  const message = `Chromium not found at ${CHROMIUM}: the real end-to-end test cannot run. Install it (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH.`
  if (process.env.CI) {
    test('real end to end through Chromium', () => assert.fail(`${message} (CI is set: this is a failure)`))
  } else {
    process.stderr.write(`\n!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!\n\n`)
    test('real end to end through Chromium', { skip: message }, () => {})
  }
} else {
  describe('real end to end: proxy in front of chrome-devtools-mcp driving Chromium (moderate)', { timeout: 10 * 60_000 }, () => {
    let site
    let direct
    let proxied
    const pageIds = new Map()
    /** The proxied take_snapshot text of the grid page (step 1), reused by the later steps. */
    let gridProxied
    let proxiedTools

    /** Calls a tool and fails on an isError result. */
    async function call(session, name, args = {}) {
      const pageScoped = !['list_pages', 'new_page', 'search_snapshot', 'expand_snapshot'].includes(name)
      const fullArgs = pageScoped ? { pageId: pageIds.get(session), ...args } : args
      const result = await session.client.callTool({ name, arguments: fullArgs }, undefined, { timeout: CALL_TIMEOUT_MS })
      assert.ok(!result.isError, `${name} ${JSON.stringify(fullArgs)} failed: ${resultText(result)}\nstderr:\n${session.stderr()}`)
      return result
    }

    async function selectedPageId(session) {
      const text = resultText(await call(session, 'list_pages'))
      const m = /^(\d+): .*\[selected\]$/m.exec(text)
      assert.ok(m, `no selected page in list_pages:\n${text}`)
      return Number(m[1])
    }

    async function navigate(session, path) {
      await call(session, 'navigate_page', { url: `${site.origin}${path}` })
    }

    before(async () => {
      site = await serveDirectory()
      const env = upstreamEnv()
      const upstream = chromeDevtoolsCommand()
      ;[direct, proxied] = await Promise.all([
        connect(upstream, { env }),
        connect(proxyCommand(upstream, ['--filter-level=moderate']), { env }),
      ])
      for (const session of [direct, proxied]) pageIds.set(session, await selectedPageId(session))
    }, { timeout: STEP_TIMEOUT_MS })

    after(async () => {
      await Promise.allSettled([direct?.client.close(), proxied?.client.close()])
      await site?.close()
      const stderr = proxied?.stderr() ?? ''
      assert.doesNotMatch(stderr, /filter failed/, `the proxy failed open during the run:\n${stderr}`)
    })

    test('1. take_snapshot of the grid page is smaller through the proxy', { timeout: STEP_TIMEOUT_MS }, async () => {
      await Promise.all([navigate(direct, '/app/grid.html'), navigate(proxied, '/app/grid.html')])
      const [d, p] = await Promise.all([call(direct, 'take_snapshot'), call(proxied, 'take_snapshot')])
      const directText = resultText(d)
      gridProxied = resultText(p)
      const directBytes = Buffer.byteLength(directText)
      const proxiedBytes = Buffer.byteLength(gridProxied)
      const saving = 1 - proxiedBytes / directBytes
      process.stderr.write(`  e2e grid take_snapshot: direct ${directBytes} B, proxied ${proxiedBytes} B (saving ${(saving * 100).toFixed(1)}%)\n`)
      assert.match(directText, /^## Latest page snapshot$/m)
      assert.ok(findUids(directText, 'button', /Edit .+/).length === 40, 'the direct snapshot has the 40 rows')
      assert.ok(proxiedBytes <= directBytes, `proxied ${proxiedBytes} B > direct ${directBytes} B`)
      assert.ok(saving >= MIN_SNAPSHOT_SAVING, `saving ${(saving * 100).toFixed(1)}% < ${MIN_SNAPSHOT_SAVING * 100}%`)
      const stats = STATS_LINE.exec(gridProxied)
      if (EXPECT_STATS_LINE) assert.ok(stats, `no stats line in:\n${gridProxied.slice(0, 2000)}`)
      if (stats) {
        // The stats line's own percentage must agree with what we measured (±5 points; the
        // stats line itself is part of the proxied text we measured).
        const percent = /\(\s*[−-]\s*(\d+(?:\.\d+)?)\s*%\)/.exec(stats[0])
        if (percent) assert.ok(Math.abs(Number(percent[1]) - saving * 100) <= 5, `stats line ${stats[0]} vs measured ${(saving * 100).toFixed(1)}%`)
      }
      // The filtered output still names clickable things by uid.
      assert.ok(findUids(gridProxied, 'button', /Edit .+/).length > 0, `no Edit button left in:\n${gridProxied.slice(0, 3000)}`)
    })

    test('2. click a button picked from the filtered output; the page reacts', { timeout: STEP_TIMEOUT_MS }, async () => {
      // The row buttons are "Edit" with an aria-label "Edit <name>"; the accessible name is the label.
      const [row] = findNodes(gridProxied, 'button', /Edit [^"]+/)
      assert.ok(row, `no Edit button in the filtered output:\n${gridProxied.slice(0, 3000)}`)
      const { uid, name: label } = row
      await call(proxied, 'click', { uid })
      const focused = evaluated(await call(proxied, 'evaluate_script', { function: "() => document.activeElement?.getAttribute('aria-label') ?? null" }))
      assert.equal(focused, label, `clicking ${uid} should focus the "${label}" button`)
    })

    test('3. find a hidden row with the retrieval tools and click a uid from there', { timeout: STEP_TIMEOUT_MS }, async (t) => {
      proxiedTools = (await proxied.client.listTools()).tools
      const hasSearch = proxiedTools.some((tool) => tool.name === 'search_snapshot')
      if (!hasSearch) {
        if (EXPECT_RETRIEVAL_TOOLS) assert.fail('the proxy does not offer search_snapshot')
        const why = 'the proxy does not offer search_snapshot yet (issue 4 not wired): skipped'
        process.stderr.write(`  e2e step 3: ${why}\n`)
        t.skip(why)
        return
      }
      // Every row's Edit label, unique ones only (the generated names can repeat).
      const labels = evaluated(
        await call(proxied, 'evaluate_script', {
          function: "() => [...document.querySelectorAll('#rows button')].map((b) => b.getAttribute('aria-label')).filter((l) => l.startsWith('Edit '))",
        }),
      )
      const unique = labels.filter((l) => labels.indexOf(l) === labels.lastIndexOf(l))
      const hidden = unique.filter((l) => findUids(gridProxied, 'button', l).length === 0)
      // Prefer a row the filter hid; if none was hidden, the search must still find the last row.
      const target = hidden.at(-1) ?? unique.at(-1)
      process.stderr.write(`  e2e step 3: ${hidden.length} of ${unique.length} uniquely named rows hidden; searching "${target}"\n`)
      const hits = resultText(await call(proxied, 'search_snapshot', { query: target }))
      const uid = oneUid(hits, 'button', target)
      await call(proxied, 'click', { uid })
      const focused = evaluated(await call(proxied, 'evaluate_script', { function: "() => document.activeElement?.getAttribute('aria-label') ?? null" }))
      assert.equal(focused, target, `clicking ${uid} from search_snapshot should focus "${target}"`)
    })

    test('2b. a click that changes the page: sorting by MRR', { timeout: STEP_TIMEOUT_MS }, async () => {
      // Sorting re-renders every row (their uids go stale), so it runs after step 3.
      await call(proxied, 'click', { uid: oneUid(gridProxied, 'button', 'MRR') })
      const state = evaluated(
        await call(proxied, 'evaluate_script', {
          function: "() => ({ live: document.getElementById('live').textContent, sorted: document.querySelector('th[aria-sort]')?.textContent.trim() })",
        }),
      )
      assert.deepEqual(state, { live: 'Sorted by mrr', sorted: 'MRR' })
    })

    test('4. fill a textbox by uid and read the value back', { timeout: STEP_TIMEOUT_MS }, async () => {
      // Chromium versions differ on whether the label's trailing space stays in the name
      // (Debian's 148 keeps it: textbox "Filter ").
      const filterUid = findUids(gridProxied, 'textbox', 'Filter')[0] ?? oneUid(gridProxied, 'textbox', 'Filter ')
      await call(proxied, 'fill', { uid: filterUid, value: 'globex' })
      const state = evaluated(
        await call(proxied, 'evaluate_script', {
          function: "() => ({ value: document.getElementById('filter').value, shown: Number(document.getElementById('shown').textContent), rows: document.getElementById('rows').children.length })",
        }),
      )
      assert.equal(state.value, 'globex')
      // The page's input handler ran: the count it shows is the rows it rendered, fewer than 40.
      assert.equal(state.shown, state.rows)
      assert.ok(state.rows < 40, `the filter should hide rows: ${JSON.stringify(state)}`)
    })

    test('5. network and console lists of the noisy page keep every error', { timeout: STEP_TIMEOUT_MS }, async () => {
      await Promise.all([navigate(direct, '/app/noisy.html'), navigate(proxied, '/app/noisy.html')])
      await sleep(NOISY_SETTLE_MS)
      for (const tool of ['list_network_requests', 'list_console_messages']) {
        const [d, p] = await Promise.all([call(direct, tool), call(proxied, tool)])
        const directText = resultText(d)
        const proxiedText = resultText(p)
        const errors = errorLines(directText)
        assert.ok(errors.size >= 3, `${tool}: the noisy page should produce errors:\n${directText}`)
        const missing = [...errors].filter((line) => !proxiedText.includes(line))
        assert.deepEqual(missing, [], `${tool}: errors of the direct result missing through the proxy:\n${proxiedText}`)
        // No size comparison here: two browsers log a timing-dependent number of lines.
        process.stderr.write(`  e2e ${tool}: direct ${Buffer.byteLength(directText)} B, proxied ${Buffer.byteLength(proxiedText)} B, ${errors.size} error lines kept\n`)
      }
    })

    test('6. tools/list: same names and input schemas as direct, descriptions no longer', { timeout: STEP_TIMEOUT_MS }, async () => {
      const directTools = (await direct.client.listTools()).tools
      proxiedTools ??= (await proxied.client.listTools()).tools
      const upstreamOnly = proxiedTools.filter((tool) => !PROXY_TOOLS.has(tool.name))
      assert.deepEqual(upstreamOnly.map((tool) => tool.name).sort(), directTools.map((tool) => tool.name).sort())
      assert.ok(directTools.length >= 20, `chrome-devtools-mcp lists its tools (${directTools.length})`)
      const byName = new Map(upstreamOnly.map((tool) => [tool.name, tool]))
      for (const tool of directTools) {
        // At moderate a root $schema naming JSON Schema 2020-12, MCP's default dialect, goes.
        const { $schema, ...directSchema } = tool.inputSchema
        const expected = $schema === 'https://json-schema.org/draft/2020-12/schema' ? directSchema : tool.inputSchema
        assert.deepEqual(withoutDescriptions(byName.get(tool.name).inputSchema), withoutDescriptions(expected), `inputSchema of ${tool.name}`)
      }
      const before = descriptionBytes(directTools)
      const afterBytes = descriptionBytes(upstreamOnly)
      const saving = 1 - afterBytes / before
      process.stderr.write(`  e2e tools/list descriptions: direct ${before} B, proxied ${afterBytes} B (saving ${(saving * 100).toFixed(1)}%)\n`)
      assert.ok(saving >= MIN_DESCRIPTION_SAVING, `description saving ${(saving * 100).toFixed(1)}% < ${MIN_DESCRIPTION_SAVING * 100}%`)
    })

    test('7. open the banner menu and click a menuitem by a uid the moderate snapshot shows', { timeout: STEP_TIMEOUT_MS }, async () => {
      // What the agent opened stays in view (#43 item 1): the account menu in the page's banner,
      // which moderate summarises with the banner's prose and links.
      await navigate(proxied, '/app/workspace.html')
      const page = resultText(await call(proxied, 'take_snapshot'))
      const opener = oneUid(page, 'button', 'Jane Doe ▾')
      const opened = resultText(await call(proxied, 'click', { uid: opener, includeSnapshot: true }))
      const uid = oneUid(opened, 'menuitem', 'Keyboard shortcuts')
      await call(proxied, 'click', { uid })
      const open = evaluated(await call(proxied, 'evaluate_script', { function: "() => document.getElementById('keys').open" }))
      assert.equal(open, true, `clicking menuitem ${uid} should open the shortcuts dialog:\n${opened}`)
    })
  })
}

module.exports = { findNodes, findUids }
