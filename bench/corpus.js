'use strict'

// Where every bench finds the corpus of captured MCP results, in one place: the directory given
// (an argument or --corpus), else $MCP_CORPUS_DIR, else ../shared/corpus beside the clone. The
// corpus is not in the repository; a bench that needs it and finds none says how to get it and
// exits, rather than printing empty tables (`NaN%`).

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.resolve(__dirname, '..')
const BESIDE = path.join(ROOT, '..', 'shared', 'corpus')

const HOW_TO_GET = [
  'The corpus of captured MCP results (chrome-devtools-mcp, Playwright MCP, reference servers;',
  'layout in docs/development.md, "The corpus") is not in the repository. Put it at',
  `${BESIDE} (../shared/corpus beside the clone), or set MCP_CORPUS_DIR=/path/to/corpus,`,
  'or pass its directory. Results of your own in that layout can be recorded with',
  'bench/record-session.js and bench/capture-playwright.js; `npx mcp-snapshot-filter measure`',
  'measures the bundled samples/ without any corpus.',
].join('\n')

/** True when `dir` looks like the corpus (its chrome-devtools-mcp/ or sessions/ is there). */
function isCorpus(dir) {
  return ['chrome-devtools-mcp', 'sessions', 'playwright-mcp'].some((sub) => fs.existsSync(path.join(dir, sub)))
}

/** The corpus directory (absolute), or null when none is found. */
function findCorpus(given) {
  for (const dir of [given, process.env.MCP_CORPUS_DIR, BESIDE]) {
    if (dir && isCorpus(dir)) return path.resolve(dir)
  }
  return null
}

/**
 * The corpus directory, or a message saying how to get it on stderr and exit code 2.
 * `who` names the bench in the message.
 */
function requireCorpus(who, given) {
  const dir = findCorpus(given)
  if (dir) return dir
  const tried = [given, process.env.MCP_CORPUS_DIR, BESIDE].filter(Boolean).join(', ')
  process.stderr.write(`${who}: no corpus found (looked in ${tried}).\n${HOW_TO_GET}\n`)
  process.exit(2)
}

module.exports = { findCorpus, requireCorpus, isCorpus, HOW_TO_GET, BESIDE }
