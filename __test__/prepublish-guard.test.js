'use strict'

// The main package's `prepublishOnly` guard (scripts/prepublish-guard.js): a plain `npm publish`
// from a built clone is refused before anything is sent (it would ship the clone's `.node` and
// no platform packages), and the main package as `npm run release:local` stages it passes.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const http = require('node:http')
const { spawnSync } = require('node:child_process')

const { problems } = require('../scripts/prepublish-guard.js')
const { stage } = require('../scripts/release-local.js')
const { platformSuffix, tripleSuffix, supportedPackages } = require('../bin/native.js')

const ROOT = path.join(__dirname, '..')
const PACKAGE = require('../package.json')
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const ADDON = `${PACKAGE.napi.binaryName}.${platformSuffix()}.node`

function scratch(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-guard-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A built clone as far as publishing sees it: the repository's package.json, the guard, the bin, an addon at the root. */
function builtClone(dir) {
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'))
  fs.cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'scripts'))
  fs.copyFileSync(path.join(ROOT, 'scripts', 'prepublish-guard.js'), path.join(dir, 'scripts', 'prepublish-guard.js'))
  fs.writeFileSync(path.join(dir, ADDON), 'not really an addon')
  return dir
}

test('a built clone is refused: its .node, every missing platform package and the missing repository are named', (t) => {
  const dir = builtClone(scratch(t))
  const found = problems(dir)
  assert.equal(found.length, 3, found.join('\n'))
  assert.match(found[0], new RegExp(`holds ${ADDON.replace(/\./g, '\\.')}: the addon ships in the platform packages`))
  for (const name of supportedPackages()) assert.ok(found[1].includes(`${name}@${PACKAGE.version}`), `${name} is named`)
  assert.match(found[2], /no repository/)
  // Only the addon removed: the platform packages are still missing.
  fs.rmSync(path.join(dir, ADDON))
  assert.doesNotMatch(problems(dir).join('\n'), /\.node/)
  assert.match(problems(dir).join('\n'), /optionalDependencies lack/)
})

test('the main package as release:local stages it passes; a wrong version or a stray platform does not', (t) => {
  const work = scratch(t)
  const addon = path.join(work, ADDON)
  fs.writeFileSync(addon, 'stands for the built addon')
  const triple = PACKAGE.napi.targets.find((tr) => tripleSuffix(tr) === platformSuffix())
  const files = ['index.js', 'index.d.ts', 'bin/cli.js', 'bin/native.js', 'README.md', 'LICENSE', 'package.json', ADDON]
  const staged = stage(path.join(work, 'stage'), { pkg: PACKAGE, triple, addon, repository: { type: 'git', url: 'git+https://example.invalid/msf.git' }, files })
  assert.deepEqual(problems(staged.mainDir), [])
  assert.ok(!fs.existsSync(path.join(staged.mainDir, ADDON)), 'the addon stays out of the main package')
  assert.ok(fs.existsSync(path.join(staged.platformDir, ADDON)), 'and goes into the platform package')
  const manifest = JSON.parse(fs.readFileSync(path.join(staged.mainDir, 'package.json'), 'utf8'))
  assert.deepEqual(manifest.optionalDependencies, { [`${PACKAGE.name}-${platformSuffix()}`]: PACKAGE.version })
  assert.deepEqual(manifest.napi.targets, [triple])
  assert.equal(manifest.scripts.prepare, undefined, 'no build on publish: the stage has no sources')

  const write = (m) => fs.writeFileSync(path.join(staged.mainDir, 'package.json'), JSON.stringify(m))
  write({ ...manifest, optionalDependencies: { [`${PACKAGE.name}-${platformSuffix()}`]: '0.0.1' } })
  assert.match(problems(staged.mainDir).join('\n'), /optionalDependencies lack/)
  write({ ...manifest, optionalDependencies: { ...manifest.optionalDependencies, [`${PACKAGE.name}-sunos-x64`]: PACKAGE.version } })
  assert.match(problems(staged.mainDir).join('\n'), /name mcp-snapshot-filter-sunos-x64, which napi\.targets does not build/)
})

test('npm publish runs the guard first: a built clone is refused with its reasons, and nothing reaches the registry', async (t) => {
  const dir = builtClone(scratch(t))
  // A registry that records every request: the refusal must come before any.
  const requests = []
  const registry = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    res.writeHead(500).end()
  })
  await new Promise((resolve) => registry.listen(0, '127.0.0.1', resolve))
  t.after(() => registry.close())
  const url = `http://127.0.0.1:${/** @type {any} */ (registry.address()).port}/`
  const npmrc = path.join(dir, '..', `${path.basename(dir)}.npmrc`)
  fs.writeFileSync(npmrc, `${url.replace(/^http:/, '')}:_authToken=guard-test\n`)
  t.after(() => fs.rmSync(npmrc, { force: true }))
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))
  const r = spawnSync(NPM, ['publish', '--registry', url], { cwd: dir, env: { ...env, npm_config_userconfig: npmrc, npm_config_update_notifier: 'false' }, encoding: 'utf8', shell: process.platform === 'win32' })
  assert.notEqual(r.status, 0)
  assert.match(r.stderr, /mcp-snapshot-filter: refusing to publish/)
  assert.match(r.stderr, new RegExp(`holds ${ADDON.replace(/\./g, '\\.')}`))
  assert.match(r.stderr, /optionalDependencies lack/)
  assert.deepEqual(requests, [])
})
