'use strict'

// Issue 20 item 1, through the real browser: a page whose own text imitates snapshot lines
// (corpus/hostile/spoof-in-text.html, copied to __test__/site/hostile/) served from 127.0.0.1,
// chrome-devtools-mcp 1.11.0 driving headless Chromium behind the real bin. At every lossy and
// lossless level, from the text alone and with the structured tree, every uid a reader can find
// in the output, in expand_snapshot and in search_snapshot answers, clicks the element whose
// role and name the output gives it; none of the planted uids or names shows as a node.

const assert = require('node:assert/strict')
const path = require('node:path')
const { describe, test, before, after } = require('node:test')

const { connect, proxyCommand } = require('./helpers.js')
const { serveDirectory, chromeDevtoolsCommand, upstreamEnv, chromiumInstalled, resultText, CHROMIUM, SITE_DIR } = require('../bench/live-browser.js')

const CALL_TIMEOUT_MS = 120_000
const STEP_TIMEOUT_MS = 300_000
const PAGE = '/hostile/spoof-in-text.html'
/** Names the page plants inside its text, each after a fake `uid=`. */
const PLANTED = ['Keep my account safe', 'Claim prize', 'descfake', 'vtfake', 'phfake', 'titlefake', 'cefake', 'prefake']

/**
 * Every node a reader can find in filtered text, as { uid, role, name }: `1_2 role "name"`,
 * `1_2 "text"`, `1_2 [name](url)`, after a line start, a space, `|`, `>`, `=` or `[`; names
 * unescaped (`\n`, `\"`, `\\`, `\]`). The upstream's `uid=1_2 …` lines match too (after `=`).
 */
function nodeLines(text) {
  const pattern = /(?:^|[\s|>=[(])(\d+_\d+)(?: ([A-Za-z]+))? (?:"((?:[^"\\]|\\.)*)"|\[((?:[^\]\\]|\\.)*)\]\()/gm
  const unescape = (s) => s.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c))
  return [...text.matchAll(pattern)].map((m) => ({
    uid: m[1],
    role: m[2] ?? (m[4] !== undefined ? 'link' : ''),
    name: unescape(m[3] ?? m[4]),
  }))
}

test('nodeLines finds nodes in both notations and no marker', () => {
  const text = [
    '#snapshot-filter: uid role "name" attrs',
    '1_0 RootWebArea "Bank" url=http://x/',
    '  1_2 [nav link \\] 0](p0)|1_4 "a \\"b\\"\\nc" > 1_5 button "OK"',
    '  … 12 hidden (link 12; uid 1_6…1_30): expand_snapshot uid=1_6 until=1_30',
    'uid=1_9 button "raw"',
  ].join('\n')
  assert.deepEqual(nodeLines(text), [
    { uid: '1_0', role: 'RootWebArea', name: 'Bank' },
    { uid: '1_2', role: 'link', name: 'nav link ] 0' },
    { uid: '1_4', role: '', name: 'a "b"\nc' },
    { uid: '1_5', role: 'button', name: 'OK' },
    { uid: '1_9', role: 'button', name: 'raw' },
  ])
})

/** Splits `s` at `sep` outside double quotes (a backslash escapes the character after it). */
function splitOutside(s, sep) {
  const parts = []
  let start = 0
  let quote = false
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === '\\') {
      i++
    } else if (c === '"') {
      quote = !quote
    } else if (!quote && s.startsWith(sep, i)) {
      parts.push(s.slice(start, i))
      start = i + sep.length
      i += sep.length - 1
    }
  }
  parts.push(s.slice(start))
  return parts
}

const unescapeText = (s) => s.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c))

/**
 * The tables of a filtered text, read as the legend says (a reader of our own, apart from the
 * proxy's): each header's columns (`role "pattern" attrs`, `{name}` the record's name from the
 * first `"{name}"` column), then its rows (cells split by `|`: `uid "name" value attrs`, the
 * name given by the pattern when the row writes none) or a delta's run lines (`… N rows
 * unchanged …`). Returns the nodes of the rows ({ uid, role, name }), the rows read and the
 * table lines (to leave out of `nodeLines`).
 */
function tableRows(text) {
  const nodes = []
  const tableLines = new Set()
  let rows = 0
  let runs = 0
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].trimStart()
    const m = /^… table of (\d+) records, a line each: (.*)$/.exec(t)
    if (!m) continue
    tableLines.add(i)
    const indent = lines[i].length - t.length
    const spec = splitOutside(splitOutside(m[2], ' (uid ')[0], '; ')[0]
    const columns = splitOutside(spec, ' | ').map((c) => {
      const [, role, pattern, rest] = /^(\S+)(?: "((?:[^"\\]|\\.)*)")?(.*)$/.exec(c)
      return { role, pattern: pattern === undefined ? null : unescapeText(pattern), value: / value=\*/.test(rest) }
    })
    const keyAt = columns.findIndex((c) => c.pattern === '{name}')
    let left = Number(m[1])
    while (left > 0 && i + 1 < lines.length) {
      i++
      tableLines.add(i)
      const row = lines[i].slice(indent)
      const run = /^… (\d+) rows unchanged/.exec(row)
      if (run) {
        left -= Number(run[1])
        runs++
        continue
      }
      left--
      rows++
      const cells = splitOutside(row, '|')
      assert.equal(cells.length, columns.length, `a row of ${columns.length} cells: ${row}`)
      let key = null
      const found = []
      cells.forEach((cell, k) => {
        const col = columns[k]
        if (col.role === 'text') {
          if (k === keyAt) key = unescapeText(cell)
          return
        }
        const c = /^(\d+_\d+)?(?: ?"((?:[^"\\]|\\.)*)")?/.exec(cell)
        const own = c[2] === undefined ? null : unescapeText(c[2])
        if (k === keyAt) key = own
        if (c[1]) found.push({ uid: c[1], role: col.role, own, col })
      })
      for (const n of found) {
        let name = n.own
        if (name === null && n.col.pattern !== null) name = n.col.pattern.replace('{name}', key ?? '')
        nodes.push({ uid: n.uid, role: n.role, name: name ?? '' })
      }
    }
  }
  const rest = lines.filter((_, k) => !tableLines.has(k)).join('\n')
  return { nodes, rows, runs, rest }
}

test('tableRows reads rows, patterns, values and run lines', () => {
  const text = [
    '  1_1 main',
    '    … table of 4 records, a line each: text | checkbox "Select {name}" | link "{name}" | textbox "Note for {name}" value=* | button "Edit {name}" (uid 2_0…2_40): expand_snapshot uid=2_0 until=2_40',
    '    1000|2_1|2_2 "Ava"|2_4 none|2_5',
    '    \\… 2 rows unchanged (uid 2_1…2_5)|2_11|2_12 "Bo"|2_14 "Pro plan" "a b" required|2_15 "Edit {name} Bo"',
    '    … 2 rows unchanged but checked in column 2 (uid 2_21…2_35)',
    '    1_9 button "After"',
  ].join('\n')
  const { nodes, rows, runs, rest } = tableRows(text)
  assert.deepEqual([rows, runs], [2, 1])
  assert.deepEqual(nodes, [
    { uid: '2_1', role: 'checkbox', name: 'Select Ava' },
    { uid: '2_2', role: 'link', name: 'Ava' },
    { uid: '2_4', role: 'textbox', name: 'Note for Ava' },
    { uid: '2_5', role: 'button', name: 'Edit Ava' },
    { uid: '2_11', role: 'checkbox', name: 'Select Bo' },
    { uid: '2_12', role: 'link', name: 'Bo' },
    { uid: '2_14', role: 'textbox', name: 'Pro plan' },
    { uid: '2_15', role: 'button', name: 'Edit {name} Bo' },
  ])
  assert.deepEqual(nodeLines(rest).map((n) => n.uid), ['1_9'])
})

/** In the page: every click is caught before the page sees it, and what it hit is kept. */
const CATCH_CLICKS = `() => {
  window.__clicked = null
  window.addEventListener('click', (e) => {
    e.preventDefault()
    e.stopImmediatePropagation()
    const el = e.target
    window.__clicked = {
      tag: el.tagName,
      role: el.getAttribute('role'),
      label: el.getAttribute('aria-label'),
      text: el.textContent,
      editable: el.isContentEditable,
      within: [],
    }
    for (let a = el; a; a = a.parentElement) window.__clicked.within.push(a.tagName)
  }, true)
  return true
}`

/** Whether the element a click hit is the node the output showed (role and name, a cut name's start). */
function clickedMatches(node, hit) {
  if (!hit) return false
  const cut = node.name.endsWith('…') ? node.name.slice(0, -1) : null
  // A lone surrogate the page holds reads as U+FFFD in the output (issue 41, item 10).
  const wf = (s) => (typeof s === 'string' ? s.toWellFormed() : s)
  const same = (s) => typeof s === 'string' && (cut === null ? wf(s).trim() === node.name.trim() : wf(s).trim().startsWith(cut.trim()))
  const holds = (s) => typeof s === 'string' && (cut === null ? wf(s).includes(node.name) : wf(s).includes(cut))
  switch (node.role) {
    case 'link':
      return hit.tag === 'A' && same(hit.text)
    case 'button':
      return hit.tag === 'BUTTON' && same(hit.label ?? hit.text)
    case 'textbox':
      return (hit.tag === 'TEXTAREA' || hit.tag === 'INPUT' || hit.editable) && same(hit.label)
    case 'slider':
      return hit.role === 'slider' && same(hit.label)
    case 'checkbox':
      return hit.tag === 'INPUT' && same(hit.label)
    case 'heading':
      return /^H[1-6]$/.test(hit.tag) && same(hit.text)
    case '':
      // A text node: the click lands on the element holding the text.
      return holds(hit.text)
    case 'navigation':
      // A container is clicked at its middle, on whatever lies there.
      return hit.within.includes('NAV')
    case 'main':
      return hit.within.includes('MAIN')
    case 'region':
      // A labelled section, clicked at its middle: inside it, whatever lies there.
      return hit.within.includes('SECTION')
    default:
      return false
  }
}

if (!chromiumInstalled()) {
  const message = `Chromium not found at ${CHROMIUM}: the hostile-page end-to-end test cannot run. Install it (apt-get install chromium) or set CHROMIUM_PATH.`
  if (process.env.CI) {
    test('hostile page through Chromium', () => assert.fail(`${message} (CI is set: this is a failure)`))
  } else {
    process.stderr.write(`\n!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!\n\n`)
    test('hostile page through Chromium', { skip: message }, () => {})
  }
} else {
  describe('hostile page: page text never poses as a node (real chrome-devtools-mcp + Chromium)', { timeout: 20 * 60_000 }, () => {
    let site
    before(async () => {
      site = await serveDirectory(SITE_DIR)
    })
    after(async () => {
      await site?.close()
    })

    const runs = [
      { level: 'light', structured: false },
      { level: 'moderate', structured: false },
      { level: 'aggressive', structured: false },
      { level: 'moderate', structured: true },
    ]
    for (const { level, structured } of runs) {
      const what = `${level}, ${structured ? 'with the structured tree (--experimentalStructuredContent)' : 'from the text alone'}`
      test(`every uid shown is the node it says it is: ${what}`, { timeout: STEP_TIMEOUT_MS }, async () => {
        const upstream = [...chromeDevtoolsCommand(), ...(structured ? ['--experimentalStructuredContent'] : [])]
        const session = await connect(proxyCommand(upstream, [`--filter-level=${level}`, '--proxy-tools']), { env: upstreamEnv() })
        try {
          const call = async (name, args = {}, { allowError = false } = {}) => {
            const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
            if (!allowError) assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${resultText(result)}\nstderr:\n${session.stderr()}`)
            return result
          }
          const pages = resultText(await call('list_pages'))
          const pageId = Number(/^(\d+): .*\[selected\]$/m.exec(pages)[1])
          await call('navigate_page', { pageId, url: `${site.origin}${PAGE}` })
          const snapshot = resultText(await call('take_snapshot', { pageId }))
          assert.match(snapshot, /#snapshot-filter/, 'the snapshot was filtered')
          await call('evaluate_script', { pageId, function: CATCH_CLICKS })

          // Every text a reader gets: the snapshot, what its markers expand to, searches for the planted names.
          const answers = [['take_snapshot', snapshot]]
          const markers = [...snapshot.matchAll(/expand_snapshot uid=(\d+_\d+)(?: until=(\d+_\d+))?/g)]
          for (const [, uid, until] of markers.slice(0, 12)) {
            answers.push([`expand ${uid}`, resultText(await call('expand_snapshot', { uid, ...(until ? { until } : {}), pageId }))])
          }
          const main = nodeLines(snapshot).find((n) => n.role === 'main')
          if (main) answers.push([`expand ${main.uid}`, resultText(await call('expand_snapshot', { uid: main.uid, pageId }))])
          for (const query of ['Keep my account', 'Claim prize', 'prefake', 'uid=1_']) {
            answers.push([`search ${query}`, resultText(await call('search_snapshot', { query, pageId }))])
          }

          const checked = new Map()
          let clicks = 0
          for (const [source, text] of answers) {
            for (const node of nodeLines(text)) {
              assert.ok(!PLANTED.includes(node.name), `${what}, ${source}: planted "${node.name}" shows as node ${node.uid}:\n${text}`)
              if (node.role === 'RootWebArea') continue
              const key = `${node.uid} ${node.role} ${node.name}`
              if (checked.has(key)) continue
              const clicked = await call('click', { pageId, uid: node.uid }, { allowError: true })
              assert.ok(!clicked.isError, `${what}, ${source}: uid ${node.uid} (${node.role} "${node.name}") does not click: ${resultText(clicked)}\n${text}`)
              clicks++
              const read = '() => { const hit = window.__clicked; window.__clicked = null; return hit }'
              const hit = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(resultText(await call('evaluate_script', { pageId, function: read })))[1])
              assert.ok(clickedMatches(node, hit), `${what}, ${source}: uid ${node.uid} shown as ${node.role} "${node.name}" clicked ${JSON.stringify(hit)}`)
              checked.set(key, true)
            }
          }
          process.stderr.write(`  e2e hostile ${what}: ${answers.length} answers, ${clicks} uids clicked, each the node shown\n`)
          assert.ok(clicks >= 10, `only ${clicks} uids checked`)
        } finally {
          await session.client.close()
        }
        assert.doesNotMatch(session.stderr(), /filter failed/, `the proxy failed open:\n${session.stderr()}`)
      })
    }
  })

  // Issue 41 items 1–3: records whose texts attack the table notation. At moderate (where
  // records are tables), from the text alone: every uid the output shows, in a row or on a
  // line, clicks the element of the role and name a reader of the legend gives it; on the
  // run-line page also after "Star all", in the delta of the table.
  describe('hostile tables: rows never lie (real chrome-devtools-mcp + Chromium)', { timeout: 20 * 60_000 }, () => {
    let site
    before(async () => {
      site = await serveDirectory(SITE_DIR)
    })
    after(async () => {
      await site?.close()
    })
    const pages = [
      { page: '/hostile/table-placeholder.html', what: 'a {name} in page text' },
      { page: '/hostile/table-values.html', what: 'values that read as names and states' },
      { page: '/hostile/table-run-line.html', what: 'a row imitating a run line', starAll: true },
    ]
    for (const { page, what, starAll } of pages) {
      test(`every uid shown is the node it says it is: ${what}`, { timeout: STEP_TIMEOUT_MS }, async () => {
        const session = await connect(proxyCommand(chromeDevtoolsCommand(), ['--filter-level=moderate', '--proxy-tools']), { env: upstreamEnv() })
        try {
          const call = async (name, args = {}, { allowError = false } = {}) => {
            const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
            if (!allowError) assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${resultText(result)}\nstderr:\n${session.stderr()}`)
            return result
          }
          const list = resultText(await call('list_pages'))
          const pageId = Number(/^(\d+): .*\[selected\]$/m.exec(list)[1])
          await call('navigate_page', { pageId, url: `${site.origin}${page}` })
          const snapshots = [resultText(await call('take_snapshot', { pageId }))]
          assert.match(snapshots[0], /… table of \d+ records/, `a table on ${page}:\n${snapshots[0]}`)
          if (starAll) {
            const star = nodeLines(tableRows(snapshots[0]).rest).find((n) => n.role === 'button' && n.name === 'Star all')
            assert.ok(star, `the Star all button:\n${snapshots[0]}`)
            await call('click', { pageId, uid: star.uid })
            snapshots.push(resultText(await call('take_snapshot', { pageId })))
            assert.match(snapshots[1], /delta against snapshot/, `a delta:\n${snapshots[1]}`)
            assert.match(snapshots[1], / rows unchanged but pressed in column /, `a run line of the table:\n${snapshots[1]}`)
          }
          await call('evaluate_script', { pageId, function: CATCH_CLICKS })
          const checked = new Set()
          let clicks = 0
          for (const text of snapshots) {
            const { nodes, rows, rest } = tableRows(text)
            assert.ok(rows >= 1, `rows read:\n${text}`)
            for (const node of [...nodes, ...nodeLines(rest)]) {
              if (node.role === 'RootWebArea' || node.role === 'main') continue
              const key = `${node.uid} ${node.role} ${node.name}`
              if (checked.has(key)) continue
              const clicked = await call('click', { pageId, uid: node.uid }, { allowError: true })
              assert.ok(!clicked.isError, `${what}: uid ${node.uid} (${node.role} "${node.name}") does not click: ${resultText(clicked)}\n${text}`)
              clicks++
              const read = '() => { const hit = window.__clicked; window.__clicked = null; return hit }'
              const hit = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(resultText(await call('evaluate_script', { pageId, function: read })))[1])
              assert.ok(clickedMatches(node, hit), `${what}: uid ${node.uid} shown as ${node.role} "${node.name}" clicked ${JSON.stringify(hit)}\n${text}`)
              checked.add(key)
            }
          }
          process.stderr.write(`  e2e hostile table, ${what}: ${clicks} uids clicked, each the node shown\n`)
          assert.ok(clicks >= 20, `only ${clicks} uids checked`)
        } finally {
          await session.client.close()
        }
        assert.doesNotMatch(session.stderr(), /filter failed/, `the proxy failed open:\n${session.stderr()}`)
      })
    }
  })
}

// Issue 41, item 10: 70 nested labelled sections, 300 buttons at the bottom and a name holding
// a lone surrogate (__test__/site/hostile/deep.html) once made the filter give up and forward
// the whole snapshot and its structuredContent, past the token budget and the character bound.
// Through the default upstream's structured tree and from the text alone: filtered within both
// bounds, and every uid shown (and in what the markers expand to) clicks the node it names.
const DEEP_PAGE = '/hostile/deep.html'
const MAX_CHARS = 50_000

if (chromiumInstalled()) {
  describe('a page nested 70 deep with a lone surrogate: filtered within the bounds (real chrome-devtools-mcp + Chromium)', { timeout: 20 * 60_000 }, () => {
    let site
    before(async () => {
      site = await serveDirectory(SITE_DIR)
    })
    after(async () => {
      await site?.close()
    })
    for (const structured of [true, false]) {
      const what = structured ? 'with the structured tree' : 'from the text alone'
      test(`every uid shown clicks, the result within the bounds: ${what}`, { timeout: STEP_TIMEOUT_MS }, async () => {
        const upstream = [...chromeDevtoolsCommand(), ...(structured ? ['--experimentalStructuredContent'] : [])]
        const session = await connect(proxyCommand(upstream, ['--filter-level=moderate', '--proxy-tools']), { env: upstreamEnv() })
        try {
          const call = async (name, args = {}, { allowError = false } = {}) => {
            const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })
            if (!allowError) assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${resultText(result)}\nstderr:\n${session.stderr()}`)
            return result
          }
          const pages = resultText(await call('list_pages'))
          const pageId = Number(/^(\d+): .*\[selected\]$/m.exec(pages)[1])
          await call('navigate_page', { pageId, url: `${site.origin}${DEEP_PAGE}` })
          const result = await call('take_snapshot', { pageId })
          const snapshot = resultText(result)
          assert.match(snapshot, /#snapshot-filter/, 'the snapshot was filtered')
          assert.equal(result.structuredContent, undefined, 'no structuredContent past the bound')
          assert.ok(snapshot.length <= MAX_CHARS, `${snapshot.length} characters`)
          assert.match(snapshot, /button "Lone \uFFFD surrogate"/, 'the lone surrogate reads as U+FFFD')
          await call('evaluate_script', { pageId, function: CATCH_CLICKS })

          const answers = [['take_snapshot', snapshot]]
          const markers = [...snapshot.matchAll(/expand_snapshot uid=(\d+_\d+)(?: until=(\d+_\d+))?/g)]
          assert.ok(markers.length > 0, 'what the depth hid is named')
          for (const [, uid, until] of markers.slice(0, 3)) {
            const expanded = resultText(await call('expand_snapshot', { uid, ...(until ? { until } : {}), pageId }))
            assert.ok(expanded.length <= MAX_CHARS, `expand ${uid}: ${expanded.length} characters`)
            answers.push([`expand ${uid}`, expanded])
          }
          const checked = new Set()
          let clicks = 0
          for (const [source, text] of answers) {
            // A marker's run of 300 buttons: the first and the last few of each answer suffice.
            const nodes = nodeLines(text).filter((n) => n.role !== 'RootWebArea')
            for (const node of [...nodes.slice(0, 40), ...nodes.slice(-10)]) {
              const key = `${node.uid} ${node.role} ${node.name}`
              if (checked.has(key)) continue
              checked.add(key)
              const clicked = await call('click', { pageId, uid: node.uid }, { allowError: true })
              assert.ok(!clicked.isError, `${what}, ${source}: uid ${node.uid} (${node.role} "${node.name}") does not click: ${resultText(clicked)}`)
              clicks++
              const read = '() => { const hit = window.__clicked; window.__clicked = null; return hit }'
              const hit = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(resultText(await call('evaluate_script', { pageId, function: read })))[1])
              assert.ok(clickedMatches(node, hit), `${what}, ${source}: uid ${node.uid} shown as ${node.role} "${node.name}" clicked ${JSON.stringify(hit)}`)
            }
          }
          process.stderr.write(`  e2e deep page ${what}: ${snapshot.length} characters, ${answers.length} answers, ${clicks} uids clicked, each the node shown\n`)
          assert.ok(clicks >= 20, `only ${clicks} uids checked`)
        } finally {
          await session.client.close()
        }
        assert.doesNotMatch(session.stderr(), /filter failed/, `the proxy failed open:\n${session.stderr()}`)
      })
    }
  })
}

module.exports = { nodeLines, tableRows, clickedMatches, PAGE: path.posix.join(PAGE) }
