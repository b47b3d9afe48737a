'use strict'

// A remote upstream: MCP over Streamable HTTP (or the older HTTP+SSE transport) through the SDK's
// client transports, behind the interface the proxy uses for a child process (described in
// bin/upstream-stdio.js: send(text), online(line), pause/resume, close). What the SDK transports
// leave to their caller is done here:
// - which request a broken response stream carried, so that exactly those requests get an error
//   (the SDK only reports "SSE stream disconnected" to onerror and the request would hang);
// - the HTTP status of a failed POST (401/403 once on stderr, a JSON-RPC error body forwarded);
// - a new session when the old one is gone: the client's own `initialize` is replayed under an
//   id of the proxy's, its answer kept from the client, which initialized long ago;
// - the upstream's own text of each message (the SDK hands over parsed ones), and the client's
//   own text of each message it posts;
// - no timeouts: Node's fetch cuts a response after 300 s without headers or body bytes.

const { AsyncLocalStorage } = require('node:async_hooks')
const fs = require('node:fs')
const tls = require('node:tls')

const { StreamableHTTPClientTransport, StreamableHTTPError } = require('@modelcontextprotocol/sdk/client/streamableHttp.js')
const { SSEClientTransport, SseError } = require('@modelcontextprotocol/sdk/client/sse.js')

const { log } = require('./log.js')
const { DEFAULT_MAX_LINE_BYTES } = require('./line-buffer.js')
const { memberText, replaceMember, idKeyOfJson } = require('./jsonrpc.js')

// The SSE parser the SDK's Streamable HTTP transport reads events with, resolved from the SDK's
// own place (it is the SDK's dependency): the raw text of each event is taken with the same
// event boundaries the SDK sees.
const { createParser } = require(require.resolve('eventsource-parser', { paths: [require.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js')] }))

const UPSTREAM_GONE = -32000
// Connection failures that a later attempt may not meet (a server starting, restarting, moving).
const RETRYABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED'])

// Reconnecting a lost upstream: attempts RETRY_FIRST_MS apart, doubling up to RETRY_MAX_MS, for
// `retrySeconds` (the option) in all; requests sent meanwhile wait for it.
const RETRY_FIRST_MS = 250
const RETRY_MAX_MS = 5000
// The SDK's own resumption of a broken SSE stream (GET with Last-Event-ID): 0.5 + 1 + 2 s.
const RESUME = { initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2, maxRetries: 3 }
// How long a replayed initialize may take when reconnecting (a client's call is never timed).
const REINITIALIZE_MS = 10000
// How long a session's DELETE may take when the proxy stops.
const CLOSE_MS = 1000

/** Why a fetch or a stream failed, without anything of the request (headers, body). */
function describeError(err) {
  if (!err) return 'unknown error'
  const cause = err.cause
  let text = err.message || String(err)
  if (cause && typeof cause === 'object') {
    const detail = cause.code && cause.message && !cause.message.includes(cause.code) ? `${cause.code}: ${cause.message}` : cause.message || cause.code
    if (detail) text = `${text} (${detail})`
  }
  return text
}

/** The URL as it may be logged: no userinfo, query or fragment (where tokens hide). */
function redactUrl(url) {
  const u = new URL(url)
  return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`
}

function isLoopback(hostname) {
  const h = hostname.replace(/^\[|\]$/g, '')
  return h === 'localhost' || h.endsWith('.localhost') || /^127\./.test(h) || h === '::1'
}

// Every request goes upstream under an id of the proxy's own (a safe integer, or a string for
// the proxy's internal requests), so the SDK's parse and the server's cannot change or merge two
// of them; its answer goes back to the client under the id's text as the client wrote it.
function idKey(id) {
  return `${typeof id}:${id}`
}

// Late answers to requests the proxy already failed are dropped; this many are remembered.
const MAX_FAILED = 1024

/** The id's JSON text as the client wrote it. */
function idJsonOf(text, msg) {
  return (typeof msg.id !== 'string' && memberText(text, 'id')) || JSON.stringify(msg.id)
}

function safeParse(text) {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

function isRequest(msg) {
  return typeof msg?.method === 'string' && 'id' in msg
}

function isResponse(msg) {
  return msg && !('method' in msg) && ('result' in msg || 'error' in msg)
}

/** An error whose message is what the client is told, already logged where it mattered. */
function upstreamFailure(message) {
  const err = new Error(message)
  err.upstreamMessage = message
  err.logged = true
  return err
}

/**
 * `headers` ("Name: value" strings) as an object. `${NAME}` in a value is the environment
 * variable NAME, so that a token need not sit in a client's config; a missing variable is an
 * error naming it (never a value).
 */
function parseHeaders(lines, env = process.env) {
  const headers = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = colon === -1 ? '' : line.slice(0, colon).trim()
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new Error(`--header needs 'Name: value', got a header without a valid name${colon === -1 ? ' (no colon)' : ''}`)
    }
    const value = line
      .slice(colon + 1)
      .trim()
      .replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable) => {
        if (env[variable] === undefined) throw new Error(`--header ${name}: environment variable ${variable} is not set`)
        return env[variable]
      })
    if (/[\r\n\0]/.test(value)) throw new Error(`--header ${name}: the value holds a line break or NUL`)
    headers[name] = value
  }
  return headers
}

// Where the system keeps its trusted certificates (Debian/Ubuntu, Fedora/RHEL, openSUSE,
// Alpine and macOS's OpenSSL), unless SSL_CERT_FILE names the file, as OpenSSL reads it.
const SYSTEM_CA_FILES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/ca-bundle.pem', '/etc/ssl/cert.pem']

function pemCertificates(file) {
  try {
    return fs.readFileSync(file, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  } catch {
    return []
  }
}

/**
 * The certificates HTTPS trusts: Node's own, the system's store, and NODE_EXTRA_CA_CERTS (Node's
 * fetch alone would trust only its bundled ones, so a company CA installed in the system store
 * would be refused).
 */
function trustedCertificates(env = process.env) {
  const files = env.SSL_CERT_FILE ? [env.SSL_CERT_FILE] : SYSTEM_CA_FILES
  let system = []
  for (const file of files) {
    system = pemCertificates(file)
    if (system.length) break
  }
  const extra = env.NODE_EXTRA_CA_CERTS ? pemCertificates(env.NODE_EXTRA_CA_CERTS) : []
  return [...tls.rootCertificates, ...system, ...extra]
}

let agents
/**
 * An undici Agent of Node's own fetch without its 300 s header and body timeouts and with the
 * system's certificates (or null: Node's fetch as it is).
 */
async function fetchAgent() {
  if (agents !== undefined) return agents
  agents = null
  try {
    // Node creates its fetch's dispatcher on the first fetch; a data: URL touches no network.
    await fetch('data:,')
    const global = globalThis[Symbol.for('undici.globalDispatcher.1')]
    if (global && typeof global.constructor === 'function') {
      agents = new global.constructor({ headersTimeout: 0, bodyTimeout: 0, connect: { ca: trustedCertificates() } })
    }
  } catch {
    // keep Node's defaults
  }
  return agents
}

class HttpUpstream {
  /**
   * @param {object} opts
   * @param {string} opts.url the MCP endpoint (Streamable HTTP) or the SSE endpoint (HTTP+SSE)
   * @param {'auto'|'streamable-http'|'sse'} [opts.transport] auto: Streamable HTTP, else HTTP+SSE
   * @param {Record<string, string>} [opts.headers] sent with every request, never logged
   * @param {number} [opts.retrySeconds] how long a lost upstream is tried again
   * @param {number} [opts.maxMessageBytes] the most one response body (JSON) or one SSE event
   *   may hold, as a stdio line (bin/line-buffer.js); past it the request gets an error
   */
  constructor(opts) {
    this.url = new URL(opts.url)
    this.shownUrl = redactUrl(this.url)
    this.mode = opts.transport ?? 'auto'
    this.headers = opts.headers ?? {}
    this.retryMs = (opts.retrySeconds ?? 30) * 1000
    this.maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_MAX_LINE_BYTES
    this.online = null
    this.onerror = null
    this.ondrain = null
    this.onbroken = null
    this.onclose = null
    /** The transport in use, and which kind it is once the first connection settled it. */
    this.transport = null
    this.kind = this.mode === 'auto' ? null : this.mode
    /** The client's initialize request (replayed for a new session) and whether it finished. */
    this.initialize = null
    this.initialized = false
    /** Requests sent and not answered, by the upstream id's key: key -> { id, idJson, clientKey, method, ctx } */
    this.outstanding = new Map()
    /** The upstream id of each outstanding request, by the client's id (its exact text). */
    this.upstreamIds = new Map()
    this.requestSeq = 0
    /** Requests the proxy failed on the upstream's behalf: a late answer to one is dropped. */
    this.failedIds = new Set()
    /** A reconnection in progress (a promise), or the reason the last one gave up. */
    this.reconnecting = null
    this.down = null
    this.closed = false
    this.internalSeq = 0
    this.internal = new Map()
    this.authProblem = null
    this.als = new AsyncLocalStorage()
    this.opening = null
    /** Errors a send's promise reports: the transport's onerror need not log them again. */
    this.reportedBySend = new WeakSet()
    this.lastLogged = null
    this.paused = false
    this.held = []
  }

  async start() {
    this.agent = await fetchAgent()
    if (this.url.protocol === 'http:' && !isLoopback(this.url.hostname)) {
      log(`warning: --upstream-url ${this.shownUrl} is plain http to another host: requests and headers travel unencrypted`)
    }
  }

  /**
   * Sends one message, the JSON text the client wrote (a string or a Buffer, already checked by
   * the proxy), which is what the POST carries. A request that can no longer be answered gets a
   * -32000 error line, as if from the upstream. Never asks the proxy to wait (always true).
   */
  send(message) {
    let text = message.toString()
    const msg = JSON.parse(text)
    if (isRequest(msg)) {
      const idJson = idJsonOf(text, msg)
      const id = ++this.requestSeq
      const key = idKey(id)
      const entry = { id, idJson, clientKey: idKeyOfJson(idJson), method: msg.method, ctx: null }
      if (this.closed) {
        this.answerError(entry, 'the proxy is shutting down')
        return true
      }
      msg.id = id
      text = replaceMember(text, 'id', String(id))
      this.outstanding.set(key, entry)
      this.upstreamIds.set(entry.clientKey, id)
      this.deliver(msg, entry, text).catch((err) => this.fail(key, err.upstreamMessage ?? describeError(err)))
      return true
    }
    if (msg?.method === 'notifications/cancelled' && msg.params?.requestId !== undefined) {
      // The upstream knows the request by the proxy's id. It may now never answer; the proxy
      // owes the client nothing for it either.
      const requestIdJson = typeof msg.params.requestId === 'string' ? JSON.stringify(msg.params.requestId) : memberText(memberText(text, 'params') ?? '{}', 'requestId')
      const id = requestIdJson === undefined ? undefined : this.upstreamIds.get(idKeyOfJson(requestIdJson))
      if (id !== undefined) {
        this.forget(idKey(id))
        msg.params.requestId = id
        text = replaceMember(text, 'params', replaceMember(memberText(text, 'params'), 'requestId', String(id)))
      }
    }
    if (msg?.method === 'notifications/initialized') this.initialized = true
    if (this.closed) return true
    this.deliver(msg, null, text).catch((err) => {
      if (!err.logged) log(`could not send ${msg?.method ?? 'a response'} to the upstream: ${describeError(err)}`)
    })
    return true
  }

  /** Tells the client that `entry` will not be answered: a -32000 error response at its id. */
  answerError(entry, message) {
    this.toClientLine(`{"jsonrpc":"2.0","id":${entry.idJson},"error":${JSON.stringify({ code: UPSTREAM_GONE, message })}}`)
  }

  /**
   * A message from the upstream for the client: as the upstream wrote it (`raw`) when known, an
   * answer to a request with the id text the client wrote.
   */
  toClient(msg, entry, raw) {
    const line = raw ?? JSON.stringify(msg)
    this.toClientLine(entry ? (replaceMember(line, 'id', entry.idJson) ?? line) : line)
  }

  toClientLine(line) {
    if (this.paused) this.held.push(line)
    else this.online?.(Buffer.from(line))
  }

  /** The client is not reading: lines wait here (the HTTP streams are read on regardless). */
  pause() {
    this.paused = true
  }

  resume() {
    this.paused = false
    while (!this.paused && this.held.length) this.online?.(Buffer.from(this.held.shift()))
  }

  exitDescription() {
    return `the connection to ${this.shownUrl} was closed`
  }

  /** Posts one message on the current connection, connecting (or waiting for a reconnection) first. */
  async deliver(msg, entry, text) {
    if (msg?.method === 'initialize' && isRequest(msg)) this.initialize = msg
    if (await this.connected(msg, text)) return // the new connection carried msg (the first initialize)
    try {
      await this.post(this.transport, msg, entry, text)
    } catch (err) {
      // A message the upstream never received (refused connection, unknown session) goes out
      // once more on the new connection.
      if (!err.notDelivered || !this.reconnecting) throw err
      await this.reconnecting
      if (!this.transport) throw upstreamFailure(`upstream MCP server unreachable: ${this.down}`)
      await this.post(this.transport, msg, entry, text)
    }
  }

  /**
   * Resolves once there is a transport. The very first message (initialize) opens it and is
   * carried by it: then this resolves true.
   */
  async connected(msg, text) {
    if (this.transport && !this.reconnecting) return false
    if (this.reconnecting) {
      await this.reconnecting
      if (!this.transport) throw upstreamFailure(`upstream MCP server unreachable: ${this.down}`)
      return false
    }
    if (this.opening) {
      await this.opening.catch(() => {})
      return this.connected(msg, text)
    }
    if (this.down) {
      // A reconnection gave up earlier: a new message tries again.
      this.reconnect(this.down)
      return this.connected(msg, text)
    }
    this.opening = this.openWithRetry(msg, text)
      .then((transport) => {
        this.transport = transport
      })
      .finally(() => {
        this.opening = null
      })
    await this.opening
    return true
  }

  /**
   * The first connection, tried with the same backoff as a reconnection while the server does
   * not answer at all (not yet started, say); an HTTP answer, even an error, ends it.
   */
  async openWithRetry(first, text) {
    const deadline = Date.now() + this.retryMs
    let delay = RETRY_FIRST_MS
    for (let told = false; ; ) {
      try {
        return await this.open(first, text)
      } catch (err) {
        if (!err.retryable || this.closed || Date.now() + delay > deadline) throw err
        if (!told) log(`${err.upstreamMessage}: trying again for up to ${Math.round(this.retryMs / 1000)} s`)
        told = true
      }
      await new Promise((resolve) => setTimeout(resolve, delay)) // RETRY_FIRST_MS doubling to RETRY_MAX_MS
      delay = Math.min(delay * 2, RETRY_MAX_MS)
    }
  }

  /**
   * Opens a transport and posts `first` (an initialize) on it. In auto mode a server that
   * answers Streamable HTTP's POST with 400/404/405 is asked for the HTTP+SSE stream instead.
   */
  async open(first, text) {
    const entry = isRequest(first) ? this.outstanding.get(idKey(first.id)) : null
    if (this.kind !== 'sse') {
      const transport = this.createTransport('streamable-http')
      await transport.start()
      try {
        await this.post(transport, first, entry, text)
        this.kind = 'streamable-http'
        return transport
      } catch (err) {
        await transport.close().catch(() => {})
        const status = err.httpStatus
        if (this.kind !== null || first?.method !== 'initialize' || ![400, 404, 405].includes(status)) throw err
        log(`upstream ${this.shownUrl} answered HTTP ${status} to Streamable HTTP: trying the HTTP+SSE transport`)
      }
    }
    const transport = this.createTransport('sse')
    try {
      try {
        await this.als.run({ method: 'GET' }, () => transport.start())
      } catch (err) {
        throw this.httpFailure(err, 'opening the SSE stream')
      }
      await this.post(transport, first, entry, text)
    } catch (err) {
      await transport.close().catch(() => {})
      throw err
    }
    this.kind = 'sse'
    return transport
  }

  createTransport(kind) {
    const opts = { requestInit: { headers: { ...this.headers } }, fetch: (url, init) => this.fetch(url, init) }
    let transport
    if (kind === 'sse') {
      transport = new SSEClientTransport(this.url, opts)
    } else {
      transport = new StreamableHTTPClientTransport(this.url, { ...opts, reconnectionOptions: RESUME })
    }
    transport.onmessage = (msg) => this.received(transport, msg)
    transport.onerror = (err) => this.transportError(transport, err)
    transport.onclose = () => {}
    return transport
  }

  /**
   * Posts msg, with a context the fetch wrapper fills in (the HTTP status, the response stream)
   * and reads: `text`, the client's own JSON text of msg, is what the POST carries.
   */
  async post(transport, msg, entry, text) {
    const ctx = { method: 'POST', message: msg, text, transport, entry, status: 0 }
    if (entry) entry.ctx = ctx
    try {
      await this.als.run(ctx, () => transport.send(msg))
    } catch (err) {
      if (err && typeof err === 'object') this.reportedBySend.add(err)
      throw this.httpFailure(err, `posting ${msg?.method ?? 'a response'}`, ctx)
    }
  }

  /**
   * The SDK's fetch, watched: the status of each answer, and the end of each POST's SSE stream
   * (by which the requests it carried are known to be answered, or not).
   */
  async fetch(url, init) {
    const ctx = this.als.getStore()
    const method = init?.method ?? 'GET'
    let response
    let sent = this.agent ? { ...init, dispatcher: this.agent } : init
    // The SDK posts JSON.stringify of the parsed message; the text the client wrote is the same
    // JSON value, exactly as written (numbers beyond 2^53, member order, escapes).
    if (method === 'POST' && ctx?.method === 'POST' && ctx.text !== undefined && typeof init?.body === 'string') sent = { ...sent, body: ctx.text }
    try {
      response = await fetch(url, sent)
    } catch (err) {
      if (method === 'GET' && err && typeof err === 'object') {
        // A stream the SDK is resuming: the SDK retries, then reports giving up (transportError).
        err.duringResume = true
        this.lastStreamError = describeError(err)
        if (ctx?.entry) ctx.entry.resumeError = describeError(err)
      }
      throw err
    }
    response = this.capped(response, ctx)
    if (!ctx) return response
    if (method === 'POST' && ctx.method === 'POST') {
      ctx.status = response.status
      ctx.statusText = response.statusText
      if (!response.ok && response.status !== 401 && response.status !== 403) {
        // A JSON-RPC error in the body is the server's answer: it is forwarded as it is.
        ctx.body = await response.clone().text().catch(() => null)
      }
    }
    const type = response.headers.get('content-type') ?? ''
    // Raw texts are taken on Streamable HTTP only: HTTP+SSE's EventSource reads its own way.
    const capture = ctx.transport instanceof StreamableHTTPClientTransport
    if (response.ok && capture && method === 'POST' && type.includes('application/json')) {
      const body = await response.clone().text().catch(() => null)
      if (body !== null && body.trimStart().startsWith('{')) ctx.raw = [body]
    }
    if (!response.ok || !response.body || !type.includes('text/event-stream')) return response
    // A POST's stream answers its request; a GET with an entry is that stream resumed.
    const watch = ctx.entry && (method === 'POST' || method === 'GET')
    if (!watch && !capture) return response
    return new Response(this.watchStream(response.body, ctx, { watch, capture }), { status: response.status, statusText: response.statusText, headers: response.headers })
  }

  /**
   * The response with its body cut off past `maxMessageBytes`: in all for JSON (and any other
   * body), per event for SSE (an event ends at a blank line). What reads it then fails with
   * the reason, also left on `ctx.tooLarge`, so the request gets an error and memory stays
   * bounded by the cap, as a stdio line is.
   */
  capped(response, ctx) {
    if (!response.body) return response
    const cap = this.maxMessageBytes
    const sse = (response.headers.get('content-type') ?? '').includes('text/event-stream')
    let held = 0
    let lastByte = 0
    const cut = new TransformStream({
      transform(chunk, controller) {
        const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
        let since = -1
        if (sse) {
          // Where the last blank line in the chunk ends (\n\n, \n\r\n, \r\r; a \n that ended the
          // previous chunk counts): the bytes after it are the event being read.
          for (const [end, length] of [[bytes.lastIndexOf('\n\n'), 2], [bytes.lastIndexOf('\n\r\n'), 3], [bytes.lastIndexOf('\r\r'), 2]]) {
            if (end !== -1) since = Math.max(since, end + length)
          }
          if (since === -1 && lastByte === 10 && bytes[0] === 10) since = 1
          lastByte = bytes[bytes.length - 1] ?? lastByte
        }
        held = since === -1 ? held + bytes.length : bytes.length - since
        if (held > cap) {
          const reason = sse ? `an SSE event of more than ${cap} bytes` : `a body of more than ${cap} bytes`
          if (ctx) ctx.tooLarge = reason
          const err = new Error(`${reason} (the limit of one message)`)
          err.tooLarge = true
          controller.error(err)
          return
        }
        controller.enqueue(chunk)
      },
    })
    return new Response(response.body.pipeThrough(cut), { status: response.status, statusText: response.statusText, headers: response.headers })
  }

  /**
   * The body, passed through unchanged, telling streamEnded how it ended (`watch`) and queueing
   * the data of each message event on `ctx.raw` (`capture`), for `received` to forward as it came.
   */
  watchStream(body, ctx, { watch, capture }) {
    const reader = body.getReader()
    let resumable = false
    const decoder = new TextDecoder()
    const parser = capture
      ? createParser({
          onEvent: (event) => {
            if (event.id) resumable = true
            // The events the SDK hands over: with data, of no type or type message.
            if (event.data && (!event.event || event.event === 'message')) ctx.raw?.push(event.data)
          },
        })
      : null
    if (capture) ctx.raw ??= []
    const ended = (err) => {
      if (watch) this.streamEnded(ctx, err, resumable)
    }
    return new ReadableStream({
      pull: async (controller) => {
        let chunk
        try {
          chunk = await reader.read()
        } catch (err) {
          controller.error(err)
          ended(err)
          return
        }
        if (chunk.done) {
          controller.close()
          ended(null)
          return
        }
        const text = decoder.decode(chunk.value, { stream: true })
        // An event id makes the stream resumable: the SDK then asks for the rest with a GET.
        if (parser) parser.feed(text)
        else if (!resumable && /(^|\n)id:/.test(text)) resumable = true
        controller.enqueue(chunk.value)
      },
      cancel: (reason) => {
        ended(null)
        return reader.cancel(reason)
      },
    })
  }

  /**
   * The text the upstream wrote for `msg`, which the SDK just handed over parsed: the oldest
   * queued on the context its stream runs in. Checked against msg (its id and method), so that a
   * queue out of step is noticed: it is then given up for the context, and msg serialized.
   */
  rawText(msg) {
    const ctx = this.als.getStore()
    if (!ctx?.raw?.length) return undefined
    const text = ctx.raw.shift()
    let parsed
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = null
    }
    if (msg !== undefined && (parsed?.id !== msg.id || parsed?.method !== msg.method)) {
      ctx.raw = null
      log('the upstream stream\'s raw texts are out of step with the SDK\'s messages: forwarding re-serialized messages on it')
      return undefined
    }
    return text
  }

  /**
   * A response stream ended. Its request, if still unanswered, is failed at once when the
   * stream cannot be resumed.
   */
  streamEnded(ctx, err, resumable) {
    const entry = ctx.entry
    if (!entry) return
    const key = idKey(entry.id)
    if (this.outstanding.get(key) !== entry) return
    const why = err ? `connection broke (${describeError(err)})` : 'closed its response stream'
    entry.broke = why
    // A resumable one the SDK asks for again (GET with Last-Event-ID): it either brings the
    // answer or reports giving up (transportError), so no timer is needed, none cuts a call.
    if (!resumable || this.closed) setImmediate(() => this.fail(key, `upstream MCP server ${why} before answering ${entry.method}`))
  }

  /** Fails one outstanding request with `message` (the client gets -32000 with it). */
  fail(key, message) {
    const entry = this.outstanding.get(key)
    if (!entry) return
    this.forget(key)
    this.failedIds.add(key)
    if (this.failedIds.size > MAX_FAILED) this.failedIds.delete(this.failedIds.values().next().value)
    this.answerError(entry, message)
  }

  /** The request is off the books (answered, failed or cancelled). */
  forget(key) {
    const entry = this.outstanding.get(key)
    if (!entry) return
    this.outstanding.delete(key)
    if (this.upstreamIds.get(entry.clientKey) === entry.id) this.upstreamIds.delete(entry.clientKey)
  }

  /** A failed send as an error for the client, logging 401/403 once and noticing a lost upstream. */
  httpFailure(err, what, ctx) {
    if (err.upstreamMessage) return err
    if (ctx?.tooLarge || err?.tooLarge || err?.cause?.tooLarge) {
      const failure = upstreamFailure(`upstream answered ${what} with ${ctx?.tooLarge ?? 'a message over the size limit'} (dropped)`)
      log(failure.message)
      return failure
    }
    if (err?.name === 'ZodError' || err instanceof SyntaxError) {
      // A JSON answer the SDK would not take (see transportError): forwarded as it came.
      const raw = ctx?.raw?.shift()
      const failure = upstreamFailure(`upstream answered ${what} with a message that is not JSON-RPC`)
      const parsed = raw === undefined ? null : safeParse(raw)
      if (parsed) {
        const entry = ctx.entry && this.outstanding.get(idKey(ctx.entry.id)) === ctx.entry ? ctx.entry : null
        if (entry) this.forget(idKey(entry.id))
        this.toClient(parsed, entry, raw)
        failure.alreadyAnswered = true
      } else log(failure.message)
      return failure
    }
    const status = ctx?.status || err.httpStatus || (err instanceof StreamableHTTPError && err.code > 0 ? err.code : 0) || (typeof err.code === 'number' && err.code > 0 ? err.code : 0)
    if (status === 401 || status === 403) {
      const text = `upstream ${this.shownUrl} refused the credentials: HTTP ${status} ${ctx?.statusText || (status === 401 ? 'Unauthorized' : 'Forbidden')} (check --header)`
      if (this.authProblem !== text) log(text)
      this.authProblem = text
      return upstreamFailure(text)
    }
    if (status >= 400) {
      const failure = upstreamFailure(`upstream ${this.shownUrl} answered HTTP ${status}${ctx?.statusText ? ` ${ctx.statusText}` : ''} on ${what}`)
      failure.httpStatus = status
      if (status === 404 && this.transport && ctx?.transport === this.transport && this.kind === 'streamable-http' && this.transport.sessionId) {
        // The spec's word for a session the server no longer knows: start a new one.
        failure.notDelivered = true
        this.reconnect(`the session expired (HTTP 404 on ${what})`, ctx)
        return failure
      }
      const forwarded = this.errorBody(ctx)
      if (forwarded) {
        failure.answered = forwarded
        return this.answeredByBody(failure, ctx)
      }
      if (this.transport) log(failure.message)
      return failure
    }
    if (this.closed) return upstreamFailure('the proxy is shutting down')
    // No HTTP answer at all: the server is gone or unreachable.
    const reason = describeError(err)
    const failure = upstreamFailure(`upstream MCP server unreachable (${reason}) on ${what}`)
    // A refused connection never carried the message: it can be sent again.
    failure.notDelivered = err?.cause?.code === 'ECONNREFUSED'
    // Worth trying again: the server is not (yet) there. Not so a certificate it was refused for.
    failure.retryable = RETRYABLE.has(err?.cause?.code) || (err instanceof SseError && /ECONNREFUSED|ECONNRESET|other side closed/.test(err.message))
    if (ctx?.transport === this.transport && this.transport) this.reconnect(reason, failure.notDelivered ? ctx : null)
    return failure
  }

  /** The JSON-RPC error response an HTTP error's body holds for the request that was posted. */
  errorBody(ctx) {
    if (!ctx?.body || !isRequest(ctx.message)) return null
    try {
      const parsed = JSON.parse(ctx.body)
      if (parsed && parsed.jsonrpc === '2.0' && parsed.error && typeof parsed.error.code === 'number' && parsed.id === ctx.message.id) return parsed
    } catch {
      // not JSON: the status alone tells
    }
    return null
  }

  /** The server answered with an HTTP error holding a JSON-RPC error: that is the answer. */
  answeredByBody(failure, ctx) {
    const key = idKey(ctx.message.id)
    const entry = this.outstanding.get(key)
    if (entry) this.forget(key)
    setImmediate(() => this.toClient(failure.answered, entry))
    failure.alreadyAnswered = true
    return failure
  }

  received(transport, msg) {
    const raw = this.rawText(msg)
    if (isResponse(msg) && 'id' in msg) {
      const key = idKey(msg.id)
      const internal = this.internal.get(key)
      if (internal) {
        this.internal.delete(key)
        internal(msg)
        return
      }
      if (this.failedIds.delete(key)) {
        log(`dropped the upstream's late answer to a request already failed (id ${JSON.stringify(msg.id)})`)
        return
      }
      const entry = this.outstanding.get(key)
      if (entry) {
        this.forget(key)
        if (entry.method === 'initialize' && typeof msg.result?.protocolVersion === 'string') transport.setProtocolVersion?.(msg.result.protocolVersion)
        this.toClient(msg, entry, raw)
        return
      }
    }
    this.toClient(msg, null, raw)
  }

  transportError(transport, err) {
    if (this.closed || transport !== this.transport) return
    const ctx = this.als.getStore()
    if (err && typeof err === 'object' && this.reportedBySend.has(err)) return
    const text = describeError(err)
    if (err?.name === 'ZodError' || err instanceof SyntaxError) {
      // The SDK's schema is stricter than JSON-RPC (an unknown top-level member fails it): the
      // text goes on as it came, and the proxy judges it as it judges any upstream line.
      const raw = this.rawText(undefined)
      if (raw !== undefined) {
        const parsed = safeParse(raw)
        const key = isResponse(parsed) && 'id' in parsed ? idKey(parsed.id) : null
        const entry = key ? this.outstanding.get(key) : null
        if (entry) this.forget(key)
        this.toClient(parsed, entry, raw)
        return
      }
      log(`upstream sent a message that is not a JSON-RPC message (dropped): ${text.split('\n')[0]}`)
      return
    }
    if (/Maximum reconnection attempts/.test(text)) {
      // The SDK gave up resuming a stream: a request's (its context says which) or the
      // server's own stream of notifications, without which the session is deaf.
      const entry = ctx?.entry
      if (entry) this.fail(idKey(entry.id), `upstream MCP server ${entry.broke ?? 'stream broke'} before answering ${entry.method}; resuming the stream failed (${entry.resumeError ?? 'no answer'})`)
      else this.reconnect(`its event stream broke and could not be resumed${this.lastStreamError ? `: ${this.lastStreamError}` : ''}`)
      return
    }
    if (err?.duringResume || /^Failed to reconnect SSE stream/.test(text)) return
    if (transport instanceof SSEClientTransport && err instanceof SseError) {
      // HTTP+SSE carries every answer on its one stream: without it nothing pending can come.
      this.reconnect(`the SSE stream broke: ${text}`)
      return
    }
    // Errors of a send are reported through its promise; the rest (a stream that broke and is
    // being resumed) in one line, once while it repeats.
    setImmediate(() => {
      if (this.reportedBySend.has(err) || this.closed) return
      const line = /^SSE stream disconnected/.test(text) ? `upstream event stream broke (${text.replace(/^SSE stream disconnected: /, '')}): resuming it` : `upstream transport: ${text}`
      if (line !== this.lastLogged) log(line)
      this.lastLogged = line
    })
  }

  /**
   * The upstream is lost (`reason`): every request waiting on the old connection is failed,
   * then new connections are tried with backoff for `retryMs`; messages sent meanwhile wait, and
   * so does the one that found the upstream gone (`except`) when the upstream never received it.
   */
  reconnect(reason, except = null) {
    if (this.reconnecting || this.closed) return this.reconnecting
    const old = this.transport
    this.transport = null
    this.down = null
    for (const [key, entry] of [...this.outstanding]) {
      if (!entry.ctx || entry.ctx === except || entry.ctx.transport !== old) continue
      const what = entry.broke ? `MCP server ${entry.broke}` : `connection lost (${reason})`
      this.fail(key, `upstream ${what} before answering ${entry.method}`)
    }
    if (old) old.close().catch(() => {})
    const seconds = Math.round(this.retryMs / 1000)
    log(old ? `upstream connection lost (${reason}): reconnecting for up to ${seconds} s` : `upstream still unreachable (${reason}): trying again for up to ${seconds} s`)
    this.reconnecting = this.retryLoop(reason).finally(() => {
      this.reconnecting = null
    })
    return this.reconnecting
  }

  async retryLoop(reason) {
    const deadline = Date.now() + this.retryMs
    let delay = RETRY_FIRST_MS
    let last = reason
    for (let attempt = 1; !this.closed; attempt++) {
      try {
        const transport = await this.newSession()
        if (this.closed) {
          transport.close().catch(() => {})
          return
        }
        this.transport = transport
        this.lastLogged = null
        log(`reconnected to upstream ${this.shownUrl} (${this.kind}, a new session; attempt ${attempt})`)
        return
      } catch (err) {
        last = err.upstreamMessage ?? describeError(err)
        if (this.authProblem) break
      }
      if (Date.now() + delay > deadline) break
      await new Promise((resolve) => setTimeout(resolve, delay)) // RETRY_FIRST_MS doubling to RETRY_MAX_MS
      delay = Math.min(delay * 2, RETRY_MAX_MS)
    }
    this.down = last
    log(`upstream ${this.shownUrl} still unreachable after ${Math.round(this.retryMs / 1000)} s (${last}); the next request tries again`)
  }

  /**
   * A transport with a fresh session: the client's initialize replayed under a proxy id (its
   * answer stays here), then notifications/initialized.
   */
  async newSession() {
    if (!this.initialize) return this.createStarted()
    const id = `mcp-snapshot-filter/reinitialize/${++this.internalSeq}`
    const key = idKey(id)
    let answered
    const answer = new Promise((resolve, reject) => {
      answered = { resolve, reject }
      this.internal.set(key, resolve)
    })
    let transport
    try {
      transport = this.kind === 'sse' ? this.createTransport('sse') : this.createTransport('streamable-http')
      await this.als.run({ method: 'GET' }, () => transport.start())
      // The answer may come on the POST's own stream: until then this transport is not current.
      const pending = this.post(transport, { ...this.initialize, id }, null)
      pending.catch((err) => answered.reject(err))
      const timer = setTimeout(() => answered.reject(new Error('no answer to initialize')), REINITIALIZE_MS)
      const response = await answer.finally(() => clearTimeout(timer))
      if (response.error) throw new Error(`initialize failed: ${response.error.message}`)
      if (typeof response.result?.protocolVersion === 'string') transport.setProtocolVersion?.(response.result.protocolVersion)
      if (this.initialized) await this.post(transport, { jsonrpc: '2.0', method: 'notifications/initialized' }, null)
      return transport
    } catch (err) {
      this.internal.delete(key)
      transport?.close().catch(() => {})
      throw err
    }
  }

  async createStarted() {
    const transport = this.createTransport(this.kind ?? 'streamable-http')
    await this.als.run({ method: 'GET' }, () => transport.start())
    return transport
  }

  async close() {
    if (this.closed) return
    this.closed = true
    for (const key of [...this.outstanding.keys()]) this.fail(key, 'the proxy is shutting down')
    const transport = this.transport
    this.transport = null
    if (!transport) return
    if (typeof transport.terminateSession === 'function' && transport.sessionId) {
      // The server may free the session at once rather than when it times out.
      const timer = new Promise((resolve) => setTimeout(resolve, CLOSE_MS).unref?.())
      await Promise.race([transport.terminateSession().catch(() => {}), timer])
    }
    await transport.close().catch(() => {})
  }
}

/** The remote upstream the parsed options ask for; a bad --header throws `UsageError`. */
function fromOptions(options, UsageError) {
  let headers
  try {
    headers = parseHeaders(options.header ?? [])
  } catch (err) {
    throw new UsageError(err.message)
  }
  return new HttpUpstream({
    url: options['upstream-url'],
    transport: options['upstream-transport'],
    headers,
    retrySeconds: options['upstream-retry-seconds'],
  })
}

module.exports = { HttpUpstream, fromOptions, fetchAgent, trustedCertificates, parseHeaders, redactUrl, isLoopback, describeError }
