// @ts-check
'use strict'

// Loads the native addon and, when that fails, tells the user which prebuilt package is
// missing and how to fix it. The generated loader (index.js) only says "Cannot find native
// binding", which leaves a user of an unsupported platform or of a failed optional install
// with nothing to act on.

const fs = require('node:fs')
const path = require('node:path')

const PACKAGE = require('../package.json')
const ROOT = path.join(__dirname, '..')

const BUILD_FROM_SOURCE =
  'build it from source (needs Rust >= 1.95, https://rustup.rs): clone the repository and run ' +
  '`npm install` there (it runs `napi build --platform --release`), then start `node bin/cli.js` ' +
  'from the clone, or point NAPI_RS_NATIVE_LIBRARY_PATH at the built `.node` file'

/** True on a musl libc Linux (Alpine): the same report napi's loader falls back to. */
function detectMusl() {
  if (process.platform !== 'linux') return false
  try {
    const report = /** @type {any} */ (process.report?.getReport?.())
    if (report?.header?.glibcVersionRuntime) return false
    return (report?.sharedObjects ?? []).some((f) => f.includes('libc.musl-') || f.includes('ld-musl-'))
  } catch {
    return false
  }
}

/**
 * The napi-rs platform suffix for a runtime, e.g. `linux-x64-gnu`, `darwin-arm64`,
 * `win32-x64-msvc`: the names `napi create-npm-dirs` gives the platform packages.
 */
function platformSuffix({ platform = process.platform, arch = process.arch, musl = detectMusl() } = {}) {
  if (platform === 'linux') {
    if (arch === 'arm') return `linux-arm-${musl ? 'musleabihf' : 'gnueabihf'}`
    return `linux-${arch}-${musl ? 'musl' : 'gnu'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

const TRIPLE_ARCH = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm', riscv64gc: 'riscv64', powerpc64le: 'ppc64', s390x: 's390x', loongarch64: 'loong64' }

/**
 * The napi-rs platform suffix of a Rust target triple, e.g. `aarch64-unknown-linux-musl` ->
 * `linux-arm64-musl`, `x86_64-pc-windows-msvc` -> `win32-x64-msvc` (the naming `napi
 * create-npm-dirs` uses; a test checks the two agree for every target in package.json).
 */
function tripleSuffix(triple) {
  const [cpu, , os, abi] = triple.split('-')
  const arch = TRIPLE_ARCH[cpu] ?? cpu
  if (os === 'darwin') return `darwin-${arch}`
  if (os === 'windows') return `win32-${arch}-${abi}`
  if (os === 'linux') return `linux-${arch}-${abi}`
  return `${os}-${arch}`
}

/**
 * The platform packages this version ships, from `napi.targets`. (The published package also
 * lists them as optionalDependencies, but those are written at publish time only.)
 */
function supportedPackages(pkg = PACKAGE) {
  return (pkg.napi?.targets ?? []).map((triple) => `${pkg.name}-${tripleSuffix(triple)}`)
}

/** First lines of the loader's load errors (its cause chain), last attempt first. */
function causeMessages(err) {
  const messages = []
  for (let e = err?.cause; e && messages.length < 20; e = e.cause) {
    messages.push(String(e.message ?? e).split('\n')[0])
  }
  return messages
}

/**
 * The lines a user sees when the addon cannot be loaded: which package is missing (or that the
 * platform has no prebuilt binary), and how to fix it. `env` and `exists` are for tests.
 */
function describeLoadFailure(err, runtime = {}, pkg = PACKAGE, resolve = require.resolve, { env = process.env, exists = fs.existsSync } = {}) {
  const suffix = platformSuffix(runtime)
  const expected = `${pkg.name}-${suffix}`
  // The addon `napi build --platform` writes beside index.js in a clone.
  const local = path.join(ROOT, `${pkg.napi?.binaryName ?? pkg.name}.${suffix}.node`)
  const lines = [`cannot load the native filter for this platform (${suffix}).`]
  const override = env.NAPI_RS_NATIVE_LIBRARY_PATH
  if (override) {
    // With the variable set the loader tries that file only: nothing else is to blame.
    lines.push(`NAPI_RS_NATIVE_LIBRARY_PATH is set to ${override}, and that file could not be loaded (the loader then tries nothing else).`)
    if (exists(local)) lines.push(`fix: unset NAPI_RS_NATIVE_LIBRARY_PATH to use the addon built here, ${local}, or point it at another built .node file.`)
    else lines.push(`fix: unset it (the loader then looks for ${local} and for the package ${expected}), or point it at a built .node file.`)
    const own = causeMessages(err).filter((m) => m.includes(override))
    for (const message of own.length > 0 ? own : causeMessages(err)) lines.push(`  cause: ${message}`)
    return lines
  }
  if (exists(local)) {
    lines.push(`the addon built here, ${local}, failed to load (see the causes below): rebuild it with \`npm run build\` in ${ROOT}.`)
  } else if (!supportedPackages(pkg).includes(expected)) {
    lines.push(`there is no prebuilt binary for ${suffix} (no package ${expected}); supported: ${supportedPackages(pkg).map((n) => n.slice(pkg.name.length + 1)).join(', ')}.`)
    lines.push(`fix: ${BUILD_FROM_SOURCE}.`)
  } else if (isResolvable(expected, resolve)) {
    lines.push(`the package ${expected} is installed but failed to load (see the causes below); reinstall it: npm install ${expected}@${pkg.version}`)
    lines.push(`or ${BUILD_FROM_SOURCE}.`)
  } else {
    lines.push(`the package ${expected} is missing: npm did not install the optional dependency.`)
    lines.push(`fix: npm install ${expected}@${pkg.version} beside it (or reinstall with \`npm install --include=optional\`; npm skips optional dependencies under --omit=optional or after a failed download),`)
    lines.push(`or ${BUILD_FROM_SOURCE}.`)
  }
  for (const message of causeMessages(err)) lines.push(`  cause: ${message}`)
  return lines
}

function isResolvable(name, resolve) {
  try {
    resolve(`${name}/package.json`)
    return true
  } catch {
    return false
  }
}

/**
 * Loads the addon; on failure gives `log` what to do, line by line, and returns null.
 * @param {(line: string) => void} log
 * @returns {typeof import('../index') | null}
 */
function tryLoadNative(log) {
  try {
    return require('../index.js')
  } catch (err) {
    for (const line of describeLoadFailure(err)) log(line)
    return null
  }
}

/**
 * Loads the addon; on failure logs what to do and exits 1.
 * @param {(line: string) => void} log
 */
function loadNative(log) {
  return tryLoadNative(log) ?? process.exit(1)
}

module.exports = { loadNative, tryLoadNative, describeLoadFailure, platformSuffix, tripleSuffix, supportedPackages, detectMusl }
