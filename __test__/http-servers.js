'use strict'

// HTTP upstreams for the remote tests, all on 127.0.0.1: server-everything in its Streamable
// HTTP and SSE modes, the scriptable fixture (fixtures/http-fixture-server.js), Playwright MCP.

const net = require('node:net')
const path = require('node:path')
const { spawn } = require('node:child_process')

const { EVERYTHING, FIXTURES, waitUntil } = require('./helpers.js')

const LOOPBACK_ONLY = path.join(FIXTURES, 'loopback-only.cjs')

/** A port free on 127.0.0.1 right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/**
 * Spawns a server process and waits until `port` accepts connections.
 * Returns { child, port, stderr(), stop() }.
 */
async function startServer(args, { port, env, cwd, readyMs = 20000 } = {}) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env }, cwd })
  let output = ''
  child.stdout.on('data', (d) => {
    output += d
  })
  child.stderr.on('data', (d) => {
    output += d
  })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  let gone = false
  exited.then(() => {
    gone = true
  })
  const ready = await waitUntil(async () => gone || (await canConnect(port)), readyMs, 100)
  if (!ready || gone) {
    child.kill('SIGKILL')
    throw new Error(`server ${args.join(' ')} did not listen on 127.0.0.1:${port}:\n${output}`)
  }
  return {
    child,
    port,
    exited,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (!gone) child.kill(signal)
      await exited
    },
  }
}

/** server-everything in `mode` ('streamableHttp' or 'sse'); `url` is its MCP endpoint. */
async function startEverything(mode, port) {
  port ??= await freePort()
  const server = await startServer(['-r', LOOPBACK_ONLY, EVERYTHING, mode], { port, env: { PORT: String(port) } })
  server.url = `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`
  return server
}

/** The scriptable fixture (see fixtures/http-fixture-server.js for its tools and flags). */
async function startFixture(port, args = []) {
  port ??= await freePort()
  const server = await startServer([path.join(FIXTURES, 'http-fixture-server.js'), '--port', String(port), ...args], { port })
  server.url = `http://127.0.0.1:${port}/mcp`
  return server
}

module.exports = { freePort, startServer, startEverything, startFixture, LOOPBACK_ONLY }
