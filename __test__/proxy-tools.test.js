'use strict'

// The proxy's own tools (issue 4) through the real bin, in front of a fixture upstream that
// replays real chrome-devtools-mcp snapshots: listed, answered locally, exact, bounded in
// memory, kept across list_changed, off when asked or at light.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { FIXTURES, INIT, proxyCommand, spawnRaw } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const SNAPSHOTS = path.join(FIXTURES, 'snapshots')
const GRID_RAW = snapshotBody('grid')

function snapshotBody(name) {
  const text = JSON.parse(fs.readFileSync(path.join(SNAPSHOTS, `${name}.json`), 'utf8')).result.content[0].text
  return text.slice(text.indexOf('## Latest page snapshot\n') + '## Latest page snapshot\n'.length)
}

const LISTS = path.join(FIXTURES, 'lists')
// chrome-devtools-mcp's own tools/list: it has take_snapshot, so the proxy adds its tools.
const CHROME_LIST = path.join(LISTS, 'chrome-devtools-mcp.tools-list.json')

/** The proxy in front of the fixture upstream; `toolsList` is the list file it answers with (null: one `echo` tool). */
function start(proxyArgs = [], toolsList = CHROME_LIST) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-tools-'))
  const record = path.join(dir, 'received.jsonl')
  const env = { ...process.env, FIXTURE_RECORD: record, FIXTURE_REPLAY_DIR: SNAPSHOTS }
  if (toolsList) env.FIXTURE_TOOLS_LIST = toolsList
  else delete env.FIXTURE_TOOLS_LIST
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE], proxyArgs), { env })
  proxy.send(INIT)
  const received = () => (fs.existsSync(record) ? fs.readFileSync(record, 'utf8') : '')
  let nextId = 1
  const call = async (name, args) => {
    const id = nextId++
    proxy.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
    return (await proxy.waitFor((m) => m.id === id)).result
  }
  const listResult = async () => {
    const id = nextId++
    proxy.send({ jsonrpc: '2.0', id, method: 'tools/list' })
    return (await proxy.waitFor((m) => m.id === id)).result
  }
  const listTools = async () => (await listResult()).tools.map((t) => t.name)
  const stop = async () => {
    proxy.child.stdin.end()
    await proxy.exited
  }
  return { proxy, call, listTools, listResult, received, stop, dir }
}

const text = (result) => result.content.map((c) => c.text).join('\n')

test('the tools are listed, answered by the proxy, and return the original lines', async () => {
  const p = start()
  try {
    assert.deepEqual((await p.listTools()).slice(-3), ['expand_snapshot', 'search_snapshot', 'read_result'])
    const none = await p.call('expand_snapshot', { uid: '72_34' })
    assert.equal(none.isError, true)
    assert.match(text(none), /No snapshot to read yet: take one first \(take_snapshot/)

    const filtered = text(await p.call('take_snapshot', { pageId: 1, fixture: 'grid' }))
    const marker = filtered.split('\n').find((l) => /^\s*… .*expand_snapshot uid=\d+_\d+/.test(l))
    assert.ok(marker, 'moderate hides something on the grid page and says how to get it')
    const uid = /expand_snapshot uid=(\d+_\d+)/.exec(marker)[1]

    const expanded = text(await p.call('expand_snapshot', { uid }))
    // Every uid under that node in the raw snapshot comes back, each with its own role and name.
    const rawLines = GRID_RAW.split('\n')
    const start = rawLines.findIndex((l) => l.trimStart().startsWith(`uid=${uid} `))
    const indent = rawLines[start].length - rawLines[start].trimStart().length
    const subtree = [rawLines[start]]
    for (const line of rawLines.slice(start + 1)) {
      if (line.length - line.trimStart().length <= indent) break
      subtree.push(line)
    }
    for (const line of subtree) {
      const [, u] = /uid=(\S+)/.exec(line)
      assert.ok(expanded.includes(u), `expand lost ${u} (${line.trim()})`)
    }

    const search = text(await p.call('search_snapshot', { query: 'edit liam' }))
    const rawEdit = GRID_RAW.split('\n').find((l) => /button "Edit Liam/.test(l))
    const [, editUid] = /uid=(\S+)/.exec(rawEdit)
    assert.ok(search.includes(editUid), `search did not find ${editUid}:\n${search}`)
    const bad = await p.call('search_snapshot', { query: '(', regex: true })
    assert.equal(bad.isError, true)
    const unknown = await p.call('expand_snapshot', { uid: '999_999' })
    assert.equal(unknown.isError, true)
    assert.match(text(unknown), /999_999/)

    // None of the proxy's calls reached the upstream.
    assert.ok(!p.received().includes('expand_snapshot'))
    assert.ok(!p.received().includes('search_snapshot'))
  } finally {
    await p.stop()
  }
})

test('the tools stay listed after the upstream says its tool list changed', async () => {
  const p = start()
  try {
    await p.listTools()
    p.proxy.send({ jsonrpc: '2.0', id: 'lc', method: 'fixture/list-changed' })
    await p.proxy.waitFor((m) => m.method === 'notifications/tools/list_changed')
    const names = await p.listTools()
    assert.deepEqual(names.slice(-3), ['expand_snapshot', 'search_snapshot', 'read_result'])
    assert.equal(names.filter((n) => n === 'expand_snapshot').length, 1)
  } finally {
    await p.stop()
  }
})

test('the snapshot cache respects its byte cap, oldest page evicted first', async () => {
  const gridBytes = Buffer.byteLength(GRID_RAW)
  const megaBytes = Buffer.byteLength(snapshotBody('megamenu'))
  const cap = Math.max(gridBytes, megaBytes) + 1000
  assert.ok(cap < gridBytes + megaBytes)
  const p = start([`--snapshot-cache-bytes=${cap}`])
  try {
    await p.listTools()
    await p.call('take_snapshot', { pageId: 1, fixture: 'grid' })
    await p.call('take_snapshot', { pageId: 2, fixture: 'megamenu' })
    const evicted = await p.call('search_snapshot', { query: 'Customers', pageId: 1 })
    assert.equal(evicted.isError, true)
    assert.match(text(evicted), /page 1/)
    const kept = await p.call('search_snapshot', { query: 'a', pageId: 2 })
    assert.ok(!kept.isError, text(kept))
    // Without pageId the page snapshotted last is read.
    const latest = await p.call('search_snapshot', { query: 'a' })
    assert.equal(text(latest), text(kept))
  } finally {
    await p.stop()
  }
})

test('a snapshot larger than the whole cache is named, never answered from an older page', async () => {
  const gridBytes = Buffer.byteLength(GRID_RAW)
  const megaBytes = Buffer.byteLength(snapshotBody('megamenu'))
  const cap = Math.floor(megaBytes * 1.5)
  assert.ok(megaBytes < cap && cap < gridBytes)
  const p = start([`--snapshot-cache-bytes=${cap}`])
  try {
    await p.listTools()
    await p.call('take_snapshot', { pageId: 1, fixture: 'megamenu' })
    assert.ok(!(await p.call('search_snapshot', { query: 'a' })).isError)
    await p.call('take_snapshot', { pageId: 2, fixture: 'grid' })
    for (const args of [{ query: 'a' }, { query: 'a', pageId: 2 }]) {
      const res = await p.call('search_snapshot', args)
      assert.equal(res.isError, true, `${JSON.stringify(args)}: ${text(res)}`)
      assert.match(text(res), new RegExp(`page 2 \\(\\d+ bytes\\) is larger than the proxy's whole snapshot cache \\(${cap} bytes\\)`))
      assert.match(text(res), /--snapshot-cache-bytes=\d+M/)
    }
    const expand = await p.call('expand_snapshot', {})
    assert.equal(expand.isError, true, text(expand))
    // The page that fits is still read when named.
    assert.ok(!(await p.call('search_snapshot', { query: 'a', pageId: 1 })).isError)
  } finally {
    await p.stop()
  }
})

test('--no-proxy-tools and level light without a budget leave tools/list and calls to the upstream', async () => {
  for (const args of [['--no-proxy-tools'], ['--filter-level=light', '--max-tokens=0']]) {
    const p = start(args)
    try {
      const names = await p.listTools()
      assert.ok(!names.includes('expand_snapshot'), `${args}: ${names}`)
      const res = await p.call('expand_snapshot', { uid: '1_1' })
      // The fixture answers unknown tools by echoing them: the call went upstream.
      assert.deepEqual(JSON.parse(text(res)), { tool: 'expand_snapshot', arguments: { uid: '1_1' } })
    } finally {
      await p.stop()
    }
  }
})

test('an upstream without a tool that returns snapshots gets no proxy tools, and their names go upstream', async () => {
  const p = start([], null)
  try {
    assert.deepEqual(await p.listTools(), ['echo'])
    const res = await p.call('search_snapshot', { query: 'a' })
    assert.deepEqual(JSON.parse(text(res)), { tool: 'search_snapshot', arguments: { query: 'a' } })
  } finally {
    await p.stop()
  }
})

test('a string pageId is an error naming the type, not page 1', async () => {
  const p = start()
  try {
    await p.listTools()
    await p.call('take_snapshot', { pageId: 1, fixture: 'grid' })
    const res = await p.call('search_snapshot', { query: 'Customers', pageId: '1' })
    assert.equal(res.isError, true)
    assert.match(text(res), /"pageId" must be an integer, not a string "1"/)
    assert.ok(!(await p.call('search_snapshot', { query: 'Customers', pageId: 1 })).isError)
  } finally {
    await p.stop()
  }
})

// Issue 18: through the proxy at moderate, the whole tools/list (the proxy's three tools
// included) costs at least 5% fewer o200k tokens than the upstream's own list.
test('tools/list through the proxy is smaller than direct, proxy tools included', async () => {
  const { encode } = require('gpt-tokenizer/cjs/encoding/o200k_base')
  for (const file of ['chrome-devtools-mcp.tools-list.json', 'playwright-mcp.tools-list.json']) {
    const p = start([], path.join(LISTS, file))
    try {
      const direct = JSON.parse(fs.readFileSync(path.join(LISTS, file), 'utf8')).result
      const proxied = await p.listResult()
      assert.deepEqual(proxied.tools.slice(-3).map((t) => t.name), ['expand_snapshot', 'search_snapshot', 'read_result'])
      const before = encode(JSON.stringify(direct)).length
      const after = encode(JSON.stringify(proxied)).length
      const saved = (before - after) / before
      process.stderr.write(`  ${file}: ${before} -> ${after} o200k tokens through the proxy (${(saved * 100).toFixed(1)}% smaller)\n`)
      assert.ok(saved >= 0.05, `${file}: ${before} -> ${after} tokens, ${(saved * 100).toFixed(1)}% smaller`)
    } finally {
      await p.stop()
    }
  }
})

test('--raw-snapshots-dir writes each raw snapshot and names the file in the result', async () => {
  const p = start()
  const dir = path.join(p.dir, 'raw')
  await p.stop()
  const q = start([`--raw-snapshots-dir=${dir}`])
  try {
    const result = text(await q.call('take_snapshot', { pageId: '../../etc/passwd', fixture: 'grid' }))
    const [, file] = /\[raw snapshot: ([^\]]+)\]/.exec(result)
    assert.equal(path.dirname(file), dir)
    assert.match(path.basename(file), /^snapshot-[0-9a-z]+-[0-9a-z]+-[0-9a-z]+-000001-page-etcpasswd\.txt$/)
    assert.equal(fs.readFileSync(file, 'utf8'), GRID_RAW)
  } finally {
    await q.stop()
  }
})

test('expand_snapshot and search_snapshot sent while a take_snapshot of that page is in flight wait for it', async () => {
  const p = start()
  try {
    const { proxy } = p
    proxy.send({ jsonrpc: '2.0', id: 'snap', method: 'tools/call', params: { name: 'take_snapshot', arguments: { pageId: 1, fixture: 'grid', delayMs: 600 } } })
    proxy.send({ jsonrpc: '2.0', id: 'expand', method: 'tools/call', params: { name: 'expand_snapshot', arguments: { uid: '72_1', pageId: 1 } } })
    proxy.send({ jsonrpc: '2.0', id: 'search', method: 'tools/call', params: { name: 'search_snapshot', arguments: { query: 'Acme Admin' } } })
    const expand = await proxy.waitFor((m) => m.id === 'expand')
    const search = await proxy.waitFor((m) => m.id === 'search')
    assert.notEqual(expand.result.isError, true, text(expand.result))
    assert.match(text(expand.result), /72_1 banner/)
    assert.notEqual(search.result.isError, true, text(search.result))
    assert.match(text(search.result), /Acme Admin/)
    const order = proxy.messages.map((m) => m.id)
    assert.ok(order.indexOf('snap') < order.indexOf('expand'), 'answered before the snapshot it reads')
    // Another page's snapshot in flight holds up nothing: this one answers at once.
    // (Answered after 30 s: a proxy waiting for it would answer the expand after it, not before.)
    proxy.send({ jsonrpc: '2.0', id: 'other', method: 'tools/call', params: { name: 'take_snapshot', arguments: { pageId: 2, fixture: 'grid', delayMs: 30000 } } })
    assert.notEqual((await p.call('expand_snapshot', { uid: '72_1', pageId: 1 })).isError, true)
    assert.ok(!proxy.messages.some((m) => m.id === 'other'), 'waited for a snapshot of another page')
  } finally {
    await p.stop()
  }
})

test('a late answer after notifications/cancelled is filtered and cached like any other', async () => {
  const p = start()
  try {
    const { proxy } = p
    proxy.send({ jsonrpc: '2.0', id: 'snap', method: 'tools/call', params: { name: 'take_snapshot', arguments: { pageId: 1, fixture: 'grid', delayMs: 300 } } })
    proxy.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'snap', reason: 'test' } })
    const late = await proxy.waitFor((m) => m.id === 'snap')
    assert.notEqual(text(late.result), GRID_RAW)
    assert.match(text(late.result), /expand_snapshot uid=/, 'the late answer was filtered')
    const expanded = await p.call('expand_snapshot', { uid: '72_1', pageId: 1 })
    assert.notEqual(expanded.isError, true, text(expanded))
    assert.match(text(expanded), /72_1 banner/)
  } finally {
    await p.stop()
  }
})

test('--raw-snapshots-dir refuses a directory others can write to or own, accepts a sticky one of ours', { skip: process.platform === 'win32' && 'POSIX modes' }, async () => {
  const { spawnSync } = require('node:child_process')
  const { BIN } = require('./helpers.js')
  const { dirProblem } = require('../bin/raw-dir.js')
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-rawdir-'))
  try {
    const open = path.join(base, 'open')
    fs.mkdirSync(open)
    fs.chmodSync(open, 0o777)
    const run = spawnSync(process.execPath, [BIN, `--raw-snapshots-dir=${open}`, '--', process.execPath, FIXTURE], { input: '', encoding: 'utf8' })
    assert.equal(run.status, 2, run.stderr)
    assert.match(run.stderr, /--raw-snapshots-dir: ".*open" is writable by other users \(mode 777\)/)
    // Sticky and ours (like a private /tmp): others cannot remove or replace our files.
    const sticky = path.join(base, 'sticky')
    fs.mkdirSync(sticky)
    fs.chmodSync(sticky, 0o1777)
    assert.equal(dirProblem(fs.statSync(sticky)), null)
    // Created when missing, private.
    const fresh = path.join(base, 'fresh', 'raw')
    const p = start([`--raw-snapshots-dir=${fresh}`])
    try {
      const result = text(await p.call('take_snapshot', { pageId: 1, fixture: 'grid' }))
      assert.match(result, /\[raw snapshot: /)
      assert.equal(fs.statSync(fresh).mode & 0o077, 0)
    } finally {
      await p.stop()
    }
    // Owned by someone else: refused, whatever its mode.
    const mine = fs.statSync(sticky)
    const theirs = Object.assign(Object.create(Object.getPrototypeOf(mine)), mine, { uid: mine.uid + 1, mode: 0o40700 })
    assert.match(dirProblem(theirs), /belongs to another user/)
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
})

test('the wait for an in-flight snapshot is bounded', async () => {
  const { PassThrough } = require('node:stream')
  const native = require('../index.js')
  const { Proxy } = require('../bin/proxy.js')
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const session = new native.FilterSession({ filter: { level: 'moderate' }, stats: 'off' })
  const saved = process.env.FIXTURE_REPLAY_DIR
  process.env.FIXTURE_REPLAY_DIR = SNAPSHOTS
  const proxy = new Proxy({
    command: process.execPath,
    args: [FIXTURE],
    session,
    stdin,
    stdout,
    exit: () => {},
    returnsSnapshot: native.returnsSnapshot,
    localTools: { has: (name) => session.isProxyTool(name), readsSnapshots: native.readsSnapshots, answer: (name, args, meta) => session.answerProxyTool(name, args, meta) },
    snapshotWaitMs: 300,
  })
  try {
    assert.equal(await proxy.start(), true)
    const lines = []
    stdout.setEncoding('utf8')
    let buf = ''
    stdout.on('data', (d) => {
      buf += d
      let nl
      while ((nl = buf.indexOf('\n')) !== -1) {
        lines.push(JSON.parse(buf.slice(0, nl)))
        buf = buf.slice(nl + 1)
      }
    })
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'take_snapshot', arguments: { pageId: 1, fixture: 'grid', delayMs: 30000 } } })}\n`)
    const started = Date.now()
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'expand_snapshot', arguments: { uid: '72_1', pageId: 1 } } })}\n`)
    while (!lines.some((l) => l.id === 'x')) await new Promise((r) => setTimeout(r, 20))
    const waited = Date.now() - started
    // It waited its 300 ms for the snapshot in flight, then answered without it (the snapshot
    // comes after 30 s: that it has not arrived shows the wait was not for it).
    assert.ok(waited >= 250, `answered after ${waited} ms`)
    // Nothing cached yet: it says so rather than waiting on.
    assert.match(text(lines.find((l) => l.id === 'x').result), /No snapshot/)
    assert.ok(!lines.some((l) => l.id === 'slow'))
  } finally {
    if (saved === undefined) delete process.env.FIXTURE_REPLAY_DIR
    else process.env.FIXTURE_REPLAY_DIR = saved
    await proxy.shutdown(0, null)
  }
})

/** A Proxy in this process in front of the fixture upstream, its snapshot wait unbounded, as the bin wires it (bin/cli.js). */
async function inProcessProxy() {
  const { PassThrough } = require('node:stream')
  const native = require('../index.js')
  const { Proxy } = require('../bin/proxy.js')
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const session = new native.FilterSession({ filter: { level: 'moderate' }, stats: 'off' })
  const proxy = new Proxy({
    command: process.execPath,
    args: [FIXTURE],
    session,
    stdin,
    stdout,
    exit: () => {},
    returnsSnapshot: native.returnsSnapshot,
    localTools: { has: (name) => session.isProxyTool(name), readsSnapshots: native.readsSnapshots, answer: (name, args, meta) => session.answerProxyTool(name, args, meta) },
    // Longer than any call here takes: a proxy tool that waits answers after the call it waits for.
    snapshotWaitMs: 2 ** 31 - 1,
  })
  const saved = process.env.FIXTURE_REPLAY_DIR
  process.env.FIXTURE_REPLAY_DIR = SNAPSHOTS
  assert.equal(await proxy.start(), true)
  /** @type {any[]} */
  const lines = []
  const waiters = []
  let buf = ''
  stdout.setEncoding('utf8')
  stdout.on('data', (d) => {
    buf += d
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(buf.slice(0, nl)))
      buf = buf.slice(nl + 1)
    }
    for (const w of waiters.splice(0)) w()
  })
  const send = (id, name, args) => stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })}\n`)
  const answer = async (id) => {
    while (!lines.some((l) => l.id === id)) await new Promise((resolve) => waiters.push(resolve))
    return lines.find((l) => l.id === id)
  }
  const stop = async () => {
    if (saved === undefined) delete process.env.FIXTURE_REPLAY_DIR
    else process.env.FIXTURE_REPLAY_DIR = saved
    await proxy.shutdown(0, null)
  }
  return { send, answer, lines, stop }
}

test('the proxy tools wait only for a call that may answer with a snapshot, and read_result for none', async () => {
  const p = await inProcessProxy()
  try {
    p.send('first', 'take_snapshot', { pageId: 1, fixture: 'grid' })
    await p.answer('first')
    // In flight on the same page, answered after 20 s: a list, a script, and a click without
    // includeSnapshot (chrome-devtools-mcp then answers with a line, no snapshot).
    p.send('net', 'list_network_requests', { pageId: 1, fixture: 'grid', delayMs: 20000 })
    p.send('script', 'evaluate_script', { pageId: 1, fixture: 'grid', delayMs: 20000, function: '() => 1' })
    p.send('click', 'click', { pageId: 1, uid: '72_2', fixture: 'grid', delayMs: 20000 })
    p.send('expand', 'expand_snapshot', { uid: '72_1', pageId: 1 })
    const expand = await p.answer('expand')
    assert.match(text(expand.result), /72_1 banner/)
    for (const slow of ['net', 'script', 'click']) assert.ok(!p.lines.some((l) => l.id === slow), `expand_snapshot waited for ${slow}`)
    // A click that asks for the snapshot is waited for: its snapshot is the one to read.
    p.send('snapclick', 'click', { pageId: 1, uid: '72_2', includeSnapshot: true, fixture: 'grid', delayMs: 300 })
    p.send('search', 'search_snapshot', { query: 'Acme Admin', pageId: 1 })
    await p.answer('search')
    assert.ok(p.lines.some((l) => l.id === 'snapclick'), 'search_snapshot answered before the snapshot in flight')
    // read_result reads a text the agent already got: not even a snapshot in flight holds it up.
    p.send('slowsnap', 'take_snapshot', { pageId: 1, fixture: 'grid', delayMs: 20000 })
    p.send('read', 'read_result', { id: 'r1' })
    await p.answer('read')
    assert.ok(!p.lines.some((l) => l.id === 'slowsnap'), 'read_result waited for a snapshot')
  } finally {
    await p.stop()
  }
})

test('--max-tokens: a big result of a tool no filter knows is cut within the budget and read_result pages through all of it', async () => {
  const { bigText } = require(FIXTURE)
  const { estimateTokens } = require('../index.js')
  const expected = bigText(200 * 1000)
  const p = start(['--max-tokens=3000'])
  try {
    const first = text(await p.call('fixture_big', { chars: 200 * 1000 }))
    assert.ok(estimateTokens(first) <= 3000, `${estimateTokens(first)} tokens`)
    assert.match(first, /token budget 3\.0k: cut\]$/)
    const CUT = '[… cut at the token budget'
    let marker = /read_result id=(r\d+) offset=(\d+)/.exec(first)
    assert.ok(marker, first.slice(-300))
    // Cut at a line boundary: what is shown is the start of the text, whole lines.
    let whole = first.slice(0, first.indexOf(CUT))
    assert.ok(whole.endsWith('\n') && expected.startsWith(whole))
    // Paged by offset, every page within the budget: the pages join to the whole text.
    for (let pages = 0; marker; pages++) {
      assert.ok(pages < 1000)
      const page = text(await p.call('read_result', { id: marker[1], offset: Number(marker[2]) }))
      assert.ok(estimateTokens(page) <= 3000)
      marker = /read_result id=(r\d+) offset=(\d+) reads on\]$/.exec(page)
      whole += marker ? page.slice(0, page.indexOf(CUT)) : page
    }
    assert.equal(whole, expected)
    // A small result of the same tool is forwarded as it was.
    assert.equal(text(await p.call('fixture_big', { chars: 10 })), bigText(10))
  } finally {
    await p.stop()
  }
})

test('--max-chars: a result within the token budget but over the character bound is cut within it, and read_result pages through all of it', async () => {
  const { bigText } = require(FIXTURE)
  const { estimateTokens } = require('../index.js')
  const expected = bigText(40 * 1000)
  // The token budget holds it; 20,000 characters do not.
  assert.ok(estimateTokens(expected) < 90000)
  const p = start(['--max-tokens=100000', '--max-chars=20000'])
  try {
    const first = text(await p.call('fixture_big', { chars: 40 * 1000 }))
    assert.ok(first.length <= 20000, `${first.length} characters`)
    let marker = /read_result id=(r\d+) offset=(\d+)/.exec(first)
    assert.ok(marker, first.slice(-300))
    const CUT = '[… cut at the token budget'
    let whole = first.slice(0, first.indexOf(CUT))
    for (let pages = 0; marker; pages++) {
      assert.ok(pages < 100)
      const page = text(await p.call('read_result', { id: marker[1], offset: Number(marker[2]) }))
      assert.ok(page.length <= 20000, `page of ${page.length} characters`)
      marker = /read_result id=(r\d+) offset=(\d+) reads on\]$/.exec(page)
      whole += marker ? page.slice(0, page.indexOf(CUT)) : page
    }
    assert.equal(whole, expected)
  } finally {
    await p.stop()
  }
})
