'use strict'

// Fidelity end to end: the real bin in front of @modelcontextprotocol/server-everything, driven by
// an SDK Client that declares sampling, elicitation and roots, compared with the same session
// without the proxy. Every response must equal the direct one, except descriptions in lists,
// which the proxy compresses on purpose (at --filter-level=off they must be equal too).

const { test, before } = require('node:test')
const assert = require('node:assert/strict')

const { everythingCommand, proxyCommand } = require('./helpers.js')
const { scenario, withoutDescriptions, stable, checkFeatures } = require('./everything-scenario.js')

let direct
let proxiedOff
let proxiedModerate

// Setup, not a test: the three sessions every test below compares (a failure here fails them all).
before(async () => {
  ;[direct, proxiedOff, proxiedModerate] = await Promise.all([
    scenario(everythingCommand()),
    scenario(proxyCommand(everythingCommand(), ['--filter-level=off'])),
    scenario(proxyCommand(everythingCommand())),
  ])
}, { timeout: 120000 })

test('tools/list includes the tools a sampling/elicitation/roots client unlocks', () => {
  const names = proxiedModerate.tools.tools.map((t) => t.name)
  for (const name of ['trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list', 'simulate-research-query']) {
    assert.ok(names.includes(name), `${name} missing from ${names.join(', ')}`)
  }
  // No tool of server-everything returns a snapshot, so the proxy adds none of its own.
  assert.deepEqual(names, direct.tools.tools.map((t) => t.name))
  assert.deepEqual(proxiedOff.tools.tools.map((t) => t.name), direct.tools.tools.map((t) => t.name))
})

test('at --filter-level=off every response equals the direct one', () => {
  assert.deepEqual(stable(proxiedOff), stable(direct))
})

test('at moderate only descriptions of list results may differ', () => {
  const { tools, prompts, resources, templates, ...rest } = stable(proxiedModerate)
  const { tools: dTools, prompts: dPrompts, resources: dResources, templates: dTemplates, ...dRest } = stable(direct)
  assert.deepEqual(rest, dRest)
  assert.ok(!tools.tools.some((t) => t._meta?.['mcp-snapshot-filter/proxyTool']))
  assert.deepEqual(withoutDescriptions(tools), withoutDescriptions(dTools))
  assert.deepEqual(withoutDescriptions(prompts), withoutDescriptions(dPrompts))
  assert.deepEqual(withoutDescriptions(resources), withoutDescriptions(dResources))
  assert.deepEqual(withoutDescriptions(templates), withoutDescriptions(dTemplates))
})

test('progress, sampling, elicitation, roots, logging and subscriptions work through the proxy', () => {
  for (const out of [proxiedOff, proxiedModerate]) checkFeatures(out)
})
