'use strict'

// `install` / `uninstall` on realistic Claude Code (~/.claude.json) and Cursor (mcp.json)
// configs in a scratch HOME: the browser servers are wrapped, everything else stays, a backup
// comes first, --dry-run writes nothing, uninstall restores, a broken file is refused, and the
// wrapped command really starts the proxy in front of the original server.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { FIXTURES, INIT, BIN, spawnRaw } = require('./helpers.js')

const CONFIGS = path.join(FIXTURES, 'configs')
const CLI = path.resolve(BIN)
const { INSTALL_MARK: MARK } = require('../bin/options.js')

function scratch() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'msf-install-'))
  const home = path.join(root, 'home')
  const project = path.join(root, 'project')
  fs.mkdirSync(path.join(home, '.cursor'), { recursive: true })
  fs.mkdirSync(path.join(project, '.cursor'), { recursive: true })
  const files = {
    claude: path.join(home, '.claude.json'),
    cursor: path.join(home, '.cursor', 'mcp.json'),
    cursorProject: path.join(project, '.cursor', 'mcp.json'),
  }
  fs.copyFileSync(path.join(CONFIGS, 'claude.json'), files.claude)
  fs.chmodSync(files.claude, 0o600)
  fs.copyFileSync(path.join(CONFIGS, 'cursor-mcp.json'), files.cursor)
  fs.copyFileSync(path.join(CONFIGS, 'cursor-project-mcp.json'), files.cursorProject)
  // `claude mcp add --scope project chrome-devtools -- npx chrome-devtools-mcp@latest` writes this.
  files.claudeProject = path.join(project, '.mcp.json')
  fs.writeFileSync(files.claudeProject, `${JSON.stringify({ mcpServers: { 'chrome-devtools': { type: 'stdio', command: 'npx', args: ['chrome-devtools-mcp@latest'], env: {} } } }, null, 2)}\n`)
  return { root, home, project, files }
}

function run(args, s) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: s.project, env: { ...process.env, HOME: s.home, USERPROFILE: s.home }, encoding: 'utf8' })
}

const read = (file) => JSON.parse(fs.readFileSync(file, 'utf8'))
const backups = (file) => fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith(`${path.basename(file)}.bak-mcp-snapshot-filter-`))

test('--dry-run prints every change and writes nothing', () => {
  const s = scratch()
  const before = Object.fromEntries(Object.entries(s.files).map(([k, f]) => [k, fs.readFileSync(f, 'utf8')]))
  const r = run(['install', '--dry-run'], s)
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /\.claude\.json: top-level "chrome-devtools" \(dry run, not written\)\n {2}- npx -y chrome-devtools-mcp@latest --isolated\n {2}\+ node .*bin\/cli\.js --installed -- npx -y chrome-devtools-mcp@latest --isolated/)
  assert.match(r.stdout, /project \/home\/dev\/shop "playwright"/)
  assert.match(r.stdout, /\.cursor\/mcp\.json: mcpServers "chrome-devtools"/)
  assert.match(r.stdout, /project\/\.mcp\.json: mcpServers "chrome-devtools"/)
  assert.doesNotMatch(r.stdout, /"memory"|"github"|"remote-docs"/, 'servers that are not browsers are not touched unless named')
  // chrome-devtools-mcp entries without the flag are told what it gives; Playwright's are not.
  assert.match(r.stdout, /--isolated\n {2}tip: add --experimentalStructuredContent after chrome-devtools-mcp in its args/)
  assert.doesNotMatch(r.stdout, /@playwright\/mcp@latest --browser chromium\n {2}tip/)
  for (const [k, f] of Object.entries(s.files)) assert.equal(fs.readFileSync(f, 'utf8'), before[k], k)
  for (const f of Object.values(s.files)) assert.deepEqual(backups(f), [])
})

test('install wraps the browser servers of both clients, keeps the rest, backs up first; uninstall restores', () => {
  const s = scratch()
  const original = fs.readFileSync(s.files.claude, 'utf8')
  const r = run(['install'], s)
  assert.equal(r.status, 0, r.stderr)

  const claude = read(s.files.claude)
  const orig = JSON.parse(original)
  assert.deepEqual(claude.mcpServers['chrome-devtools'], {
    type: 'stdio',
    command: 'node',
    args: [CLI, MARK, '--', 'npx', '-y', 'chrome-devtools-mcp@latest', '--isolated'],
    env: {},
  })
  const pw = claude.projects['/home/dev/shop'].mcpServers.playwright
  assert.deepEqual(pw.args, [CLI, MARK, '--', 'npx', '@playwright/mcp@latest', '--browser', 'chromium'])
  assert.deepEqual(pw.env, { PLAYWRIGHT_MCP_HEADLESS: '1' })
  // Everything else is as it was.
  assert.deepEqual(claude.mcpServers.github, orig.mcpServers.github)
  assert.deepEqual(claude.projects['/home/dev/shop'].mcpServers.memory, orig.projects['/home/dev/shop'].mcpServers.memory)
  for (const key of ['numStartups', 'oauthAccount', 'tipsHistory', 'userID']) assert.deepEqual(claude[key], orig[key])
  assert.deepEqual(claude.projects['/home/dev/notes'], orig.projects['/home/dev/notes'])
  assert.equal(fs.statSync(s.files.claude).mode & 0o777, 0o600, 'the mode of ~/.claude.json (it holds account data) is kept')

  const [backup] = backups(s.files.claude)
  assert.ok(backup, 'a backup of ~/.claude.json')
  assert.equal(fs.readFileSync(path.join(s.home, backup), 'utf8'), original)
  assert.equal(fs.statSync(path.join(s.home, backup)).mode & 0o777, 0o600)

  assert.deepEqual(read(s.files.cursor).mcpServers['chrome-devtools'].args, [CLI, MARK, '--', 'npx', '-y', 'chrome-devtools-mcp@latest'])
  assert.deepEqual(read(s.files.cursor).mcpServers['remote-docs'], { url: 'https://docs.example.org/mcp' })
  assert.deepEqual(read(s.files.cursorProject).mcpServers.playwright.args, [CLI, MARK, '--', 'npx', '@playwright/mcp@latest'])
  const projectOriginal = fs.readFileSync(path.join(s.project, backups(s.files.claudeProject)[0]), 'utf8')
  assert.deepEqual(read(s.files.claudeProject).mcpServers['chrome-devtools'].args, [CLI, MARK, '--', 'npx', 'chrome-devtools-mcp@latest'])

  // A second install changes nothing, and that is no failure: one line per entry, exit 0.
  const again = run(['install'], s)
  assert.equal(again.status, 0, again.stderr)
  assert.equal(again.stderr, '')
  assert.match(again.stdout, /top-level "chrome-devtools": already runs through mcp-snapshot-filter: left unchanged\n/)
  assert.doesNotMatch(again.stdout, /written|Restart/)

  const u = run(['uninstall'], s)
  assert.equal(u.status, 0, u.stderr)
  // Claude Code writes ~/.claude.json as JSON.stringify(…, null, 2): the round trip is byte-exact.
  assert.equal(fs.readFileSync(s.files.claude, 'utf8'), original)
  assert.equal(fs.readFileSync(s.files.claudeProject, 'utf8'), projectOriginal)
  assert.deepEqual(read(s.files.cursor), JSON.parse(fs.readFileSync(path.join(CONFIGS, 'cursor-mcp.json'), 'utf8')))
  assert.deepEqual(read(s.files.cursorProject), JSON.parse(fs.readFileSync(path.join(CONFIGS, 'cursor-project-mcp.json'), 'utf8')))
})

test('--client and NAME narrow the change; a named server of any kind can be wrapped', () => {
  const s = scratch()
  const r = run(['install', '--client', 'claude', 'memory'], s)
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(read(s.files.claude).projects['/home/dev/shop'].mcpServers.memory.args, [CLI, MARK, '--', 'npx', '-y', '@modelcontextprotocol/server-memory'])
  assert.equal(read(s.files.claude).mcpServers['chrome-devtools'].command, 'npx')
  assert.deepEqual(backups(s.files.cursor), [])
  const none = run(['install', '--client', 'cursor', 'nosuch'], s)
  assert.equal(none.status, 1)
  assert.match(none.stderr, /no entry named "nosuch" to wrap/)
  const remote = run(['install', '--client', 'claude', 'github'], s)
  assert.equal(remote.status, 1)
  assert.match(remote.stdout, /"github": not a stdio server \(type "http"\)/)
  const bad = run(['install', '--client', 'vscode'], s)
  assert.equal(bad.status, 2)
  assert.match(bad.stderr, /expected claude or cursor/)
})

test('a file it cannot parse is refused and left byte for byte', () => {
  const s = scratch()
  const broken = '{\n  "mcpServers": {\n    // a comment\n    "chrome-devtools": { "command": "npx", "args": ["chrome-devtools-mcp@latest"] }\n  }\n}\n'
  fs.writeFileSync(s.files.cursor, broken)
  const r = run(['install', '--client', 'cursor'], s)
  assert.equal(r.status, 1)
  assert.match(r.stderr, /\.cursor\/mcp\.json: not valid JSON .*left unchanged/)
  assert.equal(fs.readFileSync(s.files.cursor, 'utf8'), broken)
  assert.deepEqual(backups(s.files.cursor), [])
  // The project's file was still wrapped.
  assert.equal(read(s.files.cursorProject).mcpServers.playwright.command, 'node')
})

test('the wrapped entry starts the proxy in front of the original server', async () => {
  const s = scratch()
  const fixture = path.join(FIXTURES, 'fixture-server.js')
  const doc = read(s.files.cursorProject)
  doc.mcpServers.fixture = { command: process.execPath, args: [fixture] }
  fs.writeFileSync(s.files.cursorProject, JSON.stringify(doc, null, 2))
  assert.equal(run(['install', '--client', 'cursor', 'fixture'], s).status, 0)
  const entry = read(s.files.cursorProject).mcpServers.fixture
  assert.equal(entry.command, process.execPath, 'an absolute upstream command gets an absolute node too')
  const proxy = spawnRaw([entry.command, ...entry.args], { env: { ...process.env, MCP_SNAPSHOT_FILTER_LEDGER: 'off' } })
  proxy.send(INIT)
  proxy.send({ jsonrpc: '2.0', id: 'argv', method: 'fixture/argv' })
  const { result } = await proxy.waitFor((m) => m.id === 'argv')
  assert.ok(result, 'the fixture answered through the proxy')
  proxy.child.stdin.end()
  assert.equal((await proxy.exited).code, 0)
})

test('install and uninstall change only the entry they wrap: every other byte, and the backup, as they were', () => {
  const s = scratch()
  // What JSON.parse + JSON.stringify would change: an integer beyond 2^53, 1e400, a key given
  // twice, escapes, bytes that are not UTF-8 (inside a string), an inline array, odd spacing.
  const original = Buffer.concat([
    Buffer.from('{"numStartups": 12345678901234567891, "ratio": 1e400, "x": 1.50,\n "dup": 1, "dup": 2,\n  "note": "caf\\u00e9 \\/ '),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from('",\n  "mcpServers": {\n    "other": {"command": "uvx", "args": ["x"], "n": 9007199254740993},\n'),
    Buffer.from('    "chrome-devtools": {"type":"stdio","command":"npx","args":["-y","chrome-devtools-mcp@latest","caf\\u00e9"],"env":{"BIG":1e400}}\n  }\n}\n'),
  ])
  fs.writeFileSync(s.files.claude, original)
  const r = run(['install', '--client', 'claude', 'chrome-devtools'], s)
  assert.equal(r.status, 0, r.stderr)
  const after = fs.readFileSync(s.files.claude)
  const [backup] = backups(s.files.claude)
  assert.ok(fs.readFileSync(path.join(s.home, backup)).equals(original), 'the backup is the original bytes')
  // Only the entry's "command" and "args" values changed; the original strings moved as they were.
  const head = original.subarray(0, original.indexOf('"command":"npx"'))
  assert.ok(after.subarray(0, head.length).equals(head), 'the bytes before the entry are unchanged')
  const wrapped = `"command":"node","args":[${JSON.stringify(CLI)},"--installed","--","npx","-y","chrome-devtools-mcp@latest","caf\\u00e9"],"env":{"BIG":1e400}}\n  }\n}\n`
  assert.equal(after.subarray(head.length).toString('utf8'), wrapped)
  const u = run(['uninstall', '--client', 'claude'], s)
  assert.equal(u.status, 0, u.stderr)
  assert.ok(fs.readFileSync(s.files.claude).equals(original), 'uninstall gives back the original bytes')
})

test('an entry without "args" gets one; a duplicated server name changes its last entry, the one clients read', () => {
  const s = scratch()
  const original = '{\n  "mcpServers": {\n    "chrome-devtools": { "command": "old" },\n    "chrome-devtools": { "command": "chrome-devtools-mcp" }\n  }\n}\n'
  fs.writeFileSync(s.files.cursor, original)
  const r = run(['install', '--client', 'cursor', 'chrome-devtools'], s)
  assert.equal(r.status, 0, r.stderr)
  const text = fs.readFileSync(s.files.cursor, 'utf8')
  assert.equal(text, `{\n  "mcpServers": {\n    "chrome-devtools": { "command": "old" },\n    "chrome-devtools": { "command": "node", "args": [${JSON.stringify(CLI)}, "--installed", "--", "chrome-devtools-mcp"] }\n  }\n}\n`)
})

test('uninstall keeps one backup per file, its own', () => {
  const s = scratch()
  for (let i = 0; i < 3; i++) {
    assert.equal(run(['install'], s).status, 0)
    const u = run(['uninstall'], s)
    assert.equal(u.status, 0, u.stderr)
  }
  for (const file of Object.values(s.files)) assert.equal(backups(file).length, 1, `${file}: ${backups(file).join(', ')}`)
  // A file that only looks like a backup is not ours to remove.
  const lookalike = `${s.files.claude}.bak-mcp-snapshot-filter-mine`
  fs.writeFileSync(lookalike, 'keep me')
  run(['install'], s)
  run(['uninstall'], s)
  assert.equal(fs.readFileSync(lookalike, 'utf8'), 'keep me')
})

test('the config reader accepts and refuses what JSON.parse does', () => {
  const json = require('../bin/json-edit.js')
  const cases = ['{}', '[]', '{"a":[1,2,{"b":null}]}', ' {"a" : -0.5e+3 } ', '"x"', 'true', '1', '-', '01', '1.', '.5', '1e', '{"a":1,}', '[1,]', '{a:1}', "{'a':1}", '{"a":1}x', '"\\x"', '"\\u12"', '"a\nb"', '{"a":1 // c\n}', '', 'nul', '[1 2]', '{"a"}', '"\\ud800"', '1E400', '[[[[]]]]']
  for (const text of cases) {
    let expected = true
    try {
      JSON.parse(text)
    } catch {
      expected = false
    }
    let got = true
    try {
      json.parse(Buffer.from(text))
    } catch (err) {
      assert.ok(err instanceof json.JsonSyntaxError, `${JSON.stringify(text)}: ${err}`)
      got = false
    }
    assert.equal(got, expected, JSON.stringify(text))
  }
  assert.throws(() => json.parse(Buffer.from('['.repeat(100000))), json.JsonSyntaxError, 'deep nesting is a syntax error, not a stack overflow')
})

/** A copy of the bin where `npx mcp-snapshot-filter` runs it: npm's prunable npx cache. */
function npxCacheCopy(root) {
  const pkg = path.join(root, 'npm-cache', '_npx', '4f2b9c1e0d7a3b66', 'node_modules', 'mcp-snapshot-filter')
  fs.mkdirSync(pkg, { recursive: true })
  fs.cpSync(path.dirname(BIN), path.join(pkg, 'bin'), { recursive: true })
  fs.copyFileSync(path.join(__dirname, '..', 'package.json'), path.join(pkg, 'package.json'))
  return path.join(pkg, 'bin', 'cli.js')
}

test("run from npx's cache, install writes `npx -y mcp-snapshot-filter@<version>`, never the cache's path", () => {
  const s = scratch()
  const cached = npxCacheCopy(s.root)
  const { version } = require('../package.json')
  const original = fs.readFileSync(s.files.cursorProject)
  const r = spawnSync(process.execPath, [cached, 'install', '--client', 'cursor'], { cwd: s.project, env: { ...process.env, HOME: s.home, USERPROFILE: s.home }, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const entry = read(s.files.cursorProject).mcpServers.playwright
  assert.equal(entry.command, 'npx')
  assert.deepEqual(entry.args, ['-y', `mcp-snapshot-filter@${version}`, MARK, '--', 'npx', '@playwright/mcp@latest'])
  for (const file of [s.files.cursor, s.files.cursorProject]) assert.doesNotMatch(fs.readFileSync(file, 'utf8'), /_npx|npm-cache/, `${file} names no path in npx's cache`)
  // The clone's uninstall knows the entry as install's (by its mark), and gives the bytes back.
  const u = run(['uninstall', '--client', 'cursor'], s)
  assert.equal(u.status, 0, u.stderr)
  assert.ok(fs.readFileSync(s.files.cursorProject).equals(original))
})

test("uninstall restores only what install wrote: an entry wrapped by hand with the README's line stays", () => {
  const s = scratch()
  // The README's lines: `claude mcp add chrome-devtools -- node /abs/.../bin/cli.js -- npx -y chrome-devtools-mcp@latest …`
  // (Claude Code writes that into .mcp.json), and its Cursor entry.
  const byHand = { type: 'stdio', command: 'node', args: [CLI, '--', 'npx', '-y', 'chrome-devtools-mcp@latest', '--experimentalStructuredContent'], env: {} }
  fs.writeFileSync(s.files.claudeProject, `${JSON.stringify({ mcpServers: { 'chrome-devtools': byHand } }, null, 2)}\n`)
  const cursorHand = { command: 'npx', args: ['-y', 'mcp-snapshot-filter', '--', 'npx', '-y', 'chrome-devtools-mcp@latest'] }
  const doc = read(s.files.cursorProject)
  doc.mcpServers['chrome-devtools'] = cursorHand
  fs.writeFileSync(s.files.cursorProject, JSON.stringify(doc, null, 2))
  const claudeHandBytes = fs.readFileSync(s.files.claudeProject, 'utf8')

  const i = run(['install'], s)
  assert.equal(i.status, 0, i.stderr)
  assert.match(i.stdout, /\.mcp\.json: mcpServers "chrome-devtools": already runs through mcp-snapshot-filter: left unchanged/)
  assert.equal(read(s.files.cursorProject).mcpServers.playwright.command, 'node', 'the entry beside it was wrapped')

  const u = run(['uninstall'], s)
  assert.equal(u.status, 0, u.stderr)
  assert.equal(fs.readFileSync(s.files.claudeProject, 'utf8'), claudeHandBytes, 'the hand-wrapped .mcp.json entry is as the user wrote it')
  assert.deepEqual(read(s.files.cursorProject).mcpServers['chrome-devtools'], cursorHand)
  assert.deepEqual(read(s.files.cursorProject).mcpServers.playwright, { command: 'npx', args: ['@playwright/mcp@latest'] }, 'what install wrote is restored')
  assert.match(u.stdout, /"chrome-devtools": runs through mcp-snapshot-filter, but install did not write it \(no --installed before "--"\): yours to change: left unchanged/)
  // Named, it is still refused.
  const named = run(['uninstall', '--client', 'claude', 'chrome-devtools'], s)
  assert.equal(named.status, 1)
  assert.equal(fs.readFileSync(s.files.claudeProject, 'utf8'), claudeHandBytes)
})
