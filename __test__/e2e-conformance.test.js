'use strict'

// The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, every server
// scenario: `--suite all`) against __test__/fixtures/conformance-server.mjs over HTTP directly,
// then against the bin serving HTTP (`--port`) in front of the same server on stdio: every check
// that passes directly passes through the proxy. The suite needs Node 22, which `npx -y node@22`
// brings from the npm registry (as the suite itself comes), so this file needs the registry.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, execFile } = require('node:child_process')

const { BIN, FIXTURES, waitUntil } = require('./helpers.js')
const { freePort } = require('./http-servers.js')

const SUITE = '@modelcontextprotocol/conformance@0.1.16'
const SERVER = path.join(FIXTURES, 'conformance-server.mjs')
// npm's own npx, run by the Node 22 that `npx -y node@22` provides.
const NPX_CLI = path.join(path.dirname(fs.realpathSync(process.execPath)), '..', 'lib', 'node_modules', 'npm', 'bin', 'npx-cli.js')

/** Runs the suite's CLI with `args`; resolves with its output (it exits non-zero when a check fails). */
function conformance(args, cwd) {
  return new Promise((resolve) => {
    execFile('npx', ['-y', 'node@22', NPX_CLI, '-y', SUITE, ...args], { cwd, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, output: `${stdout}${stderr}` })
    })
  })
}

/** Runs every server scenario against `url`; returns Map "scenario/check id" -> status. */
async function runSuite(url, dir, extra = []) {
  const out = path.join(dir, 'results')
  const run = await conformance(['server', '--url', url, '--suite', 'all', '-o', out, ...extra], dir)
  const statuses = new Map()
  for (const entry of fs.existsSync(out) ? fs.readdirSync(out) : []) {
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(entry)?.[1] ?? entry
    const file = path.join(out, entry, 'checks.json')
    if (!fs.existsSync(file)) continue
    for (const check of JSON.parse(fs.readFileSync(file, 'utf8'))) statuses.set(`${scenario}/${check.id}`, check.status)
  }
  fs.rmSync(out, { recursive: true, force: true })
  return { statuses, output: run.output }
}

/** Starts a process and waits until its stderr says it listens; returns { stop, stderr }. */
async function startListening(args, ready) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  assert.ok(await waitUntil(() => ready.test(stderr) || child.exitCode !== null, 30000), `started:\n${stderr}`)
  assert.equal(child.exitCode, null, `still running:\n${stderr}`)
  return {
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}

test('the conformance suite: every check that passes against the server directly passes through the proxy', { timeout: 1_200_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-'))
  try {
    const directPort = await freePort()
    const direct = await startListening([SERVER, '--port', String(directPort)], /running on/)
    let directRun
    try {
      directRun = await runSuite(`http://127.0.0.1:${directPort}/mcp`, dir)
    } finally {
      await direct.stop()
    }
    const passing = [...directRun.statuses].filter(([, status]) => status === 'SUCCESS').map(([id]) => id)
    // The fixture implements what the scenarios expect: tools, resources, prompts, logging,
    // progress, sampling, elicitation, completion all pass directly.
    for (const scenario of ['server-initialize', 'logging-set-level', 'completion-complete', 'tools-call-with-progress', 'tools-call-sampling', 'tools-call-elicitation', 'resources-subscribe', 'prompts-get-with-args']) {
      assert.ok(passing.some((id) => id.startsWith(`${scenario}/`)), `${scenario} passes directly:\n${directRun.output}`)
    }

    const proxied = await startListening([BIN, '--port', '0', '--no-ledger', '--', process.execPath, SERVER], /serving MCP over Streamable HTTP at (\S+)/)
    let proxyRun
    try {
      const url = /serving MCP over Streamable HTTP at (\S+)/.exec(proxied.stderr())?.[1]
      proxyRun = await runSuite(/** @type {string} */ (url), dir)
    } finally {
      await proxied.stop()
    }
    const lost = passing.filter((id) => proxyRun.statuses.get(id) !== 'SUCCESS').map((id) => `${id}: ${proxyRun.statuses.get(id) ?? 'not run'}`)
    assert.deepEqual(lost, [], `checks that pass directly but not through the proxy:\n${proxyRun.output}\n${proxied.stderr()}`)
    t.diagnostic(`${passing.length} checks pass directly and through the proxy`)

    // The same with a 2026-07-28 client, for the scenarios the suite has for it.
    const list = (await conformance(['list'], dir)).output
    const modern = [...list.matchAll(/^ {2}- (\S+) \[([^\]]*)\]/gm)].filter((m) => m[2].split(',').includes('2026-07-28')).map((m) => m[1])
    await t.test('with a 2026-07-28 client', { skip: modern.length === 0 ? `${SUITE} has no scenario for protocol 2026-07-28` : false }, async () => {
      const port = await freePort()
      const again = await startListening([SERVER, '--port', String(port)], /running on/)
      let directModern
      try {
        directModern = await runSuite(`http://127.0.0.1:${port}/mcp`, dir, ['--spec-version', '2026-07-28'])
      } finally {
        await again.stop()
      }
      const through = await startListening([BIN, '--port', '0', '--no-ledger', '--', process.execPath, SERVER], /serving MCP over Streamable HTTP at (\S+)/)
      try {
        const url = /serving MCP over Streamable HTTP at (\S+)/.exec(through.stderr())?.[1]
        const proxyModern = await runSuite(/** @type {string} */ (url), dir, ['--spec-version', '2026-07-28'])
        const missing = [...directModern.statuses].filter(([id, s]) => s === 'SUCCESS' && proxyModern.statuses.get(id) !== 'SUCCESS').map(([id]) => id)
        assert.deepEqual(missing, [], proxyModern.output)
      } finally {
        await through.stop()
      }
    })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
