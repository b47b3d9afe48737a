'use strict'

// Issue 44: a stdio upstream that dies is restarted. Through the real bin against the fixture
// upstream, which exits on command (mid-call, between calls, at start): every request in
// flight is answered (an error naming the exit and the last stderr line) at its exact id, the
// client's initialize, initialized, log level and subscriptions are replayed, the session goes
// on, and a crash loop stops after N restarts with that error.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ToolListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js')
const { FIXTURES, INIT, proxyCommand, spawnRaw, connect, waitUntil } = require('./helpers.js')

const FIXTURE = path.join(FIXTURES, 'fixture-server.js')
const CHROME_LIST = path.join(FIXTURES, 'lists', 'chrome-devtools-mcp.tools-list.json')

function scratch() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'msf-restart-'))
}

/** The lines the upstreams received (FIXTURE_RECORD), parsed. */
function recorded(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []
}

test('an upstream that dies mid-call: each call in flight gets an error at its exact id naming the exit and stderr, then the session goes on', async () => {
  const dir = scratch()
  const record = path.join(dir, 'record.jsonl')
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE]), { env: { ...process.env, FIXTURE_RECORD: record } })
  try {
    proxy.send(INIT)
    await proxy.waitFor((m) => m.id === 0)
    proxy.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    proxy.send({ jsonrpc: '2.0', id: 'lvl', method: 'logging/setLevel', params: { level: 'debug' } })
    proxy.send({ jsonrpc: '2.0', id: 'sub', method: 'resources/subscribe', params: { uri: 'file:///a' } })
    proxy.send({ jsonrpc: '2.0', id: 'sub2', method: 'resources/subscribe', params: { uri: 'file:///b' } })
    proxy.send({ jsonrpc: '2.0', id: 'unsub', method: 'resources/unsubscribe', params: { uri: 'file:///b' } })
    await proxy.waitFor((m) => m.id === 'unsub')
    // Three calls in flight whose ids one double cannot tell apart, then the crash.
    proxy.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"fixture/silence"}\n')
    proxy.send('{"jsonrpc":"2.0","id":9007199254740992,"method":"fixture/silence"}\n')
    proxy.send('{"jsonrpc":"2.0","id":1E400,"method":"tools/call","params":{"name":"fixture_silence","arguments":{}}}\n')
    proxy.send({ jsonrpc: '2.0', id: 'die', method: 'fixture/exit', params: { code: 3, stderr: 'boom: the browser went away' } })
    await proxy.waitFor((m) => m.id === 'die')
    await waitUntil(() => proxy.rawLines.filter((l) => l.includes('"code":-32000')).length >= 4, 5000)
    const errors = proxy.rawLines.filter((l) => l.includes('"code":-32000'))
    assert.equal(errors.length, 4)
    for (const idText of ['9007199254740993', '9007199254740992', '1E400', '"die"']) {
      const line = errors.find((l) => l.startsWith(`{"jsonrpc":"2.0","id":${idText},`))
      assert.ok(line, `no error at id ${idText}: ${errors.join('\n')}`)
      assert.match(line, /exited \(exit code 3; its last stderr line: \\"boom: the browser went away\\"\) before answering/)
      assert.match(line, /the proxy is restarting it/)
    }
    // The session goes on, on a new upstream that was told what the client told the old one.
    proxy.send({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'echo', arguments: { n: 1 } } })
    const after = await proxy.waitFor((m) => m.id === 'after', 10000)
    assert.match(after.result.content[0].text, /^\[mcp-snapshot-filter: the upstream MCP server died \(exit code 3; its last stderr line: "boom: the browser went away"\) and was restarted; uids changed/)
    assert.deepEqual(JSON.parse(after.result.content[1].text), { tool: 'echo', arguments: { n: 1 } })
    // Said once: the next result is the upstream's alone.
    proxy.send({ jsonrpc: '2.0', id: 'again', method: 'tools/call', params: { name: 'echo', arguments: { n: 2 } } })
    const again = await proxy.waitFor((m) => m.id === 'again')
    assert.equal(again.result.content.length, 1)
    const lines = recorded(record)
    const second = lines.slice(lines.findIndex((m) => m.method === 'fixture/exit') + 1)
    assert.deepEqual(
      second.map((m) => m.method),
      ['initialize', 'notifications/initialized', 'logging/setLevel', 'resources/subscribe', 'tools/call', 'tools/call'],
    )
    assert.deepEqual(second[0].params, INIT.params)
    assert.match(String(second[0].id), /^mcp-snapshot-filter\/restart\//)
    assert.deepEqual(second[2].params, { level: 'debug' })
    assert.deepEqual(second[3].params, { uri: 'file:///a' })
    // The replays' answers stay with the proxy: the client got one answer per request it sent.
    const ids = proxy.messages.filter((m) => 'id' in m).map((m) => JSON.stringify(m.id))
    assert.equal(new Set(proxy.rawLines.filter((l) => l.includes('"id":')).map((l) => /"id":([^,]*),/.exec(l)?.[1])).size, ids.length)
    assert.ok(!proxy.rawLines.some((l) => l.includes('mcp-snapshot-filter/restart/')), 'a replay answer reached the client')
    assert.match(proxy.stderr(), /upstream exited \(exit code 3; its last stderr line: "boom: the browser went away"\): restarting it in 250 ms/)
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('an SDK client through the bin: the upstream killed between calls, at start, and the tools that changed', async () => {
  const dir = scratch()
  const starts = path.join(dir, 'starts')
  const env = { ...process.env, FIXTURE_EXIT_ONCE: path.join(dir, 'once'), FIXTURE_STARTS: starts, FIXTURE_VARY_TOOLS: '1' }
  let changed = 0
  const { client, stderr } = await connect(proxyCommand([process.execPath, FIXTURE]), {
    env,
    handlers: { notifications: [[ToolListChangedNotificationSchema, () => changed++]] },
  })
  try {
    // The first start exited at once: the client's initialize went to the second.
    assert.match(stderr(), /upstream exited \(exit code 4; its last stderr line: "fixture: exiting at start"\): restarting it/)
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['echo', 'started_2'])
    const first = await client.callTool({ name: 'echo', arguments: { n: 1 } })
    // That restart came before the client held anything; it is said all the same.
    assert.match(first.content[0].text, /and was restarted/)
    // Killed between calls: nothing is in flight, the next call waits for the new upstream.
    const pid = Number(fs.readFileSync(starts, 'utf8').trim().split('\n').at(-1))
    process.kill(pid, 'SIGKILL')
    assert.ok(await waitUntil(() => fs.readFileSync(starts, 'utf8').trim().split('\n').length === 3, 10000), 'no restart')
    const second = await client.callTool({ name: 'echo', arguments: { n: 2 } })
    assert.match(second.content[0].text, /died \(signal SIGKILL\) and was restarted/)
    assert.deepEqual(JSON.parse(second.content[1].text), { tool: 'echo', arguments: { n: 2 } })
    assert.ok(await waitUntil(() => changed === 1, 5000), 'no tools/list_changed')
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['echo', 'started_3'])
  } finally {
    await client.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a crash loop stops after --upstream-restarts restarts: the requests get the error, the proxy exits with the upstream\'s code when the client closes', async () => {
  const dir = scratch()
  const starts = path.join(dir, 'starts')
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE], ['--upstream-restarts=2', '--upstream-restart-window=60']), {
    env: { ...process.env, FIXTURE_EXIT_AT_START: '5', FIXTURE_STARTS: starts },
  })
  try {
    proxy.send(INIT)
    const init = await proxy.waitFor((m) => m.id === 0, 10000)
    assert.equal(init.error.code, -32000)
    assert.match(init.error.message, /failed 2 restarts in 60 s \(last: exit code 5\): cannot answer initialize/)
    proxy.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const later = await proxy.waitFor((m) => m.id === 1)
    assert.match(later.error.message, /not running \(upstream MCP server failed 2 restarts in 60 s/)
    // The first start and two restarts.
    assert.equal(fs.readFileSync(starts, 'utf8').trim().split('\n').length, 3)
    assert.match(proxy.stderr(), /gave up after 2 restarts in 60 s/)
    proxy.child.stdin.end()
    const { code } = await proxy.exited
    assert.equal(code, 5)
  } finally {
    proxy.child.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

/** A chrome-devtools-mcp page of our own (the board of proxy-cancelled-snapshot.test.js, shorter). */
function board(status) {
  const lines = ['uid=1_0 RootWebArea "Board" url="http://127.0.0.1/board"', '  uid=1_1 navigation']
  for (let i = 0; i < 40; i++) lines.push(`    uid=1_${10 + i} link "nav link number ${i}" url="http://127.0.0.1/p${i}"`)
  lines.push('  uid=1_2 main', '    uid=1_3 list "Tasks"')
  for (let c = 1; c <= 12; c++) lines.push(`      uid=1_${500 + 2 * c} listitem`, `        uid=1_${501 + 2 * c} button "Task ${c}: book the flights"`)
  lines.push('  uid=1_5 contentinfo', `    uid=1_6 StaticText "Payment status: ${status}"`)
  return { result: { content: [{ type: 'text', text: `# take_snapshot response\n## Latest page snapshot\n${lines.join('\n')}\n` }] } }
}

/** A result as chrome-devtools-mcp writes it after its browser reconnected. */
function reconnected() {
  const text = 'Note: the browser was restarted or reconnected since the last call. Page ids have changed. Call list_pages to see open pages.\n## Pages\n1: about:blank [selected]'
  return { result: { content: [{ type: 'text', text }], structuredContent: { reconnected: true } } }
}

for (const how of ['a restart', "the upstream's reconnect note"]) {
  test(`after ${how}, nothing held before is a base for a delta: the next snapshot is whole`, async () => {
    const dir = scratch()
    fs.writeFileSync(path.join(dir, 'board.json'), JSON.stringify(board('pending')))
    fs.writeFileSync(path.join(dir, 'list_pages.json'), JSON.stringify(reconnected()))
    const env = { ...process.env, FIXTURE_REPLAY_DIR: dir, FIXTURE_TOOLS_LIST: CHROME_LIST }
    const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE], ['--stats', 'off']), { env })
    try {
      proxy.send(INIT)
      const call = async (id, name, args) => {
        proxy.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
        return (await proxy.waitFor((m) => m.id === id, 10000)).result.content.map((b) => b.text).join('\n')
      }
      proxy.send({ jsonrpc: '2.0', id: 'l', method: 'tools/list' })
      await proxy.waitFor((m) => m.id === 'l')
      assert.match(await call(1, 'take_snapshot', { fixture: 'board' }), /snapshot 1, full: first snapshot of this page/)
      assert.match(await call(2, 'take_snapshot', { fixture: 'board' }), /snapshot 2: unchanged since snapshot 1/)
      if (how === 'a restart') {
        proxy.send({ jsonrpc: '2.0', id: 'die', method: 'fixture/exit', params: { code: 9 } })
        await proxy.waitFor((m) => m.id === 'die')
      } else {
        const note = await call('note', 'list_pages', {})
        assert.match(note, /^\[mcp-snapshot-filter: the upstream's browser was restarted or reconnected: uids changed/)
        assert.match(note, /Note: the browser was restarted/)
      }
      const next = await call(3, 'take_snapshot', { fixture: 'board' })
      assert.doesNotMatch(next, /unchanged since|delta against/)
      assert.match(next, /snapshot 3, full: the upstream restarted or reconnected since this page's last snapshot/)
      assert.match(next, /Payment status: pending/)
      if (how === 'a restart') assert.match(next, /^\[mcp-snapshot-filter: the upstream MCP server died \(exit code 9\) and was restarted/)
      // What was sent now is the base again.
      assert.match(await call(4, 'take_snapshot', { fixture: 'board' }), /snapshot 4: unchanged since snapshot 3/)
      // The proxy's tools read no snapshot of before either.
    } finally {
      proxy.child.stdin.end()
      await proxy.exited
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('an upstream that closes its stdout and keeps running is stopped and restarted', async () => {
  const proxy = spawnRaw(proxyCommand([process.execPath, FIXTURE]), { env: { ...process.env, FIXTURE_IGNORE_SIGTERM: '1' } })
  try {
    proxy.send(INIT)
    await proxy.waitFor((m) => m.id === 0)
    proxy.send({ jsonrpc: '2.0', id: 'pid', method: 'fixture/pid' })
    const { pid } = (await proxy.waitFor((m) => m.id === 'pid')).result
    proxy.send({ jsonrpc: '2.0', id: 'pending', method: 'tools/call', params: { name: 'fixture_silence', arguments: {} } })
    proxy.send({ jsonrpc: '2.0', id: 'close', method: 'fixture/close-stdout' })
    const pending = await proxy.waitFor((m) => m.id === 'pending', 5000)
    assert.match(pending.error.message, /closed its stdout before answering tools\/call; the proxy is restarting it/)
    proxy.send({ jsonrpc: '2.0', id: 'after', method: 'fixture/pid' })
    const after = await proxy.waitFor((m) => m.id === 'after', 15000)
    assert.notEqual(after.result.pid, pid)
    // The old one (it ignores SIGTERM) was stopped with its process group.
    assert.ok(await waitUntil(() => { try { process.kill(pid, 0); return false } catch { return true } }, 10000), 'the old upstream still runs')
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
  }
})
