'use strict'

// The official SDKs of today through the proxy, on stdio: the TypeScript SDK v2 client
// (@modelcontextprotocol/client, negotiation 'auto' and pinned to 2026-07-28) and the Python
// SDK's client (`mcp` 2.3, 'auto' and pinned), each to a TS v2 server in modern and in dual mode
// and to a Python MCPServer (fixtures in __test__/fixtures/sdk, with a chrome-devtools-mcp-shaped
// take_snapshot); and the legacy combinations (a v2 client falling back to a 2025 server, the
// SDK 1.x client to v2 and Python servers). Every combination lists the proxy's tools, gets a
// filtered snapshot, expands and searches it (the proxy's own answers, which a modern client
// rejects without `resultType`) and, where the server can change the page, gets a delta.
// Then raw JSON-RPC lines for what no SDK client sends: envelope errors and two client
// identities on one connection.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync, execFile } = require('node:child_process')

const { Client: ClientV1 } = require('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport: TransportV1 } = require('@modelcontextprotocol/sdk/client/stdio.js')
const { Client } = require('@modelcontextprotocol/client')
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio')

const { FIXTURES, proxyCommand, spawnRaw } = require('./helpers.js')

const SDK = path.join(FIXTURES, 'sdk')
const PYTHON = process.env.MCP_TEST_PYTHON ?? 'python3'
const PYTHON_MCP = '2.3.0'
const MODERN = '2026-07-28'

/** The version of the Python SDK `PYTHON` imports, or why there is none. */
function pythonSdk() {
  const probe = spawnSync(PYTHON, ['-c', 'import mcp, importlib.metadata as m; print(m.version("mcp"))'], { encoding: 'utf8', timeout: 30_000 })
  if (probe.error) return { missing: `${PYTHON} cannot run (${probe.error.message})` }
  const version = probe.stdout.trim()
  if (probe.status !== 0) return { missing: `${PYTHON} has no Python SDK (pip install mcp==${PYTHON_MCP})` }
  if (version !== PYTHON_MCP) return { missing: `${PYTHON} has mcp ${version}, not ${PYTHON_MCP} (pip install mcp==${PYTHON_MCP})` }
  return { version }
}
const python = pythonSdk()

/** A test that needs the Python SDK: a failure under CI when it is missing, else a visible skip. */
function pythonTest(name, fn) {
  if (!python.missing) return test(name, { timeout: 120_000 }, fn)
  if (process.env.CI) return test(name, () => assert.fail(`${python.missing} (CI is set: this is a failure)`))
  process.stderr.write(`\n!!! SKIPPED: ${name}: ${python.missing}\n`)
  return test(name, { skip: python.missing }, () => {})
}

const SERVERS = {
  'TS v2 server (modern)': { command: [process.execPath, path.join(SDK, 'v2-server.mjs'), 'modern'], changes: true },
  'TS v2 server (dual)': { command: [process.execPath, path.join(SDK, 'v2-server.mjs'), 'dual'], changes: true },
  'Python MCPServer': { command: [PYTHON, path.join(SDK, 'py-server.py')], changes: true, python: true },
  // 2025-era, raw JSON-RPC: take_snapshot replays __test__/fixtures/snapshots/<fixture>.json.
  '2025 server (fixture)': { command: [process.execPath, path.join(FIXTURES, 'fixture-server.js')], changes: false, env: { FIXTURE_REPLAY_DIR: path.join(FIXTURES, 'snapshots'), FIXTURE_TOOLS_LIST: path.join(FIXTURES, 'lists', 'chrome-devtools-mcp.tools-list.json') } },
}

/** The calls every combination makes, and what each answer must show. */
function steps(server) {
  const list = [
    ['take_snapshot', { pageId: 1, fixture: 'grid' }, (t) => assert.match(t, /snapshot 1, full: first snapshot of this page/)],
    ['expand_snapshot', { uid: '72_1' }, (t) => assert.match(t, /^72_1 banner$/m)],
    ['search_snapshot', { query: 'Orders' }, (t) => assert.match(t, /72_11 \[Orders\]/)],
  ]
  if (server.changes) {
    list.push(['take_snapshot', { pageId: 1, fixture: 'grid', change: 2 }, (t) => {
      // The renamed link is in the banner's navigation, whose links moderate keeps in place: the
      // delta writes it changed, in place; the search finds it too.
      assert.match(t, /snapshot 2: delta against snapshot 1, 0 added, 1 changed, 0 removed;[^]*\n +72_11 link "Orders \(2 new\)"\n/)
    }])
    list.push(['search_snapshot', { query: 'new\\)', regex: true }, (t) => assert.match(t, /72_11 \[Orders \(2 new\)\]/)])
  }
  return list
}

const PROXY_TOOLS = ['expand_snapshot', 'search_snapshot', 'read_result']

function textOf(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('')
}

/** Runs the steps with a TypeScript SDK client (v2 with `negotiation`, or 1.x); returns the v2 client's negotiated version. */
async function tsClient({ v1 = false, negotiation }, server) {
  const [command, ...args] = proxyCommand(server.command)
  const env = { ...process.env, ...server.env }
  const transport = v1 ? new TransportV1({ command, args, env, stderr: 'pipe' }) : new StdioClientTransport({ command, args, env, stderr: 'pipe' })
  let stderr = ''
  transport.stderr?.on('data', (d) => (stderr += d))
  const client = v1 ? new ClientV1({ name: 'sdk1-client', version: '1.0.0' }) : new Client({ name: 'v2-client', version: '1.0.0' }, { versionNegotiation: { mode: negotiation } })
  await client.connect(transport)
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name)
    for (const name of PROXY_TOOLS) assert.ok(tools.includes(name), `${name} listed: ${tools}`)
    for (const [tool, args, check] of steps(server)) {
      const result = await client.callTool({ name: tool, arguments: args })
      assert.ok(!result.isError, `${tool}: ${textOf(result)}`)
      check(textOf(result))
    }
    return v1 ? undefined : client.getNegotiatedProtocolVersion()
  } catch (err) {
    err.message += `\nproxy stderr:\n${stderr}`
    throw err
  } finally {
    await client.close()
  }
}

/** Runs the steps with the Python SDK's client in `mode`; returns the negotiated version. */
function pyClient(mode, server) {
  const script = steps(server).map(([tool, args]) => [tool, args])
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [path.join(SDK, 'py-client.py'), mode, JSON.stringify(script), '--', ...proxyCommand(server.command)], { env: { ...process.env, ...server.env }, timeout: 90_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      try {
        const [list, ...answers] = stdout.trim().split('\n').map((l) => JSON.parse(l))
        for (const name of PROXY_TOOLS) assert.ok(list.tools.includes(name), `${name} listed: ${list.tools}`)
        steps(server).forEach(([tool, , check], i) => {
          assert.equal(answers[i].step, tool)
          assert.equal(answers[i].error, undefined, `${tool}: ${answers[i].error}\n${stderr}`)
          assert.equal(answers[i].isError, false, answers[i].text)
          check(answers[i].text)
        })
        resolve(list.protocolVersion)
      } catch (e) {
        reject(e)
      }
    })
  })
}

for (const [name, server] of Object.entries(SERVERS)) {
  const define = server.python ? pythonTest : (title, fn) => test(title, { timeout: 120_000 }, fn)
  for (const negotiation of ['auto', { pin: MODERN }]) {
    if (!server.changes && typeof negotiation === 'object') continue // a pinned client never talks to a 2025 server
    const label = typeof negotiation === 'string' ? negotiation : `pinned ${negotiation.pin}`
    define(`TS SDK v2 client (${label}) → proxy → ${name}`, async () => {
      const version = await tsClient({ negotiation }, server)
      // The 2025 server: 'auto' fell back to the handshake.
      if (server.changes) assert.equal(version, MODERN)
      else assert.match(version, /^2025-/)
    })
  }
  if (server.changes) {
    for (const mode of ['auto', MODERN]) {
      pythonTest(`Python mcp ${PYTHON_MCP} client (${mode}) → proxy → ${name}`, async () => {
        assert.equal(await pyClient(mode, server), MODERN)
      })
    }
  }
  if (name !== 'TS v2 server (modern)') {
    define(`SDK 1.x client → proxy → ${name}`, () => tsClient({ v1: true }, server))
  }
}

// ---- raw lines: what no SDK client sends ----

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }

/** The modern `_meta` of a client named `name`. */
function metaOf(name) {
  return { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name, version: '1.0.0' } }
}

function startModern() {
  const proxy = spawnRaw(proxyCommand(SERVERS['TS v2 server (modern)'].command))
  let id = 0
  const request = async (method, params) => {
    const my = ++id
    proxy.send({ jsonrpc: '2.0', id: my, method, params })
    return proxy.waitFor((m) => m.id === my)
  }
  const call = (name, args, meta) => request('tools/call', { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) })
  return { proxy, request, call }
}

test('the proxy tools answer a modern envelope as the modern upstream answers its own tools', { timeout: 60_000 }, async () => {
  const { proxy, request, call } = startModern()
  try {
    const discover = await request('server/discover', { _meta: ENVELOPE })
    assert.deepEqual(discover.result.supportedVersions, [MODERN])
    const broken = {
      'a version that is no string': { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': 7 },
      'no client capabilities': { 'io.modelcontextprotocol/protocolVersion': MODERN },
      'an unsupported version': { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
    }
    // How the upstream refuses them for its own tool (asked first: once this SDK's server has
    // served a request on the connection, it takes any version string).
    const upstream = {}
    for (const [what, meta] of Object.entries(broken)) {
      upstream[what] = await call('echo', { text: 'x' }, meta)
      assert.ok(upstream[what].error, `${what}: the upstream refuses it`)
    }
    const list = await request('tools/list', { _meta: ENVELOPE })
    // The rewritten list keeps the upstream's result type and cache hints, and lists the proxy's tools.
    assert.equal(list.result.resultType, 'complete')
    assert.equal(list.result.ttlMs, discover.result.ttlMs)
    assert.equal(list.result.cacheScope, discover.result.cacheScope)
    assert.deepEqual(list.result._meta, discover.result._meta)
    for (const name of PROXY_TOOLS) assert.ok(list.result.tools.some((t) => t.name === name), name)
    await call('take_snapshot', { pageId: 1, fixture: 'grid' }, ENVELOPE)

    const ok = await call('search_snapshot', { query: 'Orders' }, ENVELOPE)
    assert.equal(ok.result.resultType, 'complete')
    assert.deepEqual(ok.result._meta, discover.result._meta, 'the serverInfo a modern server adds')
    assert.match(ok.result.content[0].text, /72_11/)

    for (const [what, meta] of Object.entries(broken)) {
      const own = await call('search_snapshot', { query: 'Orders' }, meta)
      assert.equal(own.error?.code, upstream[what].error.code, `${what}: ${JSON.stringify(own)}`)
      assert.equal(own.result, undefined)
    }
    const unsupported = await call('expand_snapshot', { uid: '72_1' }, broken['an unsupported version'])
    assert.deepEqual(unsupported.error.data, upstream['an unsupported version'].error.data)
    // No envelope at all: invalid params, as the spec says (this SDK's server answers -32022).
    assert.equal((await call('expand_snapshot', { uid: '72_1' })).error?.code, -32602)
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
  }
})

test('two client identities on one connection: the second gets a full snapshot, never a delta against the first one\'s', { timeout: 60_000 }, async () => {
  const { proxy, request, call } = startModern()
  try {
    await request('tools/list', { _meta: metaOf('alice') })
    const text = (m) => m.result.content[0].text
    assert.match(text(await call('take_snapshot', { pageId: 1, fixture: 'grid' }, metaOf('alice'))), /snapshot 1, full/)
    const toBob = text(await call('take_snapshot', { pageId: 1, fixture: 'grid', change: 1 }, metaOf('bob')))
    assert.match(toBob, /snapshot 1, full: first snapshot of this page/)
    assert.doesNotMatch(toBob, /delta against/)
    // Alice still holds her snapshot 1, and her proxy tools read it.
    assert.match(text(await call('take_snapshot', { pageId: 1, fixture: 'grid', change: 2 }, metaOf('alice'))), /snapshot 2: delta against snapshot 1, 0 added, 1 changed, 0 removed;[^]*\n +72_11 link "Orders \(2 new\)"\n/)
    assert.match(text(await call('search_snapshot', { query: 'new\\)', regex: true }, metaOf('alice'))), /Orders \(2 new\)/)
    assert.match(text(await call('search_snapshot', { query: 'new\\)', regex: true }, metaOf('bob'))), /Orders \(1 new\)/)
    assert.match(text(await call('search_snapshot', { query: 'Orders' }, metaOf('carol'))), /No snapshot/)
  } finally {
    proxy.child.stdin.end()
    await proxy.exited
  }
})
