#!/usr/bin/env node
'use strict'

// The two test loops.
//
//   npm test           (node scripts/test.js)      cargo test --workspace (the core crate and the
//                                                  binding), then every node test file that is
//                                                  not end-to-end: what to run after each change.
//                                                  Each step says what it is doing as it starts,
//                                                  and the build shows cargo's progress.
//   npm run test:e2e   (node scripts/test.js e2e)  the end-to-end node test files only.
//
// The rule, by file name: `__test__/e2e-*.test.js` is end-to-end (a real browser, Playwright
// MCP, `npm pack` and a package install, the long hostile-page runs); every other
// `__test__/*.test.js` is in `npm test`, so a new file lands in one loop by its name alone.
// An e2e test that needs Chromium skips without it, and fails without it when CI is set.
//
// cargo shows a test's stderr only when it fails, so a corpus test that skipped (no corpus) or
// ran on the shipped samples only would pass in silence; each one also writes a line to
// MCP_TEST_SKIP_LOG (crates/core/src/test_support.rs), and this script counts them in one line after
// cargo's own output (`--list-skips` lists them).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const TEST_DIR = path.join(ROOT, '__test__')
const E2E = /^e2e-.*\.test\.js$/
const TEST_FILE = /\.test\.js$/

/** The node test files of one loop ('unit' or 'e2e'), relative to the repository, sorted. */
function testFiles(loop, names = fs.readdirSync(TEST_DIR)) {
  return names
    .filter((name) => TEST_FILE.test(name) && E2E.test(name) === (loop === 'e2e'))
    .sort()
    .map((name) => path.posix.join('__test__', name))
}

/** { kind -> Map(test -> why) } from the skip log's `kind\ttest\twhy` lines. */
function readSkipLog(file) {
  const byKind = new Map()
  let text = ''
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch {
    return byKind
  }
  for (const line of text.split('\n')) {
    const [kind, test, why] = line.split('\t')
    if (!why) continue
    if (!byKind.has(kind)) byKind.set(kind, new Map())
    byKind.get(kind).set(test, why)
  }
  return byKind
}

/** The lines printed after cargo test: one count line, and with `list` every skipped test. */
function summaryLines(byKind, { list = false } = {}) {
  const skipped = byKind.get('SKIPPED') ?? new Map()
  // A test that skipped part of itself is counted once, as skipped.
  const samples = new Map([...(byKind.get('SAMPLES ONLY') ?? new Map())].filter(([t]) => !skipped.has(t)))
  if (skipped.size === 0 && samples.size === 0) return ['Rust corpus tests: none skipped (the corpus was found).']
  const lines = []
  if (list) {
    for (const [test, why] of skipped) lines.push(`  skipped: ${test}: ${why}`)
    for (const [test, why] of samples) lines.push(`  samples only: ${test}: ${why}`)
  }
  lines.push(
    `Rust corpus tests: ${skipped.size} skipped and ${samples.size} ran on the shipped samples only, for want of the corpus; ` +
      `MCP_CORPUS_DIR=/path/to/corpus npm test runs them in full${list ? '' : ' (npm test -- --list-skips names them)'}.`,
  )
  return lines
}

/** node --test over the files; several files at once, since most of their time is spent waiting on child processes. */
function runNode(files) {
  if (files.length === 0) {
    process.stdout.write('no test files\n')
    return 0
  }
  const concurrency = Math.max(2, os.availableParallelism())
  const node = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files], { cwd: ROOT, env: process.env, stdio: 'inherit' })
  return node.status ?? 1
}

/**
 * The cargo commands of `npm test`, each with the line printed before it: the build of the
 * test binaries first, with cargo's own progress (each crate as it compiles: minutes on a fresh
 * clone, which `--quiet` would leave silent), then the run, quiet.
 */
function cargoSteps() {
  return [
    {
      say: 'npm test 1/3: building the Rust test binaries (cargo build --tests of the core crate and the binding; cargo names each crate it compiles: minutes on a fresh clone, seconds after)',
      args: ['test', '--workspace', '--no-run'],
    },
    { say: 'npm test 2/3: cargo test --workspace (unit, property, expected-output and corpus tests)', args: ['test', '--workspace', '--quiet'] },
  ]
}

function main(argv) {
  const loop = argv.includes('e2e') ? 'e2e' : 'unit'
  if (loop === 'e2e') return runNode(testFiles('e2e'))
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'msf-test-')), 'skips.tsv')
  const env = { ...process.env, MCP_TEST_SKIP_LOG: log }
  let cargo = { status: 0 }
  for (const step of cargoSteps()) {
    process.stdout.write(`${step.say}\n`)
    cargo = spawnSync('cargo', step.args, { cwd: ROOT, env, stdio: 'inherit' })
    if (cargo.status !== 0) break
  }
  const lines = summaryLines(readSkipLog(log), { list: argv.includes('--list-skips') })
  fs.rmSync(path.dirname(log), { recursive: true, force: true })
  process.stdout.write(`\n${lines.join('\n')}\n\n`)
  if (cargo.status !== 0) return cargo.status ?? 1
  const files = testFiles('unit')
  process.stdout.write(`npm test 3/3: ${files.length} node test files (several at once; each file's tests print as it ends)\n`)
  return runNode(files)
}

if (require.main === module) process.exitCode = main(process.argv.slice(2))

module.exports = { readSkipLog, summaryLines, testFiles, cargoSteps, E2E }
