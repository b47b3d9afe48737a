// @ts-check
'use strict'

// A remote upstream: MCP over Streamable HTTP (or the older HTTP+SSE transport) through the
// official SDK's client transports (v2, @modelcontextprotocol/client: see
// docs/decisions/0002-http-upstream.md), used as they are meant to be, behind the interface the
// proxy uses for a child process (bin/upstream-stdio.js: send(text), online(line),
// pause/resume, close). The SDK parses what it carries, so exactness is the proxy's part:
// - every request goes upstream under an id of the proxy's own and its answer comes back under
//   the id text the client wrote, so ids arrive exactly as sent (two ids beyond 2^53 that parse
//   to one number stay two); what else a message holds is the SDK's parse and serialization
//   (a documented limit: numbers beyond 2^53 or 1e400 inside params and results are re-spelled);
// - a request whose response stream ends unanswered (the SDK says so per request) gets an error,
//   as does a failed POST (401/403 once on stderr, a JSON-RPC error body forwarded as the answer);
// - a new session when the old one is gone: the client's own `initialize` is replayed under an
//   id of the proxy's, its answer kept from the client, which initialized long ago;
// - the HTTP client is undici's, with no header or body timeouts (Node's fetch cuts a response
//   after 300 s without bytes), the system's certificates, and a cap on a response's size.

const fs = require('node:fs')
const tls = require('node:tls')

const { StreamableHTTPClientTransport, SSEClientTransport, SdkHttpError, SseError } = require('@modelcontextprotocol/client')
const { Agent, fetch: undiciFetch, setGlobalDispatcher } = require('undici')

const { log } = require('./log.js')
const { memberText, replaceMember, idKeyOfJson, idJsonIn } = require('./jsonrpc.js')
const { DEFAULT_MAX_LINE_BYTES } = require('./line-buffer.js')

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

function isRequest(msg) {
  return typeof msg?.method === 'string' && 'id' in msg
}

function isResponse(msg) {
  return msg && !('method' in msg) && ('result' in msg || 'error' in msg)
}

/**
 * @typedef {Error & { upstreamMessage: string, logged: boolean, httpStatus?: number, notDelivered?: boolean, retryable?: boolean }} UpstreamFailure
 */

/**
 * An error whose message is what the client is told, already logged where it mattered.
 * @param {string} message
 * @returns {UpstreamFailure}
 */
function upstreamFailure(message) {
  return Object.assign(new Error(message), { upstreamMessage: message, logged: true })
}

/**
 * `headers` ("Name: value" strings) as an object. `${NAME}` in a value is the environment
 * variable NAME, so that a token need not sit in a client's config; a missing variable is an
 * error naming it (never a value).
 */
function parseHeaders(lines, env = process.env) {
  /** @type {Record<string, string>} */
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

/**
 * The HTTP client of the remote upstream: undici's Agent without the 300 s header and body
 * timeouts of Node's fetch, trusting the system's certificates, and cutting a response body
 * over `maxResponseBytes` (a JSON answer, an error body, one request's SSE stream), which the
 * SDK would otherwise read whole into memory; `onCut` hears of each cut (the SDK's report of
 * the stream it broke does not say why).
 */
function httpAgent(maxResponseBytes, env = process.env, onCut = () => {}) {
  const agent = new Agent({ headersTimeout: 0, bodyTimeout: 0, maxResponseSize: maxResponseBytes, connect: { ca: trustedCertificates(env) } })
  const noticeCut = (err) => {
    if (isTooLarge(err)) onCut()
  }
  // The handler undici gives an interceptor speaks its handler API (onRequestStart…): each
  // method goes on to it as it is, the error after a look.
  const methods = ['onRequestStart', 'onRequestUpgrade', 'onResponseStart', 'onResponseData', 'onResponseEnd']
  return agent.compose((dispatch) => (opts, handler) => {
    const watched = {
      onResponseError(controller, err) {
        noticeCut(err)
        return handler.onResponseError?.(controller, err)
      },
    }
    for (const name of methods) if (typeof handler[name] === 'function') watched[name] = (...args) => handler[name](...args)
    return dispatch(opts, watched)
  })
}

/** The HTTP status of a failed POST as the SDK reports it, or 0. */
function httpStatus(err) {
  if (err instanceof SdkHttpError && typeof err.data?.status === 'number') return err.data.status
  // The HTTP+SSE transport's POST error names the status in its message.
  const match = /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(err?.message ?? '')
  return match ? Number(match[1]) : 0
}

function isTooLarge(err) {
  for (let e = err; e && typeof e === 'object'; e = e.cause) if (e.code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return true
  return false
}

class HttpUpstream {
  /**
   * @param {object} opts
   * @param {string} opts.url the MCP endpoint (Streamable HTTP) or the SSE endpoint (HTTP+SSE)
   * @param {'auto'|'streamable-http'|'sse'} [opts.transport] auto: Streamable HTTP, else HTTP+SSE
   * @param {Record<string, string>} [opts.headers] sent with every request, never logged
   * @param {number} [opts.retrySeconds] how long a lost upstream is tried again
   * @param {number} [opts.maxMessageBytes] the most one response body may hold, as a stdio line
   *   (bin/line-buffer.js); past it the request gets an error
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
    /** @type {((reason: string) => void) | null} a new session replaced a lost one (`reason`: why it was lost) */
    this.onrestart = null
    /** The transport in use, and which kind it is once the first connection settled it. */
    this.transport = null
    this.kind = this.mode === 'auto' ? null : this.mode
    /** The client's initialize request (replayed for a new session) and whether it finished. */
    this.initialize = null
    this.initialized = false
    /** Requests sent and not answered, by the upstream id's key: key -> { id, idJson, clientKey, method, transport, abort } */
    this.outstanding = new Map()
    /** The upstream id of each outstanding request, by the client's id (its exact text). */
    this.upstreamIds = new Map()
    this.requestSeq = 0
    /** The proxy's own requests (a replayed initialize): key -> resolve(answer) */
    this.internal = new Map()
    /** A reconnection in progress (a promise), or the reason the last one gave up. */
    this.reconnecting = null
    this.down = null
    this.closed = false
    this.authProblem = null
    this.opening = null
    /** The last error the transport reported about a stream: the cause named when one ends unanswered. */
    this.lastStreamError = null
    /** The agent just cut a response over the cap. */
    this.cut = false
    /** The transport whose standalone event stream may just have given up resuming. */
    this.resumeGaveUp = null
    this.lastLogged = null
    this.paused = false
    this.held = []
  }

  async start() {
    // Process-wide, so that the SDK's fetches (the HTTP+SSE transport's EventSource too) use it.
    setGlobalDispatcher(httpAgent(this.maxMessageBytes, process.env, () => (this.cut = true)))
    if (this.url.protocol === 'http:' && !isLoopback(this.url.hostname)) {
      log(`warning: --upstream-url ${this.shownUrl} is plain http to another host: requests and headers travel unencrypted`)
    }
  }

  /**
   * Sends one message, the JSON text the client wrote (a string or a Buffer, already checked by
   * the proxy). A request goes under the proxy's own id; one that can no longer be answered
   * gets a -32000 error line, as if from the upstream. Never asks the proxy to wait (always true).
   */
  send(message) {
    const text = message.toString()
    const msg = JSON.parse(text)
    if (isRequest(msg)) {
      const idJson = /** @type {string} */ (idJsonIn(text, msg))
      const id = ++this.requestSeq
      const entry = { id, idJson, clientKey: idKeyOfJson(idJson), method: msg.method, transport: null, abort: new AbortController() }
      if (this.closed) {
        this.answerError(entry, 'the proxy is shutting down')
        return true
      }
      msg.id = id
      const key = idKey(id)
      this.outstanding.set(key, entry)
      this.upstreamIds.set(entry.clientKey, id)
      this.deliver(msg, entry).catch((err) => this.fail(key, err.upstreamMessage ?? describeError(err)))
      return true
    }
    let cancelled = null
    if (msg?.method === 'notifications/cancelled' && msg.params?.requestId !== undefined) {
      // The upstream knows the request by the proxy's id. It may now never answer; the proxy
      // owes the client nothing for it either.
      const requestIdJson = typeof msg.params.requestId === 'string' ? JSON.stringify(msg.params.requestId) : memberText(memberText(text, 'params') ?? '{}', 'requestId')
      const id = requestIdJson === undefined ? undefined : this.upstreamIds.get(idKeyOfJson(requestIdJson))
      // A request already answered (or never sent) is nothing the upstream could cancel, and
      // the client's number may be the proxy's id of another request there: dropped.
      if (id === undefined) return true
      msg.params.requestId = id
      cancelled = this.outstanding.get(idKey(id))
      this.forget(idKey(id))
    }
    if (msg?.method === 'notifications/initialized') this.initialized = true
    if (this.closed) return true
    this.deliver(msg, null)
      .catch((err) => {
        if (!err.logged) log(`could not send ${msg?.method ?? 'a response'} to the upstream: ${describeError(err)}`)
      })
      // Once the server has the cancellation, the request's stream is of no more use.
      .finally(() => cancelled?.abort.abort())
    return true
  }

  /** Tells the client that `entry` will not be answered: a -32000 error response at its id. */
  answerError(entry, message) {
    this.toClientLine(`{"jsonrpc":"2.0","id":${entry.idJson},"error":${JSON.stringify({ code: UPSTREAM_GONE, message })}}`)
  }

  /** A message from the upstream for the client; an answer to a request gets the client's id text. */
  toClient(msg, entry) {
    const line = JSON.stringify(msg)
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
  async deliver(msg, entry) {
    if (msg?.method === 'initialize' && isRequest(msg)) this.initialize = msg
    if (await this.connected(msg, entry)) return // the new connection carried msg (the first initialize)
    try {
      await this.post(this.transport, msg, entry)
    } catch (err) {
      // A message the upstream never received (refused connection, unknown session) goes out
      // once more on the new connection.
      if (!err.notDelivered || !this.reconnecting) throw err
      await this.reconnecting
      if (!this.transport) throw upstreamFailure(`upstream MCP server unreachable: ${this.down}`)
      await this.post(this.transport, msg, entry)
    }
  }

  /**
   * Resolves once there is a transport. The very first message (initialize) opens it and is
   * carried by it: then this resolves true.
   */
  async connected(msg, entry) {
    if (this.transport && !this.reconnecting) return false
    if (this.reconnecting) {
      await this.reconnecting
      if (!this.transport) throw upstreamFailure(`upstream MCP server unreachable: ${this.down}`)
      return false
    }
    if (this.opening) {
      await this.opening.catch(() => {})
      return this.connected(msg, entry)
    }
    if (this.down) {
      // A reconnection gave up earlier: a new message tries again.
      this.reconnect(this.down)
      return this.connected(msg, entry)
    }
    this.opening = this.openWithRetry(msg, entry)
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
  async openWithRetry(first, entry) {
    const deadline = Date.now() + this.retryMs
    let delay = RETRY_FIRST_MS
    for (let told = false; ; ) {
      try {
        return await this.open(first, entry)
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
  async open(first, entry) {
    if (this.kind !== 'sse') {
      const transport = this.createTransport('streamable-http')
      await transport.start()
      try {
        await this.post(transport, first, entry)
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
        await transport.start()
      } catch (err) {
        throw this.httpFailure(err, 'opening the SSE stream', transport, null)
      }
      await this.post(transport, first, entry)
    } catch (err) {
      await transport.close().catch(() => {})
      throw err
    }
    this.kind = 'sse'
    return transport
  }

  createTransport(kind) {
    // undici's fetch is the WHATWG fetch the SDK expects; only its types are undici's own.
    const opts = { requestInit: { headers: { ...this.headers } }, fetch: /** @type {typeof fetch} */ (/** @type {unknown} */ (undiciFetch)) }
    const transport = kind === 'sse' ? new SSEClientTransport(this.url, opts) : new StreamableHTTPClientTransport(this.url, { ...opts, reconnectionOptions: RESUME })
    transport.onmessage = (msg) => this.received(transport, msg)
    transport.onerror = (err) => this.transportError(transport, err)
    transport.onclose = () => {}
    return transport
  }

  /**
   * Posts msg on `transport`. A request's response stream, when it ends (after the SDK's own
   * resumption), tells streamEnded; cancelling it aborts that stream.
   */
  async post(transport, msg, entry) {
    if (entry) entry.transport = transport
    const options = entry ? { requestSignal: entry.abort.signal, onRequestStreamEnd: () => this.streamEnded(entry, transport) } : undefined
    try {
      await transport.send(msg, options)
    } catch (err) {
      throw this.httpFailure(err, `posting ${msg?.method ?? 'a response'}`, transport, msg)
    }
  }

  /**
   * A request's response stream ended. Still unanswered, it never will be: it gets an error
   * naming the stream's last trouble, and a stream broken for good means the upstream is lost.
   */
  streamEnded(entry, transport) {
    if (this.resumeGaveUp === transport) this.resumeGaveUp = null // that was this stream's
    const key = idKey(entry.id)
    if (this.outstanding.get(key) !== entry) return
    const trouble = this.lastStreamError
    this.lastStreamError = null
    if (trouble?.broken && transport === this.transport && !this.closed) {
      entry.broke = `connection broke (${trouble.text})`
      this.reconnect(trouble.text)
      return
    }
    const why = !trouble ? 'closed its response stream' : trouble.broken ? `connection broke (${trouble.text})` : `sent ${trouble.text}`
    this.fail(key, `upstream MCP server ${why} before answering ${entry.method}`)
  }

  /** Fails one outstanding request with `message` (the client gets -32000 with it). */
  fail(key, message) {
    const entry = this.outstanding.get(key)
    if (!entry) return
    this.forget(key)
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
  httpFailure(err, what, transport, msg) {
    if (err.upstreamMessage) return err
    if (isTooLarge(err)) {
      this.cut = false
      const failure = upstreamFailure(`upstream answered ${what} with a body of more than ${this.maxMessageBytes} bytes (dropped)`)
      log(failure.message)
      return failure
    }
    if (err?.name === 'ZodError' || err instanceof SyntaxError) {
      // transportError, which the SDK told first, logged it.
      return upstreamFailure(`upstream answered ${what} with a message that is not JSON-RPC (dropped)`)
    }
    const status = httpStatus(err)
    if (status === 401 || status === 403) {
      const text = `upstream ${this.shownUrl} refused the credentials: HTTP ${status} ${err.data?.statusText || (status === 401 ? 'Unauthorized' : 'Forbidden')} (check --header)`
      if (this.authProblem !== text) log(text)
      this.authProblem = text
      return upstreamFailure(text)
    }
    if (status >= 400) {
      const statusText = err.data?.statusText
      const failure = upstreamFailure(`upstream ${this.shownUrl} answered HTTP ${status}${statusText ? ` ${statusText}` : ''} on ${what}`)
      failure.httpStatus = status
      if (status === 404 && transport === this.transport && transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
        // The spec's word for a session the server no longer knows: start a new one.
        failure.notDelivered = true
        this.reconnect(`the session expired (HTTP 404 on ${what})`, msg)
        return failure
      }
      const answer = errorAnswer(err.data?.text, msg)
      if (answer) {
        // The server answered with an HTTP error holding a JSON-RPC error: that is the answer.
        const key = idKey(msg.id)
        const entry = this.outstanding.get(key)
        this.forget(key)
        if (entry) setImmediate(() => this.toClient(answer, entry))
        return failure
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
    failure.retryable = RETRYABLE.has(err?.cause?.code) || (err instanceof SseError && /ECONNREFUSED|ECONNRESET|other side closed|fetch failed/.test(err.message))
    if (transport === this.transport && this.transport) this.reconnect(reason, failure.notDelivered ? msg : null)
    return failure
  }

  received(transport, msg) {
    // Whatever broke before, this stream carries messages again.
    this.lastStreamError = null
    if (isResponse(msg) && 'id' in msg) {
      const key = idKey(msg.id)
      const internal = this.internal.get(key)
      if (internal) {
        this.internal.delete(key)
        internal(msg)
        return
      }
      const entry = this.outstanding.get(key)
      if (!entry) {
        // Never the client's: its id is the proxy's.
        log(`dropped the upstream's answer to a request already failed or cancelled (upstream id ${JSON.stringify(msg.id)})`)
        return
      }
      this.forget(key)
      if (entry.method === 'initialize' && typeof msg.result?.protocolVersion === 'string') transport.setProtocolVersion?.(msg.result.protocolVersion)
      this.toClient(msg, entry)
      return
    }
    this.toClient(msg, null)
  }

  transportError(transport, err) {
    if (this.closed || transport !== this.transport) return
    const text = describeError(err)
    if (err?.name === 'ZodError' || err instanceof SyntaxError) {
      // On a stream: the SDK dropped it; the request it answered fails when its stream ends.
      this.lastStreamError = { text: 'a message that is not JSON-RPC (dropped)', broken: false }
      // A schema error's message is its issues as JSON: their own messages say it in a line.
      const why = Array.isArray(err.issues) ? err.issues.map((issue) => issue.message).join('; ') : text.split('\n')[0]
      log(`upstream sent a message that is not a JSON-RPC message (dropped): ${why}`)
      return
    }
    if (transport instanceof SSEClientTransport && err instanceof SseError) {
      // HTTP+SSE carries every answer on its one stream: without it nothing pending can come.
      this.reconnect(`the SSE stream broke: ${text}`)
      return
    }
    if (/^SSE stream disconnected: /.test(text) && this.cut) {
      // The agent cut it (over the cap): the stream's request fails, the connection is fine.
      this.cut = false
      this.lastStreamError = { text: `a response stream of more than ${this.maxMessageBytes} bytes (cut)`, broken: false }
      log(`upstream sent ${this.lastStreamError.text}: its request gets an error`)
      return
    } else if (/^SSE stream disconnected: |^Failed to reconnect SSE stream: /.test(text)) {
      this.lastStreamError = { text: text.replace(/^SSE stream disconnected: /, ''), broken: true }
    }
    if (/^Maximum reconnection attempts/.test(text)) {
      // A request's stream reports its end right after (streamEnded); the session's own event
      // stream does not, and without it the session is deaf.
      this.resumeGaveUp = transport
      const why = this.lastStreamError?.text
      setImmediate(() => {
        if (this.resumeGaveUp !== transport) return
        this.resumeGaveUp = null
        this.reconnect(`its event stream broke and could not be resumed${why ? `: ${why}` : ''}`)
      })
      return
    }
    // Errors of a send are reported through its promise; the rest (a stream that broke and is
    // being resumed) in one line, once while it repeats.
    if (!/^SSE stream disconnected/.test(text)) return
    const line = `upstream event stream broke (${this.lastStreamError?.text}): resuming it`
    if (line !== this.lastLogged) log(line)
    this.lastLogged = line
  }

  /**
   * The upstream is lost (`reason`): every request waiting on the old connection is failed,
   * then new connections are tried with backoff for `retryMs`; messages sent meanwhile wait, and
   * so does the one that found the upstream gone (`except`) when the upstream never received it.
   * @param {string} reason
   * @param {any} [except]
   */
  reconnect(reason, except = null) {
    if (this.reconnecting || this.closed) return this.reconnecting
    const old = this.transport
    this.transport = null
    this.down = null
    for (const [key, entry] of [...this.outstanding]) {
      if (!entry.transport || entry.transport !== old || (except && isRequest(except) && idKey(except.id) === key)) continue
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
        // A new session is a restart for the agent: what the old one held (uids, pages) is gone.
        this.onrestart?.(reason)
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
    const transport = this.createTransport(this.kind ?? 'streamable-http')
    if (!this.initialize) {
      await transport.start()
      return transport
    }
    const id = `mcp-snapshot-filter/reinitialize/${++this.requestSeq}`
    const key = idKey(id)
    let timer
    const answer = new Promise((resolve, reject) => {
      this.internal.set(key, resolve)
      timer = setTimeout(() => reject(new Error('no answer to initialize')), REINITIALIZE_MS)
    })
    try {
      await transport.start()
      // The answer may come on the POST's own stream: until then this transport is not current.
      await Promise.all([this.post(transport, { ...this.initialize, id }, null), answer])
      const response = await answer
      if (response.error) throw new Error(`initialize failed: ${response.error.message}`)
      if (typeof response.result?.protocolVersion === 'string') transport.setProtocolVersion?.(response.result.protocolVersion)
      if (this.initialized) await this.post(transport, { jsonrpc: '2.0', method: 'notifications/initialized' }, null)
      return transport
    } catch (err) {
      transport.close().catch(() => {})
      throw err
    } finally {
      clearTimeout(timer)
      this.internal.delete(key)
    }
  }

  async close() {
    if (this.closed) return
    this.closed = true
    for (const key of [...this.outstanding.keys()]) this.fail(key, 'the proxy is shutting down')
    const transport = this.transport
    this.transport = null
    if (!transport) return
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      // The server may free the session at once rather than when it times out.
      const timer = new Promise((resolve) => setTimeout(resolve, CLOSE_MS).unref?.())
      await Promise.race([transport.terminateSession().catch(() => {}), timer])
    }
    await transport.close().catch(() => {})
  }
}

/** The JSON-RPC error an HTTP error's body holds for the request `msg`, or null. */
function errorAnswer(body, msg) {
  if (typeof body !== 'string' || !isRequest(msg)) return null
  try {
    const parsed = JSON.parse(body)
    if (parsed && parsed.jsonrpc === '2.0' && parsed.error && typeof parsed.error.code === 'number' && parsed.id === msg.id) return parsed
  } catch {
    // not JSON: the status alone tells
  }
  return null
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

module.exports = { HttpUpstream, fromOptions, httpAgent, trustedCertificates, parseHeaders, redactUrl, isLoopback, describeError }
