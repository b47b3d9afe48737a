'use strict'

// The release path as a registry user meets it: `npm run release:local -- --registry URL`
// publishes this machine's platform package and the main package to a private registry
// (verdaccio, a pinned dev dependency, started here on 127.0.0.1 with its storage in a temporary
// folder; packages other than ours come through it from the registry npm uses). Then, with no
// Rust or cargo on PATH, a fresh project installs the package from that registry and runs
// `npx mcp-snapshot-filter measure`, the proxy in front of the fixture server, and
// `require('mcp-snapshot-filter')`; and `npx -y mcp-snapshot-filter@<version> install`, run from
// npx's cache, writes an entry that names the version (not the cache's path) and that starts
// the proxy. Needs the network for the dependencies' metadata (as `npm install` does).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const http = require('node:http')
const { spawn, spawnSync } = require('node:child_process')

const { platformSuffix } = require('../bin/native.js')
const { INSTALL_MARK } = require('../bin/options.js')
const { FIXTURES, INIT, spawnRaw } = require('./helpers.js')

const ROOT = path.resolve(__dirname, '..')
const PACKAGE = require('../package.json')
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx'
const FIXTURE_SERVER = path.join(FIXTURES, 'fixture-server.js')
const EXE = process.platform === 'win32' ? '.exe' : ''

/** process.env without what `npm test` set for this package (its prefix would point nested npm runs here). */
function baseEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
}

/** PATH without any folder holding cargo or rustc: what a registry user without Rust has. */
function pathWithoutRust() {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !['cargo', 'rustc'].some((tool) => fs.existsSync(path.join(dir, tool + EXE))))
    .join(path.delimiter)
}

function run(cmd, args, { cwd, env, timeout = 120_000 }) {
  const shell = process.platform === 'win32' && (cmd === NPM || cmd === NPX)
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout, shell, stdio: ['ignore', 'pipe', 'pipe'] })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal ?? r.error}):\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/** Starts the verdaccio fixture; resolves { url, child } once it listens. */
function startRegistry(dir, uplink) {
  const child = spawn(process.execPath, [path.join(FIXTURES, 'verdaccio.js'), dir, uplink], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)
      if (m) resolve({ url: m[1], child })
    })
    child.stderr.on('data', (d) => {
      out += d
    })
    child.once('exit', (code) => reject(new Error(`verdaccio exited (${code}) before listening:\n${out}`)))
  })
}

/** Signs a user up with the registry; resolves its token. */
function signUp(url) {
  const body = JSON.stringify({ name: 'release-test', password: 'release-test-password' })
  return new Promise((resolve, reject) => {
    const req = http.request(new URL('-/user/org.couchdb.user:release-test', url), { method: 'PUT', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = ''
      res.on('data', (d) => {
        text += d
      })
      res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text).token) : reject(new Error(`sign-up answered ${res.statusCode}: ${text}`))))
    })
    req.on('error', reject)
    req.end(body)
  })
}

test('release:local publishes to a private registry; a user without Rust installs and runs what it published', { timeout: 20 * 60_000 }, async (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-release-test-'))
  t.after(() => fs.rmSync(work, { recursive: true, force: true }))
  const uplink = run(NPM, ['config', 'get', 'registry'], { cwd: work, env: baseEnv() }).trim()
  fs.mkdirSync(path.join(work, 'registry'))
  const registry = await startRegistry(path.join(work, 'registry'), uplink)
  t.after(() => registry.child.kill())
  const url = registry.url
  const npmrc = path.join(work, 'npmrc')
  fs.writeFileSync(npmrc, `${url.replace(/^http:/, '')}:_authToken=${await signUp(url)}\n`)

  // 1. The release, as its user runs it (with Rust: it builds).
  const released = run(NPM, ['run', '--silent', 'release:local', '--', '--registry', url, '--repository', 'git+https://example.invalid/mcp-snapshot-filter.git'], {
    cwd: ROOT,
    env: { ...baseEnv(), npm_config_userconfig: npmrc, npm_config_update_notifier: 'false' },
    timeout: 15 * 60_000,
  })
  const platformName = `${PACKAGE.name}-${platformSuffix()}`
  assert.match(released, new RegExp(`published ${platformName}@${PACKAGE.version} and ${PACKAGE.name}@${PACKAGE.version}`))

  // 2. What a registry user gets: no Rust, an empty npm cache, this registry only.
  const noRust = pathWithoutRust()
  const home = path.join(work, 'home')
  fs.mkdirSync(path.join(home, '.cursor'), { recursive: true })
  const userEnv = {
    ...baseEnv(),
    PATH: noRust,
    HOME: home,
    USERPROFILE: home,
    npm_config_registry: url,
    npm_config_cache: path.join(work, 'npm-cache'),
    npm_config_userconfig: path.join(work, 'user-npmrc'),
    npm_config_update_notifier: 'false',
    MCP_SNAPSHOT_FILTER_LEDGER: 'off',
  }
  assert.equal(spawnSync('cargo', ['--version'], { env: userEnv }).error?.code, 'ENOENT', 'no cargo on the user PATH')

  const view = JSON.parse(run(NPM, ['view', `${PACKAGE.name}@${PACKAGE.version}`, '--json'], { cwd: work, env: userEnv }))
  assert.deepEqual(view.optionalDependencies, { [platformName]: PACKAGE.version }, 'the platforms built, and only those')
  assert.equal(view.repository?.url, 'git+https://example.invalid/mcp-snapshot-filter.git')
  assert.deepEqual(view.engines, PACKAGE.engines)

  const project = path.join(work, 'project')
  fs.mkdirSync(project)
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'registry-user', version: '1.0.0', private: true }))
  run(NPM, ['install', `${PACKAGE.name}@${PACKAGE.version}`, '--no-audit', '--no-fund'], { cwd: project, env: userEnv, timeout: 5 * 60_000 })
  const installed = path.join(project, 'node_modules', PACKAGE.name)
  const addonName = `${PACKAGE.napi.binaryName}.${platformSuffix()}.node`
  assert.deepEqual(fs.readdirSync(installed).filter((f) => f.endsWith('.node')), [], 'no addon in the main package')
  assert.ok(fs.existsSync(path.join(project, 'node_modules', platformName, addonName)), 'the addon came with the platform package')
  for (const file of ['README.md', 'LICENSE', 'docs/install.md']) assert.ok(fs.existsSync(path.join(installed, file)), `${file} ships`)
  // The README's own links lead somewhere in the package (or are absolute).
  const readme = fs.readFileSync(path.join(installed, 'README.md'), 'utf8')
  assert.match(readme, /npx -y mcp-snapshot-filter/, 'the README says how to run it with npx')
  const prose = readme.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
  for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target)) continue
    assert.ok(fs.existsSync(path.join(installed, target.split('#')[0])), `README link ${target} resolves in the package`)
  }

  // 3. measure, through npx: the bundled samples, and why the counts are estimates.
  const measured = run(NPX, ['mcp-snapshot-filter', 'measure'], { cwd: project, env: userEnv })
  assert.match(measured, /measuring the sample results bundled in samples\//)
  assert.match(measured, /Tokens: estimated tokens.*not o200k: gpt-tokenizer, a development dependency of this package, is not installed/)

  // 4. require(): the addon from the platform package.
  const probe = `
    const m = require('mcp-snapshot-filter')
    const text = 'uid=1_0 RootWebArea "Example" url="http://127.0.0.1/"\\n  uid=1_1 button "Go"\\n'
    const out = m.filterSnapshot(text, { level: 'moderate' }).text
    const addons = Object.keys(require.cache).filter((f) => f.endsWith('.node'))
    process.stdout.write(JSON.stringify({ out, addons }))`
  const required = JSON.parse(run(process.execPath, ['-e', probe], { cwd: project, env: userEnv }))
  assert.match(required.out, /1_1 button "Go"/)
  assert.deepEqual(required.addons.map((f) => path.relative(project, fs.realpathSync(f))), [path.join('node_modules', platformName, addonName)])

  // 5. The proxy in front of the fixture server, started as `npx mcp-snapshot-filter -- …`.
  const proxy = spawnRaw([NPX, 'mcp-snapshot-filter', '--', process.execPath, FIXTURE_SERVER], { cwd: project, env: { ...userEnv, FIXTURE_REPLAY_DIR: path.join(FIXTURES, 'replay') } })
  proxy.send(INIT)
  proxy.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'take_snapshot', arguments: { pageId: 1 } } })
  const snapshot = await proxy.waitFor((m) => m.id === 1, 60_000)
  const raw = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'replay', 'take_snapshot.json'), 'utf8')).result.content[0].text
  const filtered = snapshot.result.content[0].text
  assert.match(filtered, /#snapshot-filter:/, 'the snapshot was filtered')
  assert.ok(filtered.length < raw.length / 2, `${filtered.length} characters out of ${raw.length}`)
  proxy.child.stdin.end()
  assert.equal((await proxy.exited).code, 0, proxy.stderr())

  // 6. install from npx's cache: the entry names the version, never the cache, and it runs.
  const cursorConfig = path.join(home, '.cursor', 'mcp.json')
  const original = `${JSON.stringify({ mcpServers: { fixture: { command: process.execPath, args: [FIXTURE_SERVER] } } }, null, 2)}\n`
  fs.writeFileSync(cursorConfig, original)
  const elsewhere = path.join(work, 'elsewhere')
  fs.mkdirSync(elsewhere)
  const spec = `${PACKAGE.name}@${PACKAGE.version}`
  run(NPX, ['-y', spec, 'install', '--client', 'cursor', 'fixture'], { cwd: elsewhere, env: userEnv })
  const written = fs.readFileSync(cursorConfig, 'utf8')
  assert.doesNotMatch(written, /_npx|npm-cache/, 'no path into npx cache')
  const entry = JSON.parse(written).mcpServers.fixture
  assert.deepEqual(entry, { command: 'npx', args: ['-y', spec, INSTALL_MARK, '--', process.execPath, FIXTURE_SERVER] })
  const client = spawnRaw([entry.command === 'npx' ? NPX : entry.command, ...entry.args], { cwd: elsewhere, env: userEnv })
  client.send(INIT)
  client.send({ jsonrpc: '2.0', id: 'argv', method: 'fixture/argv' })
  assert.deepEqual((await client.waitFor((m) => m.id === 'argv', 60_000)).result, { argv: [] }, 'the entry starts the proxy in front of the fixture')
  client.child.stdin.end()
  assert.equal((await client.exited).code, 0, client.stderr())
  run(NPX, ['-y', spec, 'uninstall', '--client', 'cursor'], { cwd: elsewhere, env: userEnv })
  assert.equal(fs.readFileSync(cursorConfig, 'utf8'), original, 'uninstall gives the entry back')
})
