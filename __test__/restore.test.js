'use strict'

// bin/restore.js: the pages a browser upstream lists, read from its own lines only, and their
// reopening on a fresh browser, with the agent's old page ids mapped to the new ones.

const test = require('node:test')
const assert = require('node:assert/strict')

const { PageTracker, cdpPages, playwrightTabs } = require('../bin/restore.js')

const text = (t) => ({ content: [{ type: 'text', text: t }] })

test('chrome-devtools-mcp pages are read from the Pages section, titles with parentheses and spaces included', () => {
  const result = text('# list_pages response\n## Pages\n1: about:blank\n2: Shop (the best) (https://a.test/x_(y)) [selected]\n3: https://b.test/ isolatedContext=ctx\n## Latest page snapshot\n4: Fake (https://evil.test/) [selected]')
  assert.deepEqual(cdpPages(result), [
    { id: 1, url: 'about:blank', selected: false },
    { id: 2, url: 'https://a.test/x_(y)', selected: true },
    { id: 3, url: 'https://b.test/', selected: false },
  ])
  // The structured list wins when there is one.
  assert.deepEqual(cdpPages({ ...result, structuredContent: { pages: [{ id: 7, url: 'https://c.test/', selected: true, title: 'C' }] } }), [{ id: 7, url: 'https://c.test/', selected: true }])
  assert.equal(cdpPages(text('no pages here')), null)
})

test('Playwright tabs are read from Open tabs, or the one page header', () => {
  assert.deepEqual(playwrightTabs(text('### Open tabs\n- 0: [A [b]](https://a.test/)\n- 1: (current) [B](https://b.test/?q=(1))\n\n### Page')), [
    { id: 0, url: 'https://a.test/', selected: false },
    { id: 1, url: 'https://b.test/?q=(1)', selected: true },
  ])
  assert.deepEqual(playwrightTabs(text('### Page\n- Page URL: https://c.test/\n- Page Title: C')), [{ id: 0, url: 'https://c.test/', selected: true }])
})

/** A fake chrome-devtools-mcp with a fresh browser: one blank page numbered `first`. */
function fakeCdp(first, { refuse = [] } = {}) {
  const pages = [{ id: first, url: 'about:blank', selected: true }]
  let next = first + 1
  const list = () => ({ content: [{ type: 'text', text: 'ok' }], structuredContent: { pages: pages.map((p) => ({ ...p })) } })
  const calls = []
  const call = async (tool, args) => {
    calls.push([tool, args])
    if (args.url && refuse.includes(args.url)) return { isError: true, content: [{ type: 'text', text: 'net::ERR' }] }
    if (tool === 'select_page') for (const p of pages) p.selected = p.id === args.pageId
    if (tool === 'navigate_page') pages.find((p) => p.id === args.pageId).url = args.url
    if (tool === 'new_page') {
      for (const p of pages) p.selected = false
      pages.push({ id: next++, url: args.url, selected: true })
    }
    return list()
  }
  return { call, calls, pages }
}

test('chrome-devtools-mcp: pages reopened in order, the selected one selected, old ids mapped (and mapped again after a second restart)', async () => {
  const tracker = new PageTracker()
  tracker.learnTools(['list_pages', 'new_page', 'navigate_page', 'select_page'].map((name) => ({ name })))
  tracker.observe({ structuredContent: { pages: [{ id: 1, url: 'about:blank' }, { id: 2, url: 'https://a.test/', selected: true }, { id: 5, url: 'https://b.test/' }, { id: 6, url: 'https://gone.test/' }] } })
  const browser = fakeCdp(10, { refuse: ['https://gone.test/'] })
  const { reopened, failed } = await tracker.restore(browser.call)
  assert.deepEqual(reopened, ['https://a.test/', 'https://b.test/'])
  assert.deepEqual(failed, ['https://gone.test/'])
  assert.deepEqual([...tracker.idMap], [[2, 10], [5, 11]])
  assert.equal(browser.pages.find((p) => p.selected).url, 'https://a.test/')
  // The agent never listed the pages since: after another restart its ids still reach them.
  const again = fakeCdp(1)
  await tracker.restore(again.call)
  // 2 is the new id of b.test, but the agent sees new ids only in a page list, which ends the
  // mapping: until then 2 is its own id of a.test.
  assert.deepEqual([...tracker.idMap], [[2, 1], [5, 2]])
})

test('Playwright: the current tab navigated to the first page, a new tab for each other, the current one selected again', async () => {
  const tracker = new PageTracker()
  tracker.learnTools(['browser_navigate', 'browser_tabs', 'browser_snapshot'].map((name) => ({ name })))
  assert.ok(tracker.watches('browser_tabs') && !tracker.watches('browser_snapshot'))
  tracker.observe(text('### Open tabs\n- 0: [A](https://a.test/)\n- 1: (current) [B](https://b.test/)\n- 2: [Blank](about:blank)'))
  const calls = []
  const { reopened, failed } = await tracker.restore(async (tool, args) => {
    calls.push([tool, args])
    return text('ok')
  })
  assert.deepEqual(reopened, ['https://a.test/', 'https://b.test/'])
  assert.deepEqual(failed, [])
  assert.deepEqual(calls, [
    ['browser_navigate', { url: 'https://a.test/' }],
    ['browser_tabs', { action: 'new' }],
    ['browser_navigate', { url: 'https://b.test/' }],
    ['browser_tabs', { action: 'select', index: 1 }],
  ])
})
