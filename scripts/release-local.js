#!/usr/bin/env node
'use strict'

// `npm run release:local -- --registry URL`: this machine's part of a release, published to a
// registry of your choice (a private one, a local verdaccio). It builds this machine's addon
// (`napi build --platform --release`), lays out its platform package as napi-rs does (`napi
// create-npm-dirs`, the addon copied in), stages the main package as the release workflow
// publishes it (the files `files` ships, no `.node`, optionalDependencies naming the platform
// packages built here and only those, `napi.targets` cut to them), then publishes the platform
// package and the main package, in that order. The main package's `prepublishOnly` guard
// (scripts/prepublish-guard.js) checks the staged package before npm sends it. Nothing in the
// repository changes: the staging is a temporary folder. The full 8-platform release stays in
// CI (.github/workflows/release.yml).
//
// Authentication is npm's own: the registry's token in your npm config (`npm login --registry
// URL`, or `//host:port/:_authToken=…` in the file npm_config_userconfig names).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

const USAGE = `Usage: npm run release:local -- --registry URL [--repository URL] [--tag TAG] [--dry-run]

Builds this machine's platform package and publishes it, then the main package (its
optionalDependencies: the platform packages built here, only those), to the registry at URL.
  --registry URL     where to publish (required); your npm config holds its token
  --repository URL   the package's "repository" (default: package.json's, else git's origin)
  --tag TAG          the dist-tag (npm's default: latest)
  --dry-run          everything but the upload (npm publish --dry-run)
`

class UsageError extends Error {}

function parseArgs(argv) {
  const opts = { registry: null, repository: null, tag: null, dryRun: false }
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s)
    const value = () => {
      const v = inline ?? argv[++i]
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`)
      return v
    }
    if (flag === '--registry') opts.registry = value()
    else if (flag === '--repository') opts.repository = value()
    else if (flag === '--tag') opts.tag = value()
    else if (flag === '--dry-run') opts.dryRun = true
    else if (flag === '-h' || flag === '--help') opts.help = true
    else throw new UsageError(`unknown argument ${JSON.stringify(argv[i])}`)
  }
  if (opts.help) return opts
  if (opts.registry === null) throw new UsageError('--registry URL is required (the full 8-platform release to npmjs.org is the release workflow)')
  let url
  try {
    url = new URL(opts.registry)
  } catch {
    throw new UsageError(`--registry ${JSON.stringify(opts.registry)} is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--registry must be http:// or https://, not ${url.protocol}`)
  return opts
}

/** The environment for the nested npm and napi runs: without what `npm run` set for this package. */
function childEnv() {
  const env = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_(package_|lifecycle_)/i.test(key)) env[key] = value
  }
  return env
}

/** Runs a command with its output on our stderr (stdout stays for the summary); throws on failure. */
function run(cmd, args, cwd) {
  const shell = process.platform === 'win32' && cmd === NPM
  const r = spawnSync(cmd, args, { cwd, env: childEnv(), stdio: ['ignore', 2, 2], shell })
  if (r.status !== 0) throw new Error(`${[path.basename(cmd), ...args].join(' ')} failed (exit ${r.status ?? r.signal})`)
}

function napi(args, cwd) {
  const cliPkg = require.resolve('@napi-rs/cli/package.json', { paths: [ROOT] })
  const { bin } = JSON.parse(fs.readFileSync(cliPkg, 'utf8'))
  run(process.execPath, [path.join(path.dirname(cliPkg), typeof bin === 'string' ? bin : bin.napi), ...args], cwd)
}

/** package.json's repository, else git's origin, else null. */
function repositoryOf(pkg, given) {
  if (given) return { type: 'git', url: given }
  if (pkg.repository) return pkg.repository
  const git = spawnSync('git', ['remote', 'get-url', 'origin'], { cwd: ROOT, encoding: 'utf8' })
  const url = git.status === 0 ? git.stdout.trim() : ''
  return url ? { type: 'git', url } : null
}

/** The files `npm pack` would ship from the repository (by `files`), relative paths. */
function shippedFiles() {
  const r = spawnSync(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, env: childEnv(), encoding: 'utf8', shell: process.platform === 'win32' })
  if (r.status !== 0) throw new Error(`npm pack --dry-run failed: ${r.stderr}`)
  const [info] = JSON.parse(r.stdout)
  return info.files.map((f) => f.path)
}

/**
 * Stages both packages under `work` for the target `triple`, with the addon at `addon`; returns
 * { platformDir, mainDir, platformName }. Exported for the tests.
 */
function stage(work, { pkg, triple, addon, repository, files }) {
  const { tripleSuffix } = require(path.join(ROOT, 'bin', 'native.js'))
  const suffix = tripleSuffix(triple)
  const manifest = { ...pkg, napi: { ...pkg.napi, targets: [triple] }, repository }
  // npm would run `prepare` (a build from the sources) on publish; the stage has no sources.
  const { prepare: _prepare, ...scripts } = pkg.scripts ?? {}
  manifest.scripts = scripts

  // The platform package, laid out by napi itself.
  const napiDir = path.join(work, 'napi')
  fs.mkdirSync(napiDir, { recursive: true })
  fs.writeFileSync(path.join(napiDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  napi(['create-npm-dirs', '--cwd', napiDir], ROOT)
  const platformDir = path.join(napiDir, 'npm', suffix)
  fs.copyFileSync(addon, path.join(platformDir, path.basename(addon)))
  const platformName = JSON.parse(fs.readFileSync(path.join(platformDir, 'package.json'), 'utf8')).name

  // The main package: what `files` ships, less any addon, and the guard npm runs before publishing.
  const mainDir = path.join(work, 'main')
  for (const file of files.filter((f) => !f.endsWith('.node'))) {
    fs.mkdirSync(path.dirname(path.join(mainDir, file)), { recursive: true })
    fs.copyFileSync(path.join(ROOT, file), path.join(mainDir, file))
  }
  fs.mkdirSync(path.join(mainDir, 'scripts'), { recursive: true })
  fs.copyFileSync(path.join(ROOT, 'scripts', 'prepublish-guard.js'), path.join(mainDir, 'scripts', 'prepublish-guard.js'))
  manifest.optionalDependencies = { [platformName]: pkg.version }
  fs.writeFileSync(path.join(mainDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return { platformDir, mainDir, platformName }
}

function main(argv) {
  let opts
  try {
    opts = parseArgs(argv)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    process.stderr.write(`release:local: ${err.message}\n${USAGE}`)
    return 2
  }
  if (opts.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  const { platformSuffix, tripleSuffix } = require(path.join(ROOT, 'bin', 'native.js'))
  const suffix = platformSuffix()
  const triple = (pkg.napi?.targets ?? []).find((t) => tripleSuffix(t) === suffix)
  if (!triple) {
    process.stderr.write(`release:local: this machine (${suffix}) is none of package.json's napi.targets: no platform package to build here\n`)
    return 1
  }
  const repository = repositoryOf(pkg, opts.repository)
  if (!repository) {
    process.stderr.write('release:local: no repository to publish with: give --repository URL (package.json has none, and git has no origin)\n')
    return 1
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-release-'))
  try {
    process.stderr.write(`release:local: building the release addon for ${triple} (${suffix})\n`)
    napi(['build', '--platform', '--release'], ROOT)
    const addon = path.join(ROOT, `${pkg.napi?.binaryName ?? pkg.name}.${suffix}.node`)
    if (!fs.existsSync(addon)) throw new Error(`the build wrote no ${path.basename(addon)}`)
    const staged = stage(work, { pkg, triple, addon, repository, files: shippedFiles() })
    const publish = ['publish', '--registry', opts.registry, ...(opts.tag ? ['--tag', opts.tag] : []), ...(opts.dryRun ? ['--dry-run'] : [])]
    process.stderr.write(`release:local: publishing ${staged.platformName}@${pkg.version}, then ${pkg.name}@${pkg.version}, to ${opts.registry}\n`)
    run(NPM, publish, staged.platformDir)
    run(NPM, publish, staged.mainDir)
    const what = opts.dryRun ? 'would publish (dry run)' : 'published'
    process.stdout.write(`${what} ${staged.platformName}@${pkg.version} and ${pkg.name}@${pkg.version} (optionalDependencies: ${staged.platformName}) to ${opts.registry}\n`)
    if (!opts.dryRun) process.stdout.write(`try it: npx -y --registry ${opts.registry} ${pkg.name}@${pkg.version} measure\n`)
    return 0
  } catch (err) {
    process.stderr.write(`release:local: ${err.message}\n`)
    return 1
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2))

module.exports = { parseArgs, stage, shippedFiles }
