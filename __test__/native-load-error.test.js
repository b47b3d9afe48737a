'use strict'

// When the addon cannot load (unsupported platform, optional dependency not installed), the user
// must learn which package is missing and how to fix it.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { describeLoadFailure, platformSuffix, tripleSuffix, supportedPackages } = require('../bin/native.js')
const PACKAGE = require('../package.json')

const BIN = path.join(__dirname, '..', 'bin', 'cli.js')

/** This machine's suffix, worked out here independently of bin/native.js. */
function thisMachineSuffix() {
  const arch = process.arch
  if (process.platform === 'win32') return `win32-${arch}-msvc`
  if (process.platform !== 'linux') return `${process.platform}-${arch}`
  const glibc = process.report.getReport().header.glibcVersionRuntime
  return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`
}

test('a bad NAPI_RS_NATIVE_LIBRARY_PATH is named as the cause, not a missing package, and exits 1', () => {
  const env = { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: path.join(__dirname, 'no-such-addon.node') }
  const run = spawnSync(process.execPath, [BIN, '--', 'true'], { env, encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] })
  assert.equal(run.status, 1, run.stderr)
  assert.equal(run.stdout, '', 'stdout carries MCP messages only')
  assert.match(run.stderr, /NAPI_RS_NATIVE_LIBRARY_PATH is set to .*no-such-addon\.node, and that file could not be loaded/)
  // This clone has its own addon (the tests run on it): the fix is to unset the variable.
  const local = path.join(__dirname, '..', `${PACKAGE.napi.binaryName}.${thisMachineSuffix()}.node`)
  assert.ok(fs.existsSync(local), local)
  assert.ok(run.stderr.includes(`unset NAPI_RS_NATIVE_LIBRARY_PATH to use the addon built here, ${local}`), run.stderr)
  assert.doesNotMatch(run.stderr, /is missing|wasi/)
  assert.match(run.stderr, /cause: .*no-such-addon\.node/, 'the underlying load error is shown')
})

test('a missing platform package is named with the fixes', () => {
  const err = Object.assign(new Error('Cannot find native binding.'), { cause: new Error("Cannot find module 'mcp-snapshot-filter-linux-x64-gnu'") })
  const lines = describeLoadFailure(err, { platform: 'linux', arch: 'x64', musl: false }, PACKAGE, () => {
    throw new Error('not installed')
  }, { env: {}, exists: () => false }).join('\n')
  const expected = `${PACKAGE.name}-linux-x64-gnu`
  assert.match(lines, new RegExp(`the package ${expected} is missing`))
  assert.match(lines, new RegExp(`npm install ${expected}@${PACKAGE.version.replace(/\./g, '\\.')}`))
  assert.match(lines, /--include=optional/)
  assert.match(lines, /build it from source/)
})

test('an addon built in the clone that fails to load is named, not a package', () => {
  const err = Object.assign(new Error('Cannot find native binding.'), { cause: new Error('invalid ELF header') })
  const lines = describeLoadFailure(err, { platform: 'linux', arch: 'x64', musl: false }, PACKAGE, () => {
    throw new Error('not installed')
  }, { env: {}, exists: (p) => p.endsWith('.linux-x64-gnu.node') }).join('\n')
  assert.match(lines, /the addon built here, .*mcp-snapshot-filter\.linux-x64-gnu\.node, failed to load/)
  assert.match(lines, /npm run build/)
  assert.doesNotMatch(lines, /is missing/)
  assert.match(lines, /invalid ELF header/)
})

test('--version and --help do not need the addon', () => {
  const env = { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: path.join(__dirname, 'no-such-addon.node') }
  const run = spawnSync(process.execPath, [BIN, '--version'], { env, encoding: 'utf8', timeout: 20_000 })
  assert.equal(run.status, 0, run.stderr)
  assert.equal(run.stdout.trim(), PACKAGE.version)
})

test('platform suffixes follow napi-rs naming', () => {
  assert.equal(platformSuffix({ platform: 'linux', arch: 'x64', musl: false }), 'linux-x64-gnu')
  assert.equal(platformSuffix({ platform: 'linux', arch: 'arm64', musl: true }), 'linux-arm64-musl')
  assert.equal(platformSuffix({ platform: 'linux', arch: 'arm', musl: false }), 'linux-arm-gnueabihf')
  assert.equal(platformSuffix({ platform: 'darwin', arch: 'arm64' }), 'darwin-arm64')
  assert.equal(platformSuffix({ platform: 'win32', arch: 'arm64' }), 'win32-arm64-msvc')
  assert.equal(tripleSuffix('aarch64-unknown-linux-musl'), 'linux-arm64-musl')
  assert.equal(tripleSuffix('x86_64-apple-darwin'), 'darwin-x64')
  assert.equal(tripleSuffix('x86_64-pc-windows-msvc'), 'win32-x64-msvc')
  assert.equal(supportedPackages().length, PACKAGE.napi.targets.length)
})

test('an unsupported platform is told there is no prebuilt binary, and how to build from source', () => {
  const err = Object.assign(new Error('Cannot find native binding.'), { cause: new Error("Cannot find module 'mcp-snapshot-filter-freebsd-x64'") })
  const lines = describeLoadFailure(err, { platform: 'freebsd', arch: 'x64' }, PACKAGE, () => {
    throw new Error('not installed')
  }, { env: {}, exists: () => false }).join('\n')
  assert.match(lines, /no prebuilt binary for freebsd-x64/)
  assert.match(lines, /supported: linux-x64-gnu, /)
  assert.match(lines, /build it from source/)
  assert.doesNotMatch(lines, /npm install mcp-snapshot-filter-freebsd-x64/)
  assert.match(lines, /cause: Cannot find module 'mcp-snapshot-filter-freebsd-x64'/)
})

test('an installed platform package that fails to load is not reported as missing', () => {
  const err = Object.assign(new Error('Cannot find native binding.'), { cause: new Error('/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.99` not found') })
  const lines = describeLoadFailure(err, { platform: 'linux', arch: 'x64', musl: false }, PACKAGE, (id) => `/x/node_modules/${id}`, { env: {}, exists: () => false }).join('\n')
  assert.match(lines, /mcp-snapshot-filter-linux-x64-gnu is installed but failed to load/)
  assert.doesNotMatch(lines, /is missing/)
  assert.match(lines, /GLIBC_2\.99/)
})
