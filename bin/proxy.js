// @ts-check
'use strict'

// The proxy: forwards every JSON-RPC message between the client (our stdin/stdout) and the
// upstream untouched, as the very text that came, except the responses to requests it chose to
// rewrite, tracked by the request id's exact JSON text. It forwards lines, not parsed messages,
// on purpose: the SDK's high-level Server/Client swallow logging/setLevel, replace progress
// tokens, time out after 60 s and drop unknown fields, and its stdio transports JSON.parse and
// re-serialize every message (numbers beyond 2^53 or 1e400 change; lines over 10 MB are
// refused; docs/decisions/0001-stdio-framing.md). So both sides are plain streams here:
// bin/line-buffer.js splits them; each upstream line crosses into the native session once
// (routeResponse reads a response's envelope and filters it); bin/jsonrpc.js reads the client's
// messages and what that reader does not take; the upstream is any object with the small
// interface described in bin/upstream-stdio.js (send / online / pause / resume / close).

const { LineBuffer } = require('./line-buffer.js')
const { readLine, readMessage, idKeyOfJson } = require('./jsonrpc.js')
const { StdioUpstream, SHUTDOWN_STEP_MS } = require('./upstream-stdio.js')
const { log } = require('./log.js')

// JSON-RPC error codes the proxy itself answers with.
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const UPSTREAM_GONE = -32000

// An upstream's stdout ends (and writes to its stdin fail) just before it exits; when the process
// is still there this long after, it lives on but can never answer again.
const UNREACHABLE_GRACE_MS = 1000
// How long a call of the proxy's own tools waits for a snapshot of its page still in flight
// (it then answers from what is cached).
const SNAPSHOT_WAIT_MS = 10000
// Cancelled requests whose late answer is still awaited (to filter and cache it), at most.
const MAX_CANCELLED = 1024

/** A response the proxy writes itself; `idJson` is the request id's exact text. */
function errorLine(idJson, code, message) {
  return `{"jsonrpc":"2.0","id":${idJson ?? 'null'},"error":${JSON.stringify({ code, message })}}`
}

/** The `pageId` of a call's arguments as the snapshot cache keys it, or undefined. */
function pageOf(argumentsJson) {
  if (!argumentsJson) return undefined
  try {
    const page = JSON.parse(argumentsJson)?.pageId
    return typeof page === 'string' || typeof page === 'number' ? String(page) : undefined
  } catch {
    return undefined
  }
}

class Proxy {
  /**
   * @param {object} opts
   * @param {string | null} [opts.command] upstream executable (for the default stdio upstream)
   * @param {string[]} [opts.args] upstream arguments
   * @param {object} [opts.upstream] an upstream with the interface of StdioUpstream (instead of command/args)
   * @param {import('../index').FilterSession} opts.session native filter session: every upstream
   *   line goes to its `routeResponse` once, which reads the envelope and filters what it answers
   * @param {(code: number) => void} [opts.exit] called once, when the proxy is done
   * @param {NodeJS.ReadableStream} [opts.stdin]
   * @param {import('node:stream').Writable} [opts.stdout]
   * @param {boolean} [opts.filtering] false: forward every response untouched (level off)
   * @param {(tool: string) => boolean} [opts.isFilteredTool] which tools' results the filter
   *   rewrites whatever their size (a call of the proxy's own tools waits for such a call of its
   *   page still in flight)
   * @param {{has(name: string): boolean, answer(name: string, argumentsJson: string, metaJson: string | null): string}} [opts.localTools]
   *   tools the proxy answers itself (expand_snapshot, search_snapshot): `answer` returns the
   *   response's `"result":…` or `"error":…` member in the request's era (crates/core/src/era.rs)
   * @param {number} [opts.snapshotWaitMs] how long a call of those waits for a snapshot in flight
   */
  constructor(opts) {
    this.command = opts.command
    this.args = opts.args
    this.upstream = opts.upstream ?? null
    this.session = opts.session
    this.exit = opts.exit ?? ((code) => process.exit(code))
    this.stdin = opts.stdin ?? process.stdin
    this.stdout = opts.stdout ?? process.stdout
    this.filtering = opts.filtering ?? true
    /** Which tools' results the filter rewrites whatever their size (all, when not given). */
    this.isFilteredTool = opts.isFilteredTool ?? (() => true)
    /** Client requests waiting for the upstream's answer, the one map of them: id key (the id's exact text) -> { idJson, method, tool, argumentsJson } */
    this.pending = new Map()
    /** Requests the proxy answers itself (its own tools), by tool name. */
    this.localTools = opts.localTools ?? null
    this.closing = null
    this.upstreamExited = false
    this.snapshotWaitMs = opts.snapshotWaitMs ?? SNAPSHOT_WAIT_MS
    /** Keys of cancelled requests still in `pending`, oldest first. */
    this.cancelled = []
    this.clientLines = new LineBuffer()
    /** The client's stdout is full: upstream reading is paused until it drains. */
    this.clientBlocked = false
  }

  async start() {
    // Without an upstream object, cli.js always names a command.
    this.upstream ??= new StdioUpstream({ command: /** @type {string} */ (this.command), args: this.args ?? [] })
    this.upstream.online = (line) => this.fromUpstreamLine(line)
    this.upstream.onerror = (err) => this.upstreamError(err)
    this.upstream.ondrain = () => this.stdin.resume()
    this.upstream.onbroken = (what) => this.upstreamMayBeUnreachable(what)
    this.upstream.onclose = () => this.upstreamClosed()
    try {
      await this.upstream.start()
    } catch (err) {
      log(`cannot start upstream ${JSON.stringify(this.command)}: ${err.message}`)
      // The client (which started us) is told why in the answer to its first request, else all
      // it can say is "failed to connect"; then the proxy exits 1.
      this.startFailure = `upstream MCP server ${JSON.stringify(this.command)} could not be started (${err.message})`
      this.upstream = null
    }
    this.upstreamStarted = this.upstream !== null

    this.stdin.on('data', (chunk) => this.fromClientChunk(chunk))
    this.stdin.on('error', (err) => log(`stdin error: ${err.message}`))
    // The client closing its end means goodbye.
    this.stdin.once('end', () => this.shutdown(this.startFailure ? 1 : 0, this.startFailure ? null : 'client closed stdin'))
    this.stdout.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.shutdown(0, 'client went away (stdout closed)')
      else log(`stdout error: ${err.message}`)
    })
    this.stdout.on('drain', () => {
      if (!this.clientBlocked) return
      this.clientBlocked = false
      this.upstream?.resume()
    })
    return this.upstreamStarted
  }

  // ---- client -> upstream ----

  fromClientChunk(chunk) {
    this.clientLines.append(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
    this.clientLines.drain((line) => this.fromClientLine(line), (err) => this.clientError(err))
  }

  fromClientLine(line) {
    const text = line.toString('utf8')
    if (text.trim() === '') return
    let read
    try {
      read = readLine(text, line.length)
    } catch (err) {
      this.clientError(err)
      return
    }
    if (!('batch' in read)) {
      // Forwarded as the very bytes that came (even bytes that are not UTF-8).
      read.line = line
      return this.fromClient(read)
    }
    for (const element of read.batch) {
      let message
      try {
        message = readMessage(element)
      } catch (err) {
        this.clientError(err)
        continue
      }
      this.fromClient(message)
    }
    return undefined
  }

  fromClient(m) {
    if (this.startFailure) {
      if (!m.isRequest || this.closing) return
      this.replyError(m.idJson, UPSTREAM_GONE, `${this.startFailure}: cannot answer ${m.method}`)
      this.shutdown(1, null)
      return
    }
    if (m.isRequest) {
      if (this.localTools && m.method === 'tools/call' && this.localTools.has(m.msg.params?.name)) {
        this.answerLocally(m)
        return
      }
      if (this.upstreamExited || this.closing) {
        this.replyError(m.idJson, UPSTREAM_GONE, `upstream MCP server is not running (${this.goneDescription()})`)
        return
      }
      const entry = this.describeRequest(m)
      this.pending.set(m.key, entry)
      const rewritten = this.rewriteUids(m, entry)
      if (rewritten !== null) {
        this.toUpstream(rewritten)
        return
      }
    } else if (m.method === 'notifications/cancelled') {
      const requestId = m.msg.params?.requestId
      if (requestId !== undefined) {
        const idJson = typeof requestId === 'string' ? JSON.stringify(requestId) : m.paramText('requestId')
        if (idJson !== undefined) this.cancel(idKeyOfJson(idJson), idJson)
      }
    }
    this.toUpstream(m.line ?? m.text)
  }

  /**
   * A tool call naming a uid its page has renumbered since the agent was shown it goes with the
   * same element's current uid (the native session decides, docs/transparency.md); null: as it
   * came. A failure leaves the request as it came.
   */
  rewriteUids(m, entry) {
    if (entry.tool === undefined || !entry.argumentsJson?.includes('uid')) return null
    try {
      return this.session.rewriteRequest(m.idJson, m.text, entry.metaJson ?? undefined) ?? null
    } catch (err) {
      log(`uid rewrite failed, request forwarded as it came: ${err instanceof Error ? err.message : String(err)}`)
      return null
    }
  }

  /**
   * The upstream may still answer a cancelled request: that answer is filtered and cached like
   * any other, but nothing is answered on its behalf if the upstream dies. Bounded: past
   * MAX_CANCELLED, the oldest is forgotten (its late answer then passes unfiltered).
   */
  cancel(key, idJson) {
    const entry = this.pending.get(key)
    // Answered already: the answer crossed the cancellation, and the client drops it.
    if (!entry) this.session.answerCancelled?.(idJson)
    if (!entry || entry.cancelled) return
    entry.cancelled = true
    this.cancelled.push(key)
    if (this.cancelled.length > MAX_CANCELLED) {
      const oldest = this.cancelled.shift()
      const forgotten = this.pending.get(oldest)
      if (forgotten?.cancelled) this.finish(oldest, forgotten)
    }
  }

  /** The request is answered (or given up): off the pending map, waiters released. */
  finish(key, entry) {
    this.pending.delete(key)
    if (entry.cancelled) {
      const at = this.cancelled.indexOf(key)
      if (at !== -1) this.cancelled.splice(at, 1)
    }
    for (const release of entry.waiters ?? []) release()
  }

  describeRequest(m) {
    const entry = { idJson: m.idJson, method: m.method }
    if (m.method === 'tools/call' && typeof m.msg.params?.name === 'string') {
      entry.tool = m.msg.params.name
      // The arguments as the client wrote them, for the filter (resourceTypes, pageId…).
      entry.argumentsJson = m.msg.params.arguments === undefined ? null : m.paramText('arguments')
      // Names the client (modern `clientInfo`) whose snapshot state the result belongs to.
      entry.metaJson = m.paramText('_meta') ?? null
    }
    return entry
  }

  toUpstream(line) {
    // A full upstream stdin: stop reading the client until it drains.
    if (!this.upstream.send(line)) this.stdin.pause()
  }

  clientError(err) {
    if (err.name !== 'MessageLineError') {
      log(`client transport error: ${err.message}`)
      return
    }
    log(`bad message from client (${err.bytes} bytes): ${err.message}`)
    if (err.kind === 'parse') this.replyError(null, PARSE_ERROR, `Parse error: ${err.message}`)
    else this.replyError(err.idJson, INVALID_REQUEST, `Invalid Request: ${err.message}`)
  }

  // ---- upstream -> client ----

  /**
   * One upstream line, one route: the native session reads its envelope and, when it answers a
   * request the proxy rewrites, filters it, in one call whatever its size (the line stays a
   * Buffer). What is no plain response (notifications, requests, batches, bad lines) is read here.
   */
  fromUpstreamLine(line) {
    if (this.routeResponse(line)) return undefined
    const text = line.toString('utf8')
    if (text.trim() === '') return undefined
    let read
    try {
      read = readLine(text, line.length)
    } catch (err) {
      this.upstreamError(err)
      return undefined
    }
    if (!('batch' in read)) {
      read.line = line
      return this.fromUpstream(read)
    }
    for (const element of read.batch) {
      const bytes = Buffer.from(element)
      if (this.routeResponse(bytes)) continue
      let message
      try {
        message = readMessage(element)
      } catch (err) {
        this.upstreamError(err)
        continue
      }
      message.line = bytes
      this.fromUpstream(message)
    }
    return undefined
  }

  /**
   * A response the native reader took (true): forwarded as its bytes, or as rewritten, in
   * arrival order, and its request off the pending map. False: not one, read it in JS.
   */
  routeResponse(line) {
    let key
    let entry
    let routed
    try {
      routed = this.session.routeResponse(line, (idJson) => {
        key = idKeyOfJson(idJson)
        entry = this.pending.get(key)
        if (!entry) return null
        return { method: entry.method, tool: entry.tool, argumentsJson: entry.argumentsJson ?? undefined, metaJson: entry.metaJson ?? undefined, rewrite: this.filtering, cancelled: entry.cancelled === true }
      })
    } catch (err) {
      // A fault of the native side itself: the line goes the JS way, forwarded as it came.
      log(`reading an upstream line failed (forwarding it as it came): ${err.code ? `${err.code}: ` : ''}${err.message}`)
      return false
    }
    if (!routed) return false
    if (routed.error) this.filterFailed(entry, routed.error)
    if (routed.statsLine) log(routed.statsLine)
    this.toClient(routed.line ?? line)
    if (entry) this.finish(key, entry)
    return true
  }

  /** A message the native reader did not take: forwarded as it came, a response ending its request. */
  fromUpstream(m) {
    this.toClient(m.line ?? m.text)
    if (!m.isResponse || !m.hasId) return
    const entry = this.pending.get(m.key)
    if (entry) this.finish(m.key, entry)
  }

  filterFailed(entry, why) {
    const what = entry?.tool === undefined ? (entry?.method ?? 'a response') : `${entry.method} ${JSON.stringify(entry.tool)}`
    log(`filter failed on ${what} (forwarding the original): ${why}`)
  }

  upstreamError(err) {
    // Before the child runs, start() reports the failure itself, in one line.
    if (!this.upstreamStarted) return
    if (err.name === 'MessageLineError') {
      log(`upstream printed a line that is not a JSON-RPC message (${err.bytes} bytes, dropped): ${err.message}${err.preview ? ` — ${JSON.stringify(err.preview)}` : ''}`)
      return
    }
    log(`upstream transport error: ${err.message}`)
  }

  upstreamClosed() {
    clearTimeout(this.unreachableTimer)
    this.upstreamExited = true
    if (this.closing) return
    const why = this.upstream.exitDescription()
    this.failPending(`upstream MCP server exited (${why}) before answering`)
    log(`upstream exited (${why})`)
    const code = typeof this.upstream.exitCode === 'number' && this.upstream.exitCode !== 0 ? this.upstream.exitCode : 1
    this.shutdown(code, null)
  }

  /** A closed pipe usually means the upstream is exiting: give its exit a moment to show. */
  upstreamMayBeUnreachable(what) {
    if (this.unreachableTimer || this.upstreamExited || this.closing) return
    this.unreachableTimer = setTimeout(() => this.upstreamUnreachable(what), UNREACHABLE_GRACE_MS)
  }

  /** The upstream closed one of its pipes and kept running: it can never answer again. */
  upstreamUnreachable(what) {
    if (this.upstreamExited || this.closing) return
    this.stopReason = `it ${what}`
    this.failPending(`upstream MCP server ${what} before answering`)
    log(`upstream ${what} but is still running: stopping it`)
    this.shutdown(1, null)
  }

  failPending(message) {
    for (const [key, entry] of [...this.pending]) {
      // The client gave up on a cancelled request: it expects no answer.
      if (!entry.cancelled) this.replyError(entry.idJson, UPSTREAM_GONE, `${message} ${entry.method}`)
      this.finish(key, entry)
    }
  }

  /** Why a request that arrives now cannot be forwarded. */
  goneDescription() {
    if (this.upstreamExited) return this.upstream.exitDescription()
    return this.stopReason ?? 'the proxy is shutting down'
  }

  // ---- replies the proxy makes itself ----

  /**
   * Writes one line (a string or a Buffer), in call order. When the client's pipe is full,
   * reading the upstream stops until it drains: what the client does not read stays in the
   * upstream's pipe, not in the proxy's memory.
   */
  toClient(line) {
    if (this.stdout.destroyed || this.stdout.writableEnded) return
    let ok
    if (typeof line === 'string') ok = this.stdout.write(`${line}\n`)
    else {
      this.stdout.write(line)
      ok = this.stdout.write('\n')
    }
    if (!ok && !this.clientBlocked && !this.closing) {
      this.clientBlocked = true
      this.upstream?.pause()
    }
  }

  replyError(idJson, code, message) {
    this.toClient(errorLine(idJson, code, message))
  }

  /**
   * A snapshot of that page still in flight would answer "no snapshot yet" or an old one: wait
   * for it (bounded by SNAPSHOT_WAIT_MS), then answer from the cache.
   */
  snapshotInFlight(page) {
    const waits = []
    for (const entry of this.pending.values()) {
      if (entry.tool === undefined || !this.isFilteredTool(entry.tool)) continue
      const other = pageOf(entry.argumentsJson)
      // A call without pageId is of the selected page, which may be this one.
      if (page !== undefined && other !== undefined && other !== page) continue
      waits.push(new Promise((resolve) => (entry.waiters ??= []).push(resolve)))
    }
    if (waits.length === 0) return null
    let timer
    const bound = new Promise((resolve) => {
      timer = setTimeout(resolve, this.snapshotWaitMs) // SNAPSHOT_WAIT_MS unless a test asks
    })
    return Promise.race([Promise.all(waits), bound]).finally(() => clearTimeout(timer))
  }

  answerLocally(m) {
    const tools = /** @type {NonNullable<Proxy['localTools']>} */ (this.localTools)
    const name = m.msg.params.name
    const argumentsJson = m.paramText('arguments') ?? '{}'
    const metaJson = m.paramText('_meta') ?? null
    Promise.resolve(this.snapshotInFlight(pageOf(argumentsJson)))
      .then(() => tools.answer(name, argumentsJson, metaJson))
      .then(
        (member) => this.toClient(`{"jsonrpc":"2.0","id":${m.idJson},${member}}`),
        (err) => this.replyError(m.idJson, -32603, `Internal error: ${err.message}`),
      )
  }

  // ---- lifecycle ----

  /** The one way out: idempotent, stops the upstream (stdin end, SIGTERM, SIGKILL), then exits. */
  shutdown(code, reason) {
    if (this.closing) return this.closing
    if (reason) log(`shutting down: ${reason}`)
    this.closing = (async () => {
      try {
        // An upstream that never started has nothing to sum up.
        const summary = this.startFailure ? null : this.session?.summary()
        if (summary) log(summary)
      } catch {
        // a summary is not worth failing the shutdown for
      }
      // Even when the upstream itself exited: what it started may still run.
      if (this.upstream) await this.upstream.close().catch(() => {})
      await flush(this.stdout)
      this.exit(code)
    })()
    return this.closing
  }
}

/** @returns {Promise<void>} */
function flush(stream) {
  return new Promise((resolve) => {
    if (!stream.writableNeedDrain || stream.destroyed) return resolve()
    // stdout gets one shutdown step to drain
    const timer = setTimeout(resolve, SHUTDOWN_STEP_MS)
    stream.once('drain', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

module.exports = { Proxy }
