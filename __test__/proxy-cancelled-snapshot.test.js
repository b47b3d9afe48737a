'use strict'

// Issue 24 item 2 through the real bin: the client cancels a take_snapshot, the upstream answers
// anyway, the client drops that answer. It never becomes what the agent holds: the next snapshot
// of the page is a delta against what the client did receive, never "unchanged".

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { FIXTURES, INIT, proxyCommand, spawnRaw } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const CHROME_LIST = path.join(FIXTURES, 'lists', 'chrome-devtools-mcp.tools-list.json')

/** A page of our own: a navigation of 80 links, 12 task cards, a payment status line. */
function board(status) {
  const lines = ['uid=1_0 RootWebArea "Board" url="http://127.0.0.1/board"', '  uid=1_1 navigation']
  for (let i = 0; i < 80; i++) lines.push(`    uid=1_${10 + i} link "nav link number ${i}" url="http://127.0.0.1/p${i}"`)
  lines.push('  uid=1_2 main', '    uid=1_3 list "Tasks"')
  for (let c = 1; c <= 12; c++) lines.push(`      uid=1_${500 + 2 * c} listitem`, `        uid=1_${501 + 2 * c} button "Task ${c}: book the flights"`)
  lines.push('  uid=1_5 contentinfo', `    uid=1_6 StaticText "Payment status: ${status}"`)
  const text = `# take_snapshot response\n## Latest page snapshot\n${lines.join('\n')}\n`
  return { result: { content: [{ type: 'text', text }] } }
}

/**
 * The bin in front of the fixture upstream, which answers take_snapshot with the board page
 * (`fixture: 'pending'` or `'failed'`, its payment status), tools listed: `call(id, args)` sends a
 * take_snapshot and resolves its text (`idText`: the id as written on the wire, when not
 * JSON.stringify's); `close()` ends it.
 */
async function startBoardProxy() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-cancel-'))
  fs.writeFileSync(path.join(dir, 'pending.json'), JSON.stringify(board('pending')))
  fs.writeFileSync(path.join(dir, 'failed.json'), JSON.stringify(board('FAILED – card declined')))
  const env = { ...process.env, FIXTURE_REPLAY_DIR: dir, FIXTURE_TOOLS_LIST: CHROME_LIST }
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE], ['--stats', 'off']), { env })
  const close = async () => {
    proxy.child.stdin.end()
    await proxy.exited
    fs.rmSync(dir, { recursive: true, force: true })
  }
  /** @param {unknown} id the id as the client reads it back @param {object} args @param {string} [idText] */
  const call = async (id, args, idText) => {
    const params = JSON.stringify({ name: 'take_snapshot', arguments: args })
    proxy.send(`{"jsonrpc":"2.0","id":${idText ?? JSON.stringify(id)},"method":"tools/call","params":${params}}\n`)
    return (await proxy.waitFor((m) => m.id === id)).result.content[0].text
  }
  try {
    proxy.send(INIT)
    proxy.send({ jsonrpc: '2.0', id: 'l', method: 'tools/list' })
    await proxy.waitFor((m) => m.id === 'l')
  } catch (err) {
    await close()
    throw err
  }
  return { proxy, call, close }
}

test('a cancelled snapshot answered anyway is not what the agent holds', async () => {
  const { proxy, call, close } = await startBoardProxy()
  try {
    const first = await call(1, { pageId: 1, fixture: 'pending' })
    assert.match(first, /snapshot 1, full: first snapshot of this page/)

    // Cancelled before the upstream answers; its late answer still comes by (the client drops it).
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'take_snapshot', arguments: { pageId: 1, fixture: 'failed', delayMs: 300 } } })
    proxy.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'user pressed escape' } })
    const dropped = (await proxy.waitFor((m) => m.id === 2)).result.content[0].text
    assert.match(dropped, /snapshot 2: delta against snapshot 1/)

    const next = await call(3, { pageId: 1, fixture: 'failed' })
    assert.doesNotMatch(next, /unchanged since/)
    assert.match(next, /snapshot 3: delta against snapshot 1, 0 added, 1 changed/)
    assert.match(next, /Payment status: FAILED – card declined/)
    // Delivered, it is the base of the next one.
    const again = await call(4, { pageId: 1, fixture: 'failed' })
    assert.match(again, /snapshot 4: unchanged since snapshot 3/)
  } finally {
    await close()
  }
})

// Issue 41 item 8: the cancellation crosses the answer on the wire. The proxy forwarded the
// answer before the cancellation reached it; the client, which had stopped waiting, drops it.
test('a cancellation that crosses the snapshot answer leaves no base the client never kept', async () => {
  const { proxy, call, close } = await startBoardProxy()
  try {
    assert.match(await call(1, { pageId: 1, fixture: 'pending' }), /snapshot 1, full/)
    const crossed = await call('two', { pageId: 1, fixture: 'failed' })
    assert.match(crossed, /snapshot 2: delta against snapshot 1/)
    proxy.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'two', reason: 'timed out' } })

    const next = await call(3, { pageId: 1, fixture: 'failed' })
    assert.doesNotMatch(next, /unchanged since snapshot 2/)
    assert.match(next, /snapshot 3: delta against snapshot 1, 0 added, 1 changed/)
    assert.match(next, /Payment status: FAILED – card declined/)
  } finally {
    await close()
  }
})

// The same crossing when the upstream respells a numeric id: a JS server answers the client's
// `2.0` as `2` (JSON.parse, then JSON.stringify), and the cancellation names `2.0`. The answer is
// still the answer to that request (filtered, its request done), and the crossing still found.
test('a numeric id the upstream respells (2.0 answered as 2) is still its request, crossing included', async () => {
  const { proxy, call, close } = await startBoardProxy()
  try {
    assert.match(await call(1, { pageId: 1, fixture: 'pending' }), /snapshot 1, full/)
    const crossed = await call(2, { pageId: 1, fixture: 'failed' }, '2.0')
    assert.match(crossed, /snapshot 2: delta against snapshot 1/)
    proxy.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2.0,"reason":"timed out"}}\n')

    const next = await call(3, { pageId: 1, fixture: 'failed' })
    assert.doesNotMatch(next, /unchanged since snapshot 2/)
    assert.match(next, /snapshot 3: delta against snapshot 1, 0 added, 1 changed/)

    // Answered, the request left nothing in flight: when the upstream dies, the calls in flight
    // get an error (this one among them, had its answer not ended it), and id 2 gets none.
    proxy.send({ jsonrpc: '2.0', id: 'x', method: 'fixture/exit', params: { code: 3 } })
    assert.ok((await proxy.waitFor((m) => m.id === 'x')).error)
    assert.equal(proxy.messages.filter((m) => m.id === 2).length, 1)
  } finally {
    await close()
  }
})
