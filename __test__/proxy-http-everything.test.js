'use strict'

// The fidelity suite of proxy-everything.test.js against a remote upstream: server-everything in
// its Streamable HTTP mode, and in its SSE mode for the fallback, each on 127.0.0.1. The same
// scenario runs direct (an SDK client on the HTTP transport) and through the proxy
// (`--upstream-url`, the client on stdio); every response must be equal, except the descriptions
// of list results at moderate.

const test = require('node:test')
const assert = require('node:assert/strict')

const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js')
const { SSEClientTransport } = require('@modelcontextprotocol/sdk/client/sse.js')

const { connect, BIN } = require('./helpers.js')
const { startEverything } = require('./http-servers.js')
const { scenario, withoutDescriptions, stable, checkFeatures } = require('./everything-scenario.js')

/** A connector for `scenario`: an SDK client straight on the HTTP transport. */
function direct(url, Transport) {
  return async ({ capabilities, handlers }) => {
    const client = new Client({ name: 'fidelity-test', version: '1.0.0' }, { capabilities })
    for (const [schema, handler] of handlers.requests ?? []) client.setRequestHandler(schema, handler)
    for (const [schema, handler] of handlers.notifications ?? []) client.setNotificationHandler(schema, handler)
    await client.connect(new Transport(new URL(url)))
    return { client, stderr: () => '' }
  }
}

/** A connector for `scenario`: the client on stdio to the bin, the bin on HTTP to `url`. */
function proxied(url, args) {
  return (opts) => connect([process.execPath, BIN, '--upstream-url', url, ...args], opts)
}

for (const [mode, Transport, forced] of [
  ['streamableHttp', StreamableHTTPClientTransport, 'streamable-http'],
  ['sse', SSEClientTransport, 'sse'],
]) {
  test(`server-everything over ${mode}: through the proxy as direct`, { timeout: 150000 }, async (t) => {
    const server = await startEverything(mode)
    t.after(() => server.stop())
    const [plain, off, moderate, forcedOff] = await Promise.all([
      scenario(direct(server.url, Transport)),
      scenario(proxied(server.url, ['--filter-level=off'])),
      scenario(proxied(server.url, [])),
      // The transport named instead of found: the same session.
      scenario(proxied(server.url, ['--filter-level=off', `--upstream-transport=${forced}`])),
    ])

    await t.test('at --filter-level=off every response equals the direct one', () => {
      assert.deepEqual(stable(off), stable(plain))
      assert.deepEqual(stable(forcedOff), stable(plain))
    })

    await t.test('at moderate only descriptions of list results differ, no proxy tools (no snapshot tool upstream)', () => {
      const { tools, prompts, resources, templates, ...rest } = stable(moderate)
      const { tools: dTools, prompts: dPrompts, resources: dResources, templates: dTemplates, ...dRest } = stable(plain)
      assert.deepEqual(rest, dRest)
      assert.deepEqual(
        tools.tools.map((tool) => tool.name),
        dTools.tools.map((tool) => tool.name),
      )
      assert.deepEqual(withoutDescriptions(tools), withoutDescriptions(dTools))
      assert.deepEqual(withoutDescriptions(prompts), withoutDescriptions(dPrompts))
      assert.deepEqual(withoutDescriptions(resources), withoutDescriptions(dResources))
      assert.deepEqual(withoutDescriptions(templates), withoutDescriptions(dTemplates))
    })

    await t.test('progress, sampling, elicitation, roots, logging, subscriptions, cancellation, tasks', () => {
      for (const out of [plain, off, moderate, forcedOff]) checkFeatures(out)
    })

    await t.test('stderr tells which transport was used, and nothing else went wrong', () => {
      for (const out of [off, moderate]) {
        if (mode === 'sse') assert.match(out.stderr, /answered HTTP 404 to Streamable HTTP: trying the HTTP\+SSE transport/)
        else assert.doesNotMatch(out.stderr, /HTTP\+SSE/)
        assert.doesNotMatch(out.stderr, /error|lost|unreachable|dropped/i)
      }
      assert.doesNotMatch(forcedOff.stderr, /trying the HTTP\+SSE/)
    })
  })
}
