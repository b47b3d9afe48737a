'use strict'

// The FilterSession methods a JS proxy needs when it filters through filterToolResponse
// instead of routeResponse (which does all three itself): learnEra, useClient and
// answerNotDelivered (docs/native-api.md). Each is checked by what it changes in the answers.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const { FilterSession } = require('../index.js')

const GRID = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'snapshots', 'grid.json'), 'utf8')).result
const LINE = JSON.stringify({ jsonrpc: '2.0', id: 1, result: GRID })
const ARGS = '{"pageId":1}'
const MODERN_META = (name) =>
  JSON.stringify({
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name, version: '1' },
  })

function session() {
  return new FilterSession({ filter: { level: 'moderate' }, stats: 'off', snapshotDeltas: true })
}

/** The first line of the snapshot section of a filtered response line. */
function snapshotHeader(line) {
  const text = JSON.parse(line).result.content.map((b) => b.text ?? '').join('\n')
  const at = text.indexOf('## Latest page snapshot\n')
  assert.notEqual(at, -1, 'the result has a snapshot section')
  return text.slice(at).split('\n')[1]
}

function filterGrid(s) {
  const out = s.filterToolResponse('take_snapshot', LINE, ARGS)
  assert.ok(out, 'the snapshot is rewritten')
  return snapshotHeader(out)
}

test('learnEra: the proxy tools answer in the era the upstream showed', () => {
  const args = JSON.stringify({ uid: '1_1' })
  // Nothing learned: a request without the modern envelope is answered the 2025 way.
  const fresh = session()
  assert.match(fresh.answerProxyTool('expand_snapshot', args, null), /^"result":/)

  // A modern upstream (server/discover): the same request lacks the envelope a modern server requires.
  const modern = session()
  modern.learnEra('server/discover', JSON.stringify({ supportedVersions: ['2026-07-28'] }))
  const refused = JSON.parse(`{${modern.answerProxyTool('expand_snapshot', args, null)}}`)
  assert.equal(refused.error.code, -32602)
  const answered = JSON.parse(`{${modern.answerProxyTool('expand_snapshot', args, MODERN_META('a'))}}`)
  assert.equal(answered.result.resultType, 'complete')

  // A 2025 upstream (initialize): a request naming the modern version still gets a 2025 answer.
  const legacy = session()
  legacy.learnEra('initialize', JSON.stringify({ protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'x', version: '1' } }))
  const old = JSON.parse(`{${legacy.answerProxyTool('expand_snapshot', args, MODERN_META('a'))}}`)
  assert.ok(old.result, 'answered')
  assert.equal(old.result.resultType, undefined)
})

test('useClient: each client gets deltas against what it was sent, not another client', () => {
  const s = session()
  s.useClient(MODERN_META('a'))
  assert.match(filterGrid(s), /full/)
  // The same page again for the same client: it holds the page, so it gets the short form.
  assert.match(filterGrid(s), /unchanged since snapshot/)
  // Another client holds nothing of the page yet.
  s.useClient(MODERN_META('b'))
  assert.match(filterGrid(s), /full/)
  // Back to the first client: its state was kept.
  s.useClient(MODERN_META('a'))
  assert.match(filterGrid(s), /unchanged since snapshot/)
})

test('answerNotDelivered: an answer the client will not read is not what it holds', () => {
  const delivered = session()
  assert.match(filterGrid(delivered), /full/)
  assert.match(filterGrid(delivered), /unchanged since snapshot/)

  const dropped = session()
  assert.match(filterGrid(dropped), /full/)
  dropped.answerNotDelivered()
  // The agent never saw the first one: the next is whole again.
  assert.match(filterGrid(dropped), /full/)
})
