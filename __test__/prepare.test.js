'use strict'

// npm runs `prepare` when `npx mcp-snapshot-filter` or `npm install -g .` links a clone, not only
// on `npm install`: it must build only when the addon is missing or older than the Rust sources.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const { staleReason } = require('../scripts/prepare.js')

function tree() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-prepare-'))
  fs.mkdirSync(path.join(root, 'bin'))
  fs.mkdirSync(path.join(root, 'src', 'snapshot'), { recursive: true })
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(root, 'package.json'))
  fs.copyFileSync(path.join(ROOT, 'bin', 'native.js'), path.join(root, 'bin', 'native.js'))
  fs.writeFileSync(path.join(root, 'src', 'snapshot', 'mod.rs'), '// rust\n')
  fs.writeFileSync(path.join(root, 'Cargo.toml'), '[package]\n')
  const { platformSuffix } = require('../bin/native.js')
  const addon = path.join(root, `mcp-snapshot-filter.${platformSuffix()}.node`)
  return { root, addon }
}

const at = (file, seconds) => fs.utimesSync(file, seconds, seconds)

test('prepare builds when the addon is missing or older than any Rust source, never otherwise', () => {
  const { root, addon } = tree()
  assert.match(staleReason(root), /^no mcp-snapshot-filter\..*\.node yet$/)
  fs.writeFileSync(addon, 'built')
  at(path.join(root, 'src', 'snapshot', 'mod.rs'), 1_000)
  at(path.join(root, 'Cargo.toml'), 1_000)
  at(addon, 2_000)
  assert.equal(staleReason(root), null)
  at(path.join(root, 'src', 'snapshot', 'mod.rs'), 3_000)
  assert.match(staleReason(root), /Rust sources changed/)
  at(addon, 4_000)
  assert.equal(staleReason(root), null)
  // The core crate the binding links is a Rust source of the addon too.
  fs.mkdirSync(path.join(root, 'crates', 'core', 'src'), { recursive: true })
  fs.writeFileSync(path.join(root, 'crates', 'core', 'src', 'lib.rs'), '// rust\n')
  at(path.join(root, 'crates', 'core', 'src', 'lib.rs'), 5_000)
  assert.match(staleReason(root), /Rust sources changed/)
})

test('the prepare script is this check, and a fresh addon means no build at all', () => {
  const pkg = require('../package.json')
  assert.equal(pkg.scripts.prepare, 'node scripts/prepare.js')
  const { root, addon } = tree()
  fs.mkdirSync(path.join(root, 'scripts'))
  fs.copyFileSync(path.join(ROOT, 'scripts', 'prepare.js'), path.join(root, 'scripts', 'prepare.js'))
  fs.writeFileSync(addon, 'built')
  at(path.join(root, 'src', 'snapshot', 'mod.rs'), 1_000)
  at(path.join(root, 'Cargo.toml'), 1_000)
  // No node_modules in this tree: had it tried to build, resolving @napi-rs/cli would fail.
  const run = spawnSync(process.execPath, [path.join(root, 'scripts', 'prepare.js')], { cwd: root, encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stderr, /is up to date, not rebuilding/)
})
