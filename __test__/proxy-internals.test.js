'use strict'

// What the bin takes from outside its public APIs, checked so that a Node or SDK release that
// changes it fails here, loudly, instead of the proxy silently degrading.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const { ROOT } = require('./helpers.js')

test('the bin reaches into no private member of the SDK or of Node objects', () => {
  for (const file of fs.readdirSync(path.join(ROOT, 'bin'))) {
    const text = fs.readFileSync(path.join(ROOT, 'bin', file), 'utf8')
    // `_readBuffer`, `_process` and the like: what the SDK transports keep private.
    // (`_meta` is MCP's own member of a message's params, not a private one.)
    const privates = (text.match(/\.\s*_[A-Za-z]\w*/g) ?? []).filter((m) => !/^\.\s*_meta$/.test(m))
    assert.deepEqual(privates, [], `bin/${file} uses private members`)
    assert.ok(!/sdk\/(server|client)\/stdio/.test(text), `bin/${file} uses an SDK stdio transport again: see bin/upstream-stdio.js for why not`)
  }
})
