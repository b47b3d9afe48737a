// @ts-check
'use strict'

// The agent's pages, as a browser upstream last listed them, and their reopening after the
// upstream restarted (bin/proxy.js). Two upstreams are known by their tools:
// - chrome-devtools-mcp (list_pages, new_page, navigate_page, select_page): every result of a
//   page tool carries the pages, from `structuredContent.pages` ({id, url, selected}) or the
//   text's `## Pages` section (`<id>: <title> (<url>) [selected]`, one a line);
// - Playwright MCP (browser_navigate, browser_tabs): `### Open tabs` (`- <i>: (current)
//   [<title>](<url>)`), or with one tab `- Page URL: <url>`.
// Only results of those tools are read (small ones), and only the lines the upstream writes
// before any page content, so page text never becomes a page. What a page held (forms, scroll,
// in-page state, history) is not restored: only its URL, and which page was selected.

const CDP_TOOLS = ['list_pages', 'new_page', 'navigate_page', 'select_page', 'close_page']
const PLAYWRIGHT_TOOLS = ['browser_navigate', 'browser_tabs', 'browser_navigate_back', 'browser_close']

/** A URL worth reopening: a real page, not the blank one a fresh browser starts with. */
function reopenable(url) {
  return typeof url === 'string' && url !== '' && url !== 'about:blank' && !/^(chrome|devtools|chrome-extension):/.test(url)
}

/** chrome-devtools-mcp's pages from a result: [{id, url, selected}], or null when it lists none. */
function cdpPages(result) {
  const structured = result?.structuredContent?.pages
  if (Array.isArray(structured)) {
    return structured.filter((p) => typeof p?.id === 'number' && typeof p.url === 'string').map((p) => ({ id: p.id, url: p.url, selected: p.selected === true }))
  }
  const text = (result?.content ?? []).find((b) => b?.type === 'text')?.text
  if (typeof text !== 'string') return null
  const lines = text.split('\n')
  const start = lines.indexOf('## Pages')
  if (start === -1) return null
  const pages = []
  for (const line of lines.slice(start + 1)) {
    // `<id>: <label>[ [selected]][ isolatedContext=<name>]`; the label is the url, or
    // `<title> (<url>)` (a url holds no space).
    const m = /^(\d+): (.*?)( \[selected\])?( isolatedContext=\S+)?$/.exec(line)
    if (!m) break
    const label = m[2]
    const url = /(?:^|.* )\((\S+)\)$/.exec(label)?.[1] ?? label
    pages.push({ id: Number(m[1]), url, selected: m[3] !== undefined })
  }
  return pages
}

/** Playwright MCP's tabs from a result: [{id: index, url, selected}], or null. */
function playwrightTabs(result) {
  const text = (result?.content ?? []).find((b) => b?.type === 'text')?.text
  if (typeof text !== 'string') return null
  const lines = text.split('\n')
  const start = lines.indexOf('### Open tabs')
  if (start !== -1) {
    const tabs = []
    for (const line of lines.slice(start + 1)) {
      const m = /^- (\d+):( \(current\))? \[.*\]\((\S*)\)( \[crashed\])?$/.exec(line)
      if (!m) break
      tabs.push({ id: Number(m[1]), url: m[3], selected: m[2] !== undefined })
    }
    return tabs
  }
  // One tab: its header (`### Page`, then `- Page URL: …` on the next line).
  const page = lines.indexOf('### Page')
  const url = page === -1 ? undefined : /^- Page URL: (\S+)$/.exec(lines[page + 1] ?? '')?.[1]
  return url === undefined ? null : [{ id: 0, url, selected: true }]
}

class PageTracker {
  constructor() {
    /** @type {'cdp' | 'playwright' | null} which browser upstream, from its tools */
    this.kind = null
    /** @type {{id: number, url: string, selected: boolean}[]} the pages last listed */
    this.pages = []
    /**
     * The agent's page id -> the restarted browser's, after a restore (chrome-devtools-mcp's ids
     * are numbers), until the agent sees the pages listed again.
     */
    this.idMap = new Map()
  }

  /** Learns which upstream this is from its tools (a `tools/list` result's `tools`). */
  learnTools(tools) {
    const names = new Set((Array.isArray(tools) ? tools : []).map((t) => t?.name))
    if (['new_page', 'navigate_page', 'select_page', 'list_pages'].every((n) => names.has(n))) this.kind = 'cdp'
    else if (['browser_navigate', 'browser_tabs'].every((n) => names.has(n))) this.kind = 'playwright'
    else this.kind = null
  }

  /** True for the tools whose results list the pages. */
  watches(tool) {
    if (this.kind === 'cdp') return CDP_TOOLS.includes(tool)
    if (this.kind === 'playwright') return PLAYWRIGHT_TOOLS.includes(tool)
    return false
  }

  /** Reads the pages a result of a watched tool lists. */
  observe(result) {
    const pages = this.kind === 'cdp' ? cdpPages(result) : this.kind === 'playwright' ? playwrightTabs(result) : null
    if (pages) this.pages = pages
  }

  /** The page id the client wrote, as the restarted upstream knows it. */
  mapped(id) {
    return this.idMap.get(id)
  }

  /**
   * Reopens the pages last listed on a fresh upstream through `call(tool, args)` (resolves the
   * tool's result, rejects on an error). Returns what was reopened and what failed, by URL.
   * @param {(tool: string, args: object) => Promise<any>} call
   * @returns {Promise<{reopened: string[], failed: string[]}>}
   */
  async restore(call) {
    const wanted = this.pages.filter((p) => reopenable(p.url))
    const reopened = []
    const failed = []
    const old = this.pages
    // The ids the agent knows, by the id each page had until now (a restore the agent has not
    // seen the pages of since mapped them).
    const prior = this.idMap
    this.idMap = new Map()
    if (wanted.length === 0) return { reopened, failed }
    if (this.kind === 'cdp') await this.restoreCdp(call, wanted, reopened, failed)
    else if (this.kind === 'playwright') await this.restorePlaywright(call, wanted, reopened, failed)
    if (this.kind === 'cdp') {
      const now = this.idMap
      const map = new Map()
      const mappedFrom = new Set(prior.values())
      for (const [agent, was] of prior) if (now.has(was)) map.set(agent, now.get(was))
      for (const [was, id] of now) if (!mappedFrom.has(was) && !prior.has(was)) map.set(was, id)
      // Ids that stayed the same need no mapping. Every other id the agent knows is mapped, an
      // old id that is now another page's too: the agent learns the new ids only from a page
      // list, which ends the mapping (bin/proxy.js), so until then it means its old ones.
      for (const [from, to] of [...map]) if (from === to) map.delete(from)
      this.idMap = map
    }
    // Pages not reopened are gone: a call naming one gets the upstream's own error.
    if (failed.length && old === this.pages) this.pages = this.pages.filter((p) => !failed.includes(p.url))
    return { reopened, failed }
  }

  async restoreCdp(call, wanted, reopened, failed) {
    // A fresh browser has one blank page: the first page is loaded there, the others in new
    // pages, in their old order. pageId is given wherever a tool may take one (it routes
    // page-scoped tools by it by default; without routing the argument is ignored).
    let fresh = cdpPages(await call('list_pages', {})) ?? []
    let blank = fresh.find((p) => !reopenable(p.url))
    const selectedOld = wanted.find((p) => p.selected)
    for (const page of wanted) {
      try {
        let result
        let id
        if (blank) {
          id = blank.id
          await call('select_page', { pageId: id })
          result = await call('navigate_page', { pageId: id, type: 'url', url: page.url })
          blank = undefined
        } else {
          const before = new Set(fresh.map((p) => p.id))
          result = await call('new_page', { url: page.url })
          const listed = cdpPages(result) ?? []
          id = (listed.find((p) => !before.has(p.id)) ?? listed.find((p) => p.selected))?.id
        }
        // A navigation that fails is said in the text, not as an error.
        const text = (result?.content ?? []).map((b) => b?.text ?? '').join('\n')
        if (result?.isError || /Unable to navigate/.test(text)) throw new Error('refused')
        fresh = cdpPages(result) ?? fresh
        if (id !== undefined) this.idMap.set(page.id, id)
        reopened.push(page.url)
      } catch {
        failed.push(page.url)
      }
    }
    if (selectedOld && this.idMap.has(selectedOld.id)) {
      fresh = cdpPages(await call('select_page', { pageId: this.idMap.get(selectedOld.id) }).catch(() => null)) ?? fresh
    }
    this.pages = fresh
  }

  async restorePlaywright(call, wanted, reopened, failed) {
    // The current tab is the first; each other one is a new tab, then navigated.
    let first = true
    let index = 0
    let selected = 0
    for (const page of wanted) {
      try {
        if (!first) await call('browser_tabs', { action: 'new' })
        const result = await call('browser_navigate', { url: page.url })
        if (result?.isError) throw new Error('refused')
        if (page.selected) selected = index
        index++
        reopened.push(page.url)
      } catch {
        failed.push(page.url)
      }
      first = false
    }
    if (index > 1) await call('browser_tabs', { action: 'select', index: selected }).catch(() => null)
  }
}

module.exports = { PageTracker, cdpPages, playwrightTabs }
