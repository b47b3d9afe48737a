'use strict'

// scripts/test.js splits the node tests by file name: `e2e-*.test.js` runs in `npm run
// test:e2e`, every other `*.test.js` in `npm test`. This holds the split to what it promises:
// each file in exactly one loop, and nothing in `npm test` starts a browser or packs the package.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const { testFiles, summaryLines, cargoSteps } = require('../scripts/test.js')

test('every test file is in exactly one loop, by its name', () => {
  const names = ['a.test.js', 'e2e-b.test.js', 'helpers.js', 'e2e-helper.js', 'fixtures', 'b-e2e.test.js']
  assert.deepEqual(testFiles('unit', names), ['__test__/a.test.js', '__test__/b-e2e.test.js'])
  assert.deepEqual(testFiles('e2e', names), ['__test__/e2e-b.test.js'])
  const all = fs.readdirSync(__dirname).filter((n) => n.endsWith('.test.js')).map((n) => `__test__/${n}`).sort()
  const unit = testFiles('unit')
  const e2e = testFiles('e2e')
  assert.deepEqual([...unit, ...e2e].sort(), all)
  assert.equal(new Set([...unit, ...e2e]).size, all.length)
  assert.ok(e2e.includes('__test__/e2e-chromium.test.js') && e2e.includes('__test__/e2e-package-install.test.js'))
})

test('no file of `npm test` drives a real browser or packs the package', () => {
  for (const file of testFiles('unit')) {
    if (file === '__test__/test-loop.test.js') continue
    const text = fs.readFileSync(path.join(__dirname, '..', file), 'utf8')
    assert.doesNotMatch(text, /bench\/live-browser\.js|@playwright\/mcp\/cli|\['pack'/, `${file} belongs in an e2e-*.test.js file`)
  }
})

test('the corpus skips are one line that says how to run them in full', () => {
  const byKind = new Map([
    ['SKIPPED', new Map([['a', 'no corpus'], ['b', 'no corpus']])],
    ['SAMPLES ONLY', new Map([['c', 'samples'], ['a', 'samples']])],
  ])
  const lines = summaryLines(byKind)
  assert.equal(lines.length, 1)
  assert.match(lines[0], /^Rust corpus tests: 2 skipped and 1 ran on the shipped samples only, for want of the corpus; MCP_CORPUS_DIR=\/path\/to\/corpus npm test runs them in full \(npm test -- --list-skips names them\)\.$/)
  assert.deepEqual(summaryLines(byKind, { list: true }).slice(0, 3), ['  skipped: a: no corpus', '  skipped: b: no corpus', '  samples only: c: samples'])
  assert.deepEqual(summaryLines(new Map()), ['Rust corpus tests: none skipped (the corpus was found).'])
})

test('npm test says what it does from its first second: the build shows cargo\'s progress before the quiet run', () => {
  const steps = cargoSteps()
  assert.ok(steps.length >= 2)
  const [build, ...rest] = steps
  // The build of the test binaries is the long silent part on a fresh clone: cargo names each
  // crate it compiles unless told to be quiet.
  assert.deepEqual(build.args.slice(0, 3), ['test', '--workspace', '--no-run'])
  assert.ok(!build.args.includes('--quiet'), 'the build is quiet')
  assert.match(build.say, /building the Rust test binaries/)
  for (const step of steps) assert.match(step.say, /^npm test \d\/\d: /)
  assert.ok(rest.some((step) => step.args.includes('--quiet') && !step.args.includes('--no-run')), 'the tests run after the build')
})
