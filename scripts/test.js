#!/usr/bin/env node
'use strict'

// `npm test`: cargo test, then the node tests. cargo shows a test's stderr only when it fails,
// so a corpus test that skipped (no corpus) or ran on the shipped samples only would pass in
// silence; each one also writes a line to MCP_TEST_SKIP_LOG (src/test_support.rs), and this
// script prints them and their count after cargo's own output.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')

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

/** The lines printed after cargo test: every skipped or samples-only test, then the counts. */
function summaryLines(byKind) {
  const skipped = byKind.get('SKIPPED') ?? new Map()
  // A test that skipped part of itself is counted once, as skipped.
  const samples = new Map([...(byKind.get('SAMPLES ONLY') ?? new Map())].filter(([t]) => !skipped.has(t)))
  if (skipped.size === 0 && samples.size === 0) return ['Rust corpus tests: none skipped (the corpus was found).']
  const lines = []
  for (const [test, why] of skipped) lines.push(`!!!!! SKIPPED: ${test}: ${why}`)
  for (const [test, why] of samples) lines.push(`!!!!! SAMPLES ONLY: ${test}: ${why}`)
  lines.push(`Rust corpus tests: ${skipped.size} skipped, ${samples.size} ran on the shipped samples only (set MCP_CORPUS_DIR to a corpus to run them in full).`)
  return lines
}

function main() {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'msf-test-')), 'skips.tsv')
  const env = { ...process.env, MCP_TEST_SKIP_LOG: log }
  const cargo = spawnSync('cargo', ['test', '--quiet'], { cwd: ROOT, env, stdio: 'inherit' })
  const lines = summaryLines(readSkipLog(log))
  fs.rmSync(path.dirname(log), { recursive: true, force: true })
  process.stdout.write(`\n${lines.join('\n')}\n\n`)
  if (cargo.status !== 0) return cargo.status ?? 1
  const node = spawnSync(process.execPath, ['--test', '--test-reporter=spec', '__test__/'], { cwd: ROOT, env: process.env, stdio: 'inherit' })
  return node.status ?? 1
}

if (require.main === module) process.exitCode = main()

module.exports = { readSkipLog, summaryLines }
