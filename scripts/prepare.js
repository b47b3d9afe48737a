#!/usr/bin/env node
'use strict'

// npm's `prepare`: the release build of the native addon, unless the addon for this platform is
// already there and newer than every Rust source. npm runs `prepare` not only on `npm install`
// in a clone but also when `npx mcp-snapshot-filter` (or `npm install -g .`) links the clone
// into its cache: without this check the first `npx` in a clone silently rebuilt for minutes
// before printing `--help`. A stale or missing addon is still built, as before.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
// The binding (src/, build.rs) and the core crate it links (crates/).
const SOURCES = ['src', 'crates', 'build.rs', 'Cargo.toml', 'Cargo.lock']

/** Newest modification time (ms) under the given paths; 0 when none exists. */
function newestMtime(root, entries) {
  let newest = 0
  const stack = entries.map((e) => path.join(root, e))
  while (stack.length > 0) {
    const p = stack.pop()
    let st
    try {
      st = fs.statSync(p)
    } catch {
      continue
    }
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) stack.push(path.join(p, name))
    else newest = Math.max(newest, st.mtimeMs)
  }
  return newest
}

/** The addon `napi build --platform` writes for this machine. */
function addonPath(root = ROOT) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  const { platformSuffix } = require(path.join(root, 'bin', 'native.js'))
  return path.join(root, `${pkg.napi?.binaryName ?? pkg.name}.${platformSuffix()}.node`)
}

/** Why a build is needed, or null when the addon is up to date. */
function staleReason(root = ROOT) {
  const addon = addonPath(root)
  let built
  try {
    built = fs.statSync(addon).mtimeMs
  } catch {
    return `no ${path.basename(addon)} yet`
  }
  const sources = newestMtime(root, SOURCES)
  return sources > built ? `the Rust sources changed since ${path.basename(addon)} was built` : null
}

function main() {
  const reason = staleReason()
  if (reason === null) {
    process.stderr.write(`mcp-snapshot-filter: ${path.basename(addonPath())} is up to date, not rebuilding (npm run build forces a release build)\n`)
    return 0
  }
  process.stderr.write(`mcp-snapshot-filter: building the release addon (${reason}); the first build takes a few minutes\n`)
  const cli = require.resolve('@napi-rs/cli/package.json', { paths: [ROOT] })
  const napi = path.join(path.dirname(cli), require(cli).bin.napi)
  const run = spawnSync(process.execPath, [napi, 'build', '--platform', '--release'], { cwd: ROOT, stdio: 'inherit' })
  return run.status ?? 1
}

if (require.main === module) process.exitCode = main()

module.exports = { staleReason, addonPath, newestMtime }
