'use strict'

// The fidelity scenario against @modelcontextprotocol/server-everything, shared by the stdio
// suite (proxy-everything.test.js) and the HTTP one (proxy-http-everything.test.js): an SDK Client
// that declares sampling, elicitation and roots runs every feature once and records what it saw.

const {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  CallToolResultSchema,
  EmptyResultSchema,
} = require('@modelcontextprotocol/sdk/types.js')

const assert = require('node:assert/strict')

const { connect } = require('./helpers.js')

const CAPABILITIES = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } }
const ROOTS = [{ uri: 'file:///work/project', name: 'project' }]

/**
 * Runs the whole scenario against one server: a command (stdio) or a function that connects a
 * client with the given options (e.g. over HTTP). Returns everything observed.
 */
async function scenario(target) {
  const seen = { sampling: [], elicitation: [], rootsAsked: 0, logs: [], updated: [] }
  const open = typeof target === 'function' ? target : (opts) => connect(target, opts)
  const { client, stderr } = await open({
    capabilities: CAPABILITIES,
    handlers: {
      requests: [
        [CreateMessageRequestSchema, (req) => {
          seen.sampling.push(req.params)
          return { role: 'assistant', content: { type: 'text', text: 'sampled reply' }, model: 'test-model', stopReason: 'endTurn' }
        }],
        [ElicitRequestSchema, (req) => {
          seen.elicitation.push(req.params.message)
          return { action: 'accept', content: { color: 'blue', name: 'Ada', check: true, email: 'ada@example.com', homepage: 'https://example.com', birthdate: '1815-12-10', integer: 3, number: 1.5, enum: 'value1', untitledSingleSelectEnum: 'value1', untitledMultipleSelectEnum: ['value1'], titledSingleSelectEnum: 'value1', titledMultipleSelectEnum: ['value1'], legacyTitledEnum: 'value1' } }
        }],
        [ListRootsRequestSchema, () => {
          seen.rootsAsked++
          return { roots: ROOTS }
        }],
      ],
      notifications: [
        [LoggingMessageNotificationSchema, (n) => seen.logs.push(n.params.level)],
        [ResourceUpdatedNotificationSchema, (n) => seen.updated.push(n.params.uri)],
      ],
    },
  })
  const out = { seen }
  try {
    out.serverVersion = client.getServerVersion()
    out.capabilities = client.getServerCapabilities()
    out.instructions = client.getInstructions()
    out.tools = await client.listTools()
    out.prompts = await client.listPrompts()
    out.resources = await client.listResources()
    out.templates = await client.listResourceTemplates()

    // Progress notifications relayed with the client's own token.
    const progress = []
    out.longRunning = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    )
    out.progress = progress

    out.sampling = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } })
    out.elicitation = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })
    out.roots = await client.callTool({ name: 'get-roots-list', arguments: {} })
    out.structured = await client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } })
    out.sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } })
    out.image = await client.callTool({ name: 'get-tiny-image', arguments: {} })

    out.prompt = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'TX' } })
    out.completion = await client.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } })
    const firstResource = out.resources.resources[0]
    out.read = await client.readResource({ uri: firstResource.uri })

    // logging/setLevel must reach the upstream. At 'emergency' the upstream may only send
    // emergency messages (its simulated logger picks a random level every 5 s, sending one at
    // once); back at 'debug' every message passes, so one arrives within 5 s.
    out.setLevel = await client.setLoggingLevel('emergency')
    seen.logs.length = 0
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {} })
    out.subscribe = await client.subscribeResource({ uri: firstResource.uri })
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} })
    await new Promise((r) => setTimeout(r, 5600))
    seen.logsAtEmergency = [...seen.logs]
    await client.setLoggingLevel('debug')
    seen.logs.length = 0
    const deadline = Date.now() + 12000
    while (Date.now() < deadline && (seen.updated.length === 0 || seen.logs.length === 0)) await new Promise((r) => setTimeout(r, 100))
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {} })
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} })

    // Cancellation reaches the upstream: the long operation stops sending progress.
    const controller = new AbortController()
    const cancelledProgress = []
    const cancelled = client
      .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 4, steps: 8 } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => {
          cancelledProgress.push(p.progress)
          if (cancelledProgress.length === 1) controller.abort('test cancels')
        },
      })
      .then(() => 'completed', (err) => `rejected: ${err.name}`)
    out.cancelled = await cancelled
    await new Promise((r) => setTimeout(r, 1200))
    out.cancelledProgressCount = cancelledProgress.length

    // A task-augmented call: CreateTaskResult, poll tasks/get, then tasks/result.
    const created = await client.request(
      { method: 'tools/call', params: { name: 'simulate-research-query', arguments: { topic: 'proxies' }, task: { ttl: 60000 } } },
      CreateTaskResultSchema,
    )
    const taskId = created.task.taskId
    let status = created.task.status
    const taskDeadline = Date.now() + 15000
    while (status !== 'completed' && status !== 'failed' && Date.now() < taskDeadline) {
      await new Promise((r) => setTimeout(r, 300))
      status = (await client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status
    }
    out.taskStatus = status
    const taskResult = await client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema)
    out.taskResult = JSON.parse(JSON.stringify(taskResult).split(taskId).join('<task>'))
    out.ping = await client.request({ method: 'ping' }, EmptyResultSchema)
  } finally {
    await client.close()
  }
  out.stderr = stderr()
  return out
}

/** Deletes every `description` of a list result (the one thing the proxy may change there). */
function withoutDescriptions(value) {
  if (Array.isArray(value)) return value.map(withoutDescriptions)
  if (value && typeof value === 'object') {
    const copy = {}
    for (const [k, v] of Object.entries(value)) if (k !== 'description') copy[k] = withoutDescriptions(v)
    return copy
  }
  return value
}

// Fields that differ between any two runs of server-everything (random log levels, timing).
function stable(out) {
  const { seen, stderr, progress, cancelledProgressCount, ...rest } = out
  return rest
}

/** What the scenario's features must show through the proxy (progress, sampling, roots, …). */
function checkFeatures(out) {
  assert.ok(out.progress.length >= 2, `progress relayed: ${out.progress}`)
  assert.deepEqual(out.progress, [...out.progress].sort((a, b) => a - b))
  assert.equal(out.seen.sampling.length, 1)
  assert.match(JSON.stringify(out.sampling), /sampled reply/)
  assert.equal(out.seen.elicitation.length, 1)
  assert.match(JSON.stringify(out.elicitation), /accept/)
  assert.ok(out.seen.rootsAsked >= 1)
  assert.match(JSON.stringify(out.roots), /file:\/\/\/work\/project/)
  // setLevel reached the upstream: only emergency messages at 'emergency', some at 'debug'.
  for (const level of out.seen.logsAtEmergency) assert.equal(level, 'emergency', `got ${level} after setLevel(emergency)`)
  assert.ok(out.seen.logs.length >= 1, 'no log notification came back after setLevel(debug)')
  assert.ok(out.seen.updated.length >= 1, 'no resources/updated notification came back')
  assert.ok(out.structured.structuredContent, 'structured result validated against its outputSchema')
  assert.match(out.cancelled, /rejected/)
  assert.ok(out.cancelledProgressCount <= 2, `upstream kept sending progress after cancel: ${out.cancelledProgressCount}`)
  assert.equal(out.taskStatus, 'completed')
  assert.match(JSON.stringify(out.taskResult), /proxies/)
}

module.exports = { scenario, withoutDescriptions, stable, checkFeatures, CAPABILITIES }
