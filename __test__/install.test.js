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
  assert.match(r.stdout, /\.claude\.json: top-level "chrome-devtools" \(dry run, not written\)\n {2}- npx -y chrome-devtools-mcp@latest --isolated\n {2}\+ node .*bin\/cli\.js -- npx -y chrome-devtools-mcp@latest --isolated/)
  assert.match(r.stdout, /project \/home\/dev\/shop "playwright"/)
  assert.match(r.stdout, /\.cursor\/mcp\.json: mcpServers "chrome-devtools"/)
  assert.match(r.stdout, /project\/\.mcp\.json: mcpServers "chrome-devtools"/)
  assert.doesNotMatch(r.stdout, /"memory"|"github"|"remote-docs"/, 'servers that are not browsers are not touched unless named')
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
    args: [CLI, '--', 'npx', '-y', 'chrome-devtools-mcp@latest', '--isolated'],
    env: {},
  })
  const pw = claude.projects['/home/dev/shop'].mcpServers.playwright
  assert.deepEqual(pw.args, [CLI, '--', 'npx', '@playwright/mcp@latest', '--browser', 'chromium'])
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

  assert.deepEqual(read(s.files.cursor).mcpServers['chrome-devtools'].args, [CLI, '--', 'npx', '-y', 'chrome-devtools-mcp@latest'])
  assert.deepEqual(read(s.files.cursor).mcpServers['remote-docs'], { url: 'https://docs.example.org/mcp' })
  assert.deepEqual(read(s.files.cursorProject).mcpServers.playwright.args, [CLI, '--', 'npx', '@playwright/mcp@latest'])
  const projectOriginal = fs.readFileSync(path.join(s.project, backups(s.files.claudeProject)[0]), 'utf8')
  assert.deepEqual(read(s.files.claudeProject).mcpServers['chrome-devtools'].args, [CLI, '--', 'npx', 'chrome-devtools-mcp@latest'])

  // A second install changes nothing.
  const again = run(['install'], s)
  assert.equal(again.status, 1)
  assert.match(again.stdout, /already runs through mcp-snapshot-filter/)

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
  assert.deepEqual(read(s.files.claude).projects['/home/dev/shop'].mcpServers.memory.args, [CLI, '--', 'npx', '-y', '@modelcontextprotocol/server-memory'])
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
