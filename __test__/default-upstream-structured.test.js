'use strict'

// Issue 20 item 1: the proxy asks the default upstream (chrome-devtools-mcp) for the snapshot
// as an exact tree (--experimentalStructuredContent), reads snapshots from it, and drops the
// structuredContent the client did not ask for from every result, whatever the tool. The
// default upstream runs `npx`: a stand-in `npx` first on PATH starts the fixture server, which
// replays the corpus' structured captures.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { test } = require('node:test')

const { BIN, FIXTURES, INIT, spawnRaw } = require('./helpers.js')
const { parseArgs, STRUCTURED_FLAG } = require('../bin/options.js')

const CORPUS = process.env.MCP_CORPUS_DIR || path.join(__dirname, '..', '..', 'shared', 'corpus')
const REPLAY = path.join(CORPUS, 'chrome-devtools-mcp-structured', 'app-grid')

test('the default upstream gets the structured flag except at off; an upstream given is left as it is', () => {
  const byDefault = parseArgs([])
  assert.deepEqual([byDefault.command, ...byDefault.args], ['npx', '-y', 'chrome-devtools-mcp@latest', STRUCTURED_FLAG])
  assert.equal(byDefault.dropStructuredContent, true)
  const off = parseArgs(['--filter-level=off'])
  assert.deepEqual([off.command, ...off.args], ['npx', '-y', 'chrome-devtools-mcp@latest'])
  assert.equal(off.dropStructuredContent, false)
  const given = parseArgs(['--', 'npx', 'chrome-devtools-mcp@latest'])
  assert.deepEqual(given.args, ['chrome-devtools-mcp@latest'])
  assert.equal(given.dropStructuredContent, false)
})

const haveCorpus = fs.existsSync(REPLAY)
if (!haveCorpus) {
  const message = `corpus not found at ${REPLAY} (set MCP_CORPUS_DIR)`
  if (process.env.CI) test('default upstream through the proxy', () => assert.fail(message))
  else process.stderr.write(`\n!!! SKIPPED: ${message}\n`)
}

test('through the bin: the flag reaches the default upstream, no result keeps structuredContent', { skip: !haveCorpus }, async () => {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-npx-'))
  const npx = path.join(bin, 'npx')
  fs.writeFileSync(npx, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(FIXTURES, 'fixture-server.js'))} "$@"\n`)
  fs.chmodSync(npx, 0o755)
  const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}`, FIXTURE_REPLAY_DIR: REPLAY }
  const proxy = spawnRaw([process.execPath, BIN, '--filter-level=moderate'], { env })
  try {
    proxy.send(INIT)
    await proxy.waitFor((m) => m.id === 0)
    proxy.send({ jsonrpc: '2.0', id: 1, method: 'fixture/argv' })
    const argv = await proxy.waitFor((m) => m.id === 1)
    assert.deepEqual(argv.result.argv, ['-y', 'chrome-devtools-mcp@latest', STRUCTURED_FLAG])
    let id = 10
    for (const tool of ['take_snapshot', 'navigate_page', 'take_screenshot', 'list_network_requests', 'click', 'fill']) {
      const captured = JSON.parse(fs.readFileSync(path.join(REPLAY, `${tool}.json`), 'utf8')).result
      assert.ok(captured.structuredContent, `${tool}: the capture carries structuredContent`)
      const callId = ++id
      proxy.send({ jsonrpc: '2.0', id: callId, method: 'tools/call', params: { name: tool, arguments: {} } })
      const answer = await proxy.waitFor((m) => m.id === callId)
      assert.equal(answer.result.structuredContent, undefined, `${tool}: structuredContent reached the client`)
      const filtered = ['take_snapshot', 'click', 'fill', 'list_network_requests'].includes(tool)
      if (!filtered) {
        // Everything else as upstream sent it: text and image blocks alike.
        const { structuredContent, ...rest } = captured
        assert.deepEqual(answer.result, rest, tool)
      } else if (tool !== 'list_network_requests') {
        assert.match(answer.result.content[0].text, /#snapshot-filter/, `${tool}: snapshot filtered`)
      }
    }
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
    fs.rmSync(bin, { recursive: true, force: true })
  }
})
