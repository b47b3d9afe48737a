// @ts-check
'use strict'

// Serve mode (`--port N`): the proxy as a Streamable HTTP server at /mcp, one upstream shared by
// many clients. Each client's MCP session is the official SDK's server transport
// (WebStandardStreamableHTTPServerTransport, used plainly: handleRequest / onmessage / send),
// with a Proxy of its own (bin/proxy.js, as on stdio) and a FilterSession of its own, so the
// snapshots, deltas and cut texts one client holds are never another's. The Proxies do not own
// the upstream: each gets a view of it (SharedUpstream.view) with the interface of
// bin/upstream-stdio.js.
//
// Ids: every client request goes upstream under an id of the proxy's (1, 2, 3…, one counter for
// all clients), so two clients' id 1 never meet upstream; the answer goes back under the
// client's id. Progress tokens are renamed the same way (SDK clients use their request id as
// the token). What the upstream sends that answers no request: progress to the client whose
// token it names, a request of the upstream's (sampling, elicitation, roots, ping) to the one
// client with requests in flight (else the last one heard from), other notifications to every
// client.

const http = require('node:http')
const crypto = require('node:crypto')
const { Readable, PassThrough, Writable } = require('node:stream')

const { LineBuffer } = require('./line-buffer.js')
const { readLine, readMessage, idKey, idKeyOfJson } = require('./jsonrpc.js')
const { log } = require('./log.js')

const PATH = '/mcp'
// How often idle sessions are looked for (a session idles out within this of its timeout).
const IDLE_SWEEP_MS = 1000

/** The hostnames of loopback binds, for which the Host header is checked too (DNS rebinding). */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/**
 * One upstream, many Proxies: routes each upstream message to the client it belongs to.
 * `upstream` has the interface of bin/upstream-stdio.js.
 */
class SharedUpstream {
  constructor(upstream) {
    this.upstream = upstream
    /** Proxy id -> the view whose client sent that request. */
    this.owners = new Map()
    /** Proxy progress token -> { view, token (the client's), idJson (the proxy id's text) }. */
    this.progress = new Map()
    /** The upstream's own requests -> the view they went to (for a cancellation of one). */
    this.asked = new Map()
    this.views = new Set()
    this.lastActive = null
    this.nextId = 1
    this.onclose = () => {}
  }

  async start() {
    this.upstream.online = (line) => this.route(line)
    this.upstream.onerror = (err) => log(`upstream ${err.name === 'MessageLineError' ? `printed a line that is not a JSON-RPC message (${err.bytes} bytes, dropped): ${err.message}` : `transport error: ${err.message}`}`)
    this.upstream.ondrain = () => this.views.forEach((v) => v.ondrain())
    this.upstream.onbroken = (what) => this.views.forEach((v) => v.onbroken(what))
    this.upstream.onclose = () => {
      this.gone = true
      for (const view of [...this.views]) view.onclose()
      this.onclose()
    }
    await this.upstream.start()
  }

  /** A fresh proxy id for a request of `view`'s client. */
  claim(view) {
    const id = this.nextId++
    this.owners.set(id, view)
    return id
  }

  /** The upstream interface one Proxy sees: sends go to the shared upstream, lines come routed. */
  view() {
    const shared = this
    const view = {
      online: (_line) => {},
      onerror: (_err) => {},
      ondrain: () => {},
      onbroken: (_what) => {},
      onclose: () => {},
      start: async () => {
        if (shared.gone) throw new Error('the upstream is gone')
      },
      send: (line) => shared.upstream.send(line),
      // One client not reading must not stall the others: its answers queue in its HTTP streams.
      pause: () => {},
      resume: () => {},
      /** Detaches this client only; the upstream stays for the others. */
      close: async () => shared.detach(view),
      exitDescription: () => shared.upstream.exitDescription(),
      get exitCode() {
        return shared.upstream.exitCode
      },
      /** Requests of this client in flight upstream. */
      inFlight: 0,
    }
    this.views.add(view)
    return view
  }

  detach(view) {
    this.views.delete(view)
    for (const [id, owner] of this.owners) if (owner === view) this.owners.delete(id)
    for (const [token, entry] of this.progress) if (entry.view === view) this.progress.delete(token)
    for (const [key, owner] of this.asked) if (owner === view) this.asked.delete(key)
    if (this.lastActive === view) this.lastActive = null
  }

  route(line) {
    let read
    try {
      read = readLine(line.toString('utf8'), line.length)
    } catch (err) {
      this.upstream.onerror(err)
      return
    }
    if (!('batch' in read)) return this.routeOne(read, line)
    for (const element of read.batch) {
      try {
        this.routeOne(readMessage(element), Buffer.from(element))
      } catch (err) {
        this.upstream.onerror(err)
      }
    }
    return undefined
  }

  routeOne(m, line) {
    if (m.isResponse) {
      const view = typeof m.msg.id === 'number' ? this.owners.get(m.msg.id) : undefined
      if (!view) {
        log(`upstream answered request ${m.idJson} that no client has in flight (dropped)`)
        return
      }
      this.owners.delete(m.msg.id)
      view.online(line)
      return
    }
    if (m.isRequest) {
      const view = this.askWhom()
      if (!view) {
        log(`upstream request ${m.method} while no client is connected (dropped)`)
        return
      }
      this.asked.set(m.key, view)
      view.online(line)
      return
    }
    if (m.method === 'notifications/progress') {
      const entry = this.progress.get(JSON.stringify(m.msg.params?.progressToken))
      if (entry) entry.view.online(line)
      return
    }
    if (m.method === 'notifications/cancelled') {
      // The upstream gives up on a request of its own: only the client it went to hears of it.
      const requestId = m.msg.params?.requestId
      const json = typeof requestId === 'string' ? JSON.stringify(requestId) : m.paramText('requestId')
      const view = json === undefined ? undefined : this.asked.get(idKeyOfJson(json))
      if (view) return view.online(line)
    }
    for (const view of this.views) view.online(line)
    return undefined
  }

  /** Who a request of the upstream's goes to: the one client waiting on it, else the last heard. */
  askWhom() {
    const waiting = [...this.views].filter((v) => v.inFlight > 0)
    if (waiting.length === 1) return waiting[0]
    return this.lastActive ?? [...this.views].at(-1) ?? null
  }
}

/**
 * One client's MCP session: the SDK's server transport in front of a Proxy of its own. Client
 * messages reach the Proxy as lines on its stdin (requests under proxy ids); what the Proxy
 * writes to its stdout goes back through the transport under the client's ids.
 */
class ClientConnection {
  constructor({ shared, makeProxy, sdk, onend }) {
    this.shared = shared
    this.view = shared.view()
    this.onend = onend
    this.lastSeen = Date.now()
    /** Proxy id (number) -> the client's id (as the SDK parsed it). */
    this.clientIds = new Map()
    /** The client's request id (JSON text) -> proxy id, for its cancellations. */
    this.proxyIds = new Map()
    /** Proxy ids of requests the client cancelled (no longer counted in flight). */
    this.cancelledIds = new Set()
    this.ended = false
    this.stdin = new PassThrough()
    this.out = new LineBuffer()
    const stdout = new Writable({
      write: (chunk, _encoding, done) => {
        this.out.append(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
        this.out.drain(
          (l) => this.toClient(l),
          (err) => log(`serve: an answer for the client could not be read: ${err.message}`),
        )
        done()
      },
    })
    this.transport = new sdk.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
    })
    this.transport.onmessage = (message) => this.fromClient(message)
    this.transport.onerror = (err) => log(`serve: client transport error: ${err.message}`)
    // DELETE, or the transport closed by us.
    this.transport.onclose = () => this.end('the client ended its session')
    // Made at the first message: a request the transport refuses (no initialize, too big) opens
    // no session and so starts no Proxy (nor logs its summary).
    this.makeProxy = () => makeProxy({ upstream: this.view, stdin: this.stdin, stdout, exit: () => this.end(null) })
    this.proxy = null
  }

  async start() {
    await this.transport.start()
  }

  fromClient(message) {
    if (!this.proxy) {
      this.proxy = this.makeProxy()
      // Until it listens, what is written to its stdin waits in the stream.
      this.proxy.start().catch((err) => log(`serve: a client's proxy did not start: ${err.message}`))
    }
    this.lastSeen = Date.now()
    this.shared.lastActive = this.view
    const m = /** @type {any} */ (message)
    let out = m
    if (typeof m.method === 'string' && m.id !== undefined) {
      const id = this.shared.claim(this.view)
      this.clientIds.set(id, m.id)
      this.proxyIds.set(JSON.stringify(m.id), id)
      this.view.inFlight++
      out = { ...m, id }
      const token = m.params?._meta?.progressToken
      if (token !== undefined) {
        this.shared.progress.set(JSON.stringify(id), { view: this.view, token, requestId: m.id })
        out.params = { ...m.params, _meta: { ...m.params._meta, progressToken: id } }
      }
    } else if (m.method === 'notifications/cancelled' && m.params?.requestId !== undefined) {
      const id = this.proxyIds.get(JSON.stringify(m.params.requestId))
      if (id === undefined) return
      out = { ...m, params: { ...m.params, requestId: id } }
      // The client awaits it no more: an upstream that never answers it keeps no session alive.
      if (!this.cancelledIds.has(id)) {
        this.cancelledIds.add(id)
        this.view.inFlight = Math.max(0, this.view.inFlight - 1)
      }
    } else if (m.method === undefined && m.id !== undefined) {
      // The client's answer to a request of the upstream's: that request is done.
      this.shared.asked.delete(idKey(m.id, JSON.stringify(m.id)))
    }
    this.stdin.write(`${JSON.stringify(out)}\n`)
  }

  toClient(line) {
    let m
    try {
      m = JSON.parse(line.toString('utf8'))
    } catch (err) {
      log(`serve: an answer for the client is not JSON (dropped): ${err.message}`)
      return
    }
    const related = []
    for (const message of Array.isArray(m) ? m : [m]) {
      const isResponse = message.method === undefined && ('result' in message || 'error' in message)
      let relatedRequestId
      if (isResponse && typeof message.id === 'number' && this.clientIds.has(message.id)) {
        const proxyId = message.id
        message.id = this.clientIds.get(proxyId)
        relatedRequestId = message.id
        this.clientIds.delete(proxyId)
        this.proxyIds.delete(JSON.stringify(message.id))
        this.shared.progress.delete(JSON.stringify(proxyId))
        // An answer the Proxy wrote itself (its tools) never went upstream.
        this.shared.owners.delete(proxyId)
        if (!this.cancelledIds.delete(proxyId)) this.view.inFlight = Math.max(0, this.view.inFlight - 1)
      } else if (message.method === 'notifications/progress') {
        const entry = this.shared.progress.get(JSON.stringify(message.params?.progressToken))
        if (entry) {
          message.params = { ...message.params, progressToken: entry.token }
          relatedRequestId = entry.requestId
        }
      } else if (!isResponse) {
        // Sampling, elicitation, logging during a call: on that call's stream when it is the
        // only one in flight (the upstream on stdio says nothing of which request it is for).
        const waiting = [...this.clientIds.values()]
        if (waiting.length === 1) relatedRequestId = waiting[0]
      }
      related.push([message, relatedRequestId])
    }
    for (const [message, relatedRequestId] of related) {
      this.transport.send(message, relatedRequestId === undefined ? undefined : { relatedRequestId }).catch((err) => log(`serve: could not send to the client: ${err.message}`))
    }
  }

  /** Ends this client's session (idempotent): its Proxy, its state, its transport. */
  end(why) {
    if (this.ended) return
    this.ended = true
    if (why) log(`serve: session ${this.transport.sessionId ?? '(none)'} ended: ${why}`)
    this.stdin.end()
    this.shared.detach(this.view)
    this.transport.close().catch(() => {})
    this.onend(this)
  }
}

/** The Web Request of a Node request (its body streamed as it comes). */
function webRequest(req, base) {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((v) => headers.append(name, v))
    else if (value !== undefined) headers.set(name, value)
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
  return new Request(new URL(req.url ?? '/', base), {
    method: req.method,
    headers,
    body: hasBody ? /** @type {any} */ (Readable.toWeb(req)) : undefined,
    // @ts-ignore: Node's fetch needs it for a streamed body
    duplex: 'half',
  })
}

/** Writes a Web Response to a Node response; a client that goes away cancels its stream. */
async function writeResponse(response, res) {
  const headers = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  res.writeHead(response.status, headers)
  if (!response.body) {
    res.end()
    return
  }
  const body = Readable.fromWeb(/** @type {any} */ (response.body))
  res.once('close', () => body.destroy())
  body.on('error', () => res.destroy())
  body.pipe(res)
}

function jsonRpcError(status, code, message, extra = {}) {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), { status, headers: { 'content-type': 'application/json', ...extra } })
}

/** Compares a bearer token in constant time (digests of equal length). */
function tokenMatches(given, expected) {
  const a = crypto.createHash('sha256').update(given).digest()
  const b = crypto.createHash('sha256').update(expected).digest()
  return crypto.timingSafeEqual(a, b)
}

/**
 * Starts serving. Resolves with { server, url, close() } once listening.
 * @param {object} opts
 * @param {object} opts.upstream the one upstream (interface of bin/upstream-stdio.js)
 * @param {(io: {upstream: object, stdin: NodeJS.ReadableStream, stdout: import('node:stream').Writable, exit: (code: number) => void}) => import('./proxy.js').Proxy} opts.makeProxy
 *   a Proxy with a FilterSession of its own, on the given view of the upstream and streams
 * @param {number} opts.port
 * @param {string} opts.host
 * @param {string[]} [opts.allowedOrigins] Origin hostnames allowed besides localhost's
 * @param {string} [opts.token] bearer token every request must carry
 * @param {number} [opts.idleSeconds] a session unheard of this long is ended (0: never)
 * @param {(code: number) => void} [opts.exit] called when the upstream is gone
 */
async function serve(opts) {
  const sdk = require('@modelcontextprotocol/server')
  const shared = new SharedUpstream(opts.upstream)
  await shared.start()
  /** @type {Map<string, ClientConnection>} */
  const sessions = new Map()
  const loopback = LOOPBACK.has(opts.host)
  const origins = [...sdk.localhostAllowedOrigins(), ...(loopback ? [] : [opts.host]), ...(opts.allowedOrigins ?? [])]
  const base = `http://${opts.host.includes(':') && !opts.host.startsWith('[') ? `[${opts.host}]` : opts.host}:${opts.port}`

  async function handle(req) {
    const request = webRequest(req, base)
    if (new URL(request.url).pathname !== PATH) return new Response('not found: the MCP endpoint is /mcp\n', { status: 404 })
    if (opts.token !== undefined) {
      const given = /^Bearer (.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]
      if (given === undefined || !tokenMatches(given, opts.token)) return jsonRpcError(401, -32001, 'Unauthorized: a bearer token is required', { 'www-authenticate': 'Bearer' })
    }
    // DNS rebinding: a page elsewhere must not reach a loopback server through its own name.
    const badHost = loopback ? sdk.hostHeaderValidationResponse(request, sdk.localhostAllowedHostnames()) : undefined
    if (badHost) return badHost
    const badOrigin = sdk.originValidationResponse(request, origins)
    if (badOrigin) return badOrigin
    const sessionId = request.headers.get('mcp-session-id')
    if (sessionId) {
      const client = sessions.get(sessionId)
      if (!client) return jsonRpcError(404, -32001, 'Session not found')
      client.lastSeen = Date.now()
      return client.transport.handleRequest(request)
    }
    if (request.method !== 'POST') return jsonRpcError(400, -32000, 'Bad Request: no valid session id')
    const client = new ClientConnection({ shared, makeProxy: opts.makeProxy, sdk, onend: (c) => sessions.delete(c.transport.sessionId ?? '') })
    await client.start()
    const response = await client.transport.handleRequest(request)
    // Not an initialize request: no session came of it.
    if (client.transport.sessionId === undefined) client.end(null)
    else {
      sessions.set(client.transport.sessionId, client)
      log(`serve: session ${client.transport.sessionId} started`)
    }
    return response
  }

  const server = http.createServer((req, res) => {
    handle(req)
      .then((response) => writeResponse(response, res))
      .catch((err) => {
        log(`serve: request failed: ${err.stack ?? err}`)
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' })
        res.end()
      })
  })
  // A session unheard of for idleSeconds ends, unless a call of its client is still in flight
  // (a long call is no vanished client): the sweep never cuts a call.
  const sweepIdle = () => {
    const now = Date.now()
    for (const client of sessions.values()) {
      if (client.view.inFlight === 0 && now - client.lastSeen > /** @type {number} */ (opts.idleSeconds) * 1000) client.end(`idle for more than ${opts.idleSeconds} s`)
    }
  }
  const sweep = opts.idleSeconds ? setInterval(sweepIdle, IDLE_SWEEP_MS) : null
  sweep?.unref()

  let closing = null
  const close = (code) => {
    if (closing) return closing
    clearInterval(sweep ?? undefined)
    closing = (async () => {
      for (const client of [...sessions.values()]) client.end(null)
      server.closeAllConnections?.()
      await new Promise((resolve) => server.close(() => resolve(undefined)))
      await opts.upstream.close().catch(() => {})
      opts.exit?.(code)
    })()
    return closing
  }
  shared.onclose = () => {
    // Stopping it ourselves (close) is no news.
    if (closing) return
    log(`upstream exited (${opts.upstream.exitDescription()}): serving stops`)
    const code = typeof opts.upstream.exitCode === 'number' && opts.upstream.exitCode !== 0 ? opts.upstream.exitCode : 1
    close(code)
  }
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port, opts.host, () => resolve(undefined))
  })
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  log(`serving MCP over Streamable HTTP at http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${address.port}${PATH}`)
  return { server, sessions, port: address.port, close }
}

module.exports = { serve, SharedUpstream, PATH }
