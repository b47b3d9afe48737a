'use strict'

// What the bin takes from outside its public APIs, checked so that a Node or SDK release that
// changes it fails here, loudly, instead of the proxy silently degrading.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { ROOT } = require('./helpers.js')

test('a scavenge can be asked for at run time (v8.setFlagsFromString --expose-gc), as the big-line path needs', () => {
  // A fresh process without --expose-gc, as the bin runs.
  const script = `const { exposedGc } = require(${JSON.stringify(path.join(ROOT, 'bin', 'proxy.js'))})
const gc = exposedGc()
if (typeof gc !== 'function') { console.log('no gc'); process.exit(1) }
gc({ type: 'minor' })
console.log('ok')`
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  assert.equal(run.stdout.trim(), 'ok', `this Node (${process.version}) no longer honours --expose-gc set at run time: the proxy's big-line memory goes back to piling up between scavenges (see exposedGc in bin/proxy.js)\n${run.stderr}`)
})

test('the bin reaches into no private member of the SDK or of Node objects', () => {
  for (const file of fs.readdirSync(path.join(ROOT, 'bin'))) {
    const text = fs.readFileSync(path.join(ROOT, 'bin', file), 'utf8')
    // `_readBuffer`, `_process` and the like: what the SDK transports keep private.
    const privates = text.match(/\.\s*_[A-Za-z]\w*/g) ?? []
    assert.deepEqual(privates, [], `bin/${file} uses private members`)
    assert.ok(!/sdk\/(server|client)\/stdio/.test(text), `bin/${file} uses an SDK stdio transport again: see bin/upstream-stdio.js for why not`)
  }
})
