'use strict'

// The proxy: forwards every JSON-RPC message between the client (our stdin/stdout) and the
// upstream untouched, as the very text that came, except the responses to requests it chose to
// rewrite, tracked by the request id's exact JSON text. It forwards lines, not parsed messages,
// on purpose: the SDK's high-level Server/Client swallow logging/setLevel, replace progress
// tokens, time out after 60 s and drop unknown fields, and its stdio transports JSON.parse and
// re-serialize every message (numbers beyond 2^53 or 1e400 change; lines over 10 MB are
// refused). So both sides are plain streams here: bin/line-buffer.js splits them, bin/jsonrpc.js
// reads what routing needs, and the upstream is any object with the small interface described
// in bin/upstream-stdio.js (send / online / pause / resume / close).

const v8 = require('node:v8')
const vm = require('node:vm')

const { LineBuffer } = require('./line-buffer.js')
const { readLine, readMessage, memberText, replaceMember, idKeyOfJson } = require('./jsonrpc.js')
const { StdioUpstream, SHUTDOWN_STEP_MS } = require('./upstream-stdio.js')
const { log } = require('./log.js')

const LIST_METHODS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'])

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
// Upstream response lines from this size on are routed by their natively read envelope and
// stay Buffers: small lines are cheaper to parse in JS than to cross twice.
const BIG_LINE_BYTES = 256 * 1024

/**
 * V8's `gc` function, or null. A big line's Buffers (the socket chunks, the joined line, the
 * filtered line) are external memory owned by small young JS objects: with the line never
 * becoming a string, so little JS is allocated that scavenges are rare and ~30 MB of dead
 * Buffers piled up between them (peak RSS 113 MB over the bench; 76 MB with a scavenge after
 * each big line, which costs well under a millisecond). Node has no public way to ask for a
 * scavenge, so this turns on --expose-gc at run time: __test__/proxy-internals.test.js fails
 * the day a Node release stops honouring it.
 */
function exposedGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc
  try {
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc')
    return typeof gc === 'function' ? gc : null
  } catch {
    return null
  }
}

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
   * @param {string} [opts.command] upstream executable (for the default stdio upstream)
   * @param {string[]} [opts.args] upstream arguments
   * @param {object} [opts.upstream] an upstream with the interface of StdioUpstream (instead of command/args)
   * @param {import('../index').FilterSession} opts.session native filter session
   * @param {(code: number) => void} [opts.exit] called once, when the proxy is done
   * @param {NodeJS.ReadableStream} [opts.stdin]
   * @param {NodeJS.WritableStream} [opts.stdout]
   * @param {boolean} [opts.filtering] false: forward every response untouched (level off)
   * @param {(tool: string, length?: number) => boolean} [opts.isFilteredTool] which tools' results go
   *   to the filter, by tool and, for a response, its line's length (bytes or UTF-16 units): a
   *   result of any tool may be over the token budget
   * @param {{has(name: string): boolean, call(name: string, argumentsJson: string): string}} [opts.localTools]
   *   tools the proxy answers itself (expand_snapshot, search_snapshot): `call` returns the result's JSON
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
    /** Which tools' results go to the native filter (all, when not given). */
    this.isFilteredTool = opts.isFilteredTool ?? (() => true)
    /** Client requests waiting for the upstream's answer: id key -> { idJson, method, tool, argumentsJson } */
    this.pending = new Map()
    /** Requests the proxy answers itself (its own tools), by tool name. */
    this.localTools = opts.localTools ?? null
    this.closing = null
    this.upstreamExited = false
    this.bigLineBytes = opts.bigLineBytes ?? BIG_LINE_BYTES
    this.snapshotWaitMs = opts.snapshotWaitMs ?? SNAPSHOT_WAIT_MS
    /** Keys of cancelled requests still in `pending`, oldest first. */
    this.cancelled = []
    this.clientLines = new LineBuffer()
    /** The client's stdout is full: upstream reading is paused until it drains. */
    this.clientBlocked = false
    this.gc = undefined
    this.gcScheduled = false
  }

  async start() {
    this.upstream ??= new StdioUpstream({ command: this.command, args: this.args })
    const session = this.session
    this.peek = typeof session?.peekResponse === 'function' && typeof session.filterToolResponseBuffer === 'function' ? (line) => session.peekResponse(line) : null
    this.upstream.online = (line) => this.fromUpstreamLine(line)
    this.upstream.onerror = (err) => this.upstreamError(err)
    this.upstream.ondrain = () => this.stdin.resume()
    this.upstream.onbroken = (what) => this.upstreamMayBeUnreachable(what)
    this.upstream.onclose = () => this.upstreamClosed()
    try {
      await this.upstream.start()
    } catch (err) {
      log(`cannot start upstream ${JSON.stringify(this.command)}: ${err.message}`)
      this.exit(1)
      return false
    }
    this.upstreamStarted = true

    this.stdin.on('data', (chunk) => this.fromClientChunk(chunk))
    this.stdin.on('error', (err) => log(`stdin error: ${err.message}`))
    // The client closing its end means goodbye.
    this.stdin.once('end', () => this.shutdown(0, 'client closed stdin'))
    this.stdout.on('error', (err) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.shutdown(0, 'client went away (stdout closed)')
      else log(`stdout error: ${err.message}`)
    })
    this.stdout.on('drain', () => {
      if (!this.clientBlocked) return
      this.clientBlocked = false
      this.upstream.resume()
    })
    return true
  }

  // ---- client -> upstream ----

  fromClientChunk(chunk) {
    this.clientLines.append(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
    for (;;) {
      let line
      try {
        line = this.clientLines.readLine()
      } catch (err) {
        this.clientError(err)
        continue
      }
      if (line === null) return
      this.fromClientLine(line)
    }
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
    if (!read.batch) {
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
    if (m.isRequest) {
      if (this.localTools && m.method === 'tools/call' && this.localTools.has(m.msg.params?.name)) {
        this.answerLocally(m)
        return
      }
      if (this.upstreamExited || this.closing) {
        this.replyError(m.idJson, UPSTREAM_GONE, `upstream MCP server is not running (${this.goneDescription()})`)
        return
      }
      this.pending.set(m.key, this.describeRequest(m))
    } else if (m.method === 'notifications/cancelled') {
      const requestId = m.msg.params?.requestId
      if (requestId !== undefined) this.cancel(idKeyOfJson(typeof requestId === 'string' ? JSON.stringify(requestId) : m.paramText('requestId')))
    }
    this.toUpstream(m.line ?? m.text)
  }

  /**
   * The upstream may still answer a cancelled request: that answer is filtered and cached like
   * any other, but nothing is answered on its behalf if the upstream dies. Bounded: past
   * MAX_CANCELLED, the oldest is forgotten (its late answer then passes unfiltered).
   */
  cancel(key) {
    const entry = this.pending.get(key)
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

  fromUpstreamLine(line) {
    if (this.peek && line.length >= this.bigLineBytes) {
      const envelope = this.peek(line)
      if (envelope) return this.fromUpstreamBig(line, envelope)
    }
    const text = line.toString('utf8')
    if (text.trim() === '') return undefined
    let read
    try {
      read = readLine(text, line.length)
    } catch (err) {
      this.upstreamError(err)
      return undefined
    }
    if (!read.batch) {
      read.line = line
      return this.fromUpstream(read)
    }
    for (const element of read.batch) {
      let message
      try {
        message = readMessage(element)
      } catch (err) {
        this.upstreamError(err)
        continue
      }
      this.fromUpstream(message)
    }
    return undefined
  }

  fromUpstream(m) {
    if (m.isResponse && m.hasId) {
      const entry = this.pending.get(m.key)
      if (entry) {
        this.toClient((this.filtering && 'result' in m.msg ? this.rewrite(entry, m.text) : null) ?? m.line ?? m.text)
        this.finish(m.key, entry)
        return undefined
      }
    }
    return this.toClient(m.line ?? m.text)
  }

  /**
   * A big response line: forwarded as its bytes, or filtered from them, in arrival order; its
   * envelope (`idJson`, `hasResult`) was read natively.
   */
  fromUpstreamBig(line, envelope) {
    this.collectBigLineSoon()
    const key = idKeyOfJson(envelope.idJson)
    const entry = this.pending.get(key)
    if (!entry) return this.toClient(line)
    this.toClient(this.rewriteBig(entry, line, envelope) ?? line)
    this.finish(key, entry)
    return undefined
  }

  rewriteBig(entry, line, envelope) {
    if (!this.filtering || !envelope.hasResult) return null
    if (entry.method === 'tools/call' && entry.tool !== undefined) {
      if (!this.isFilteredTool(entry.tool, line.length)) return null
      return this.filterResponseLine(entry, null, () => this.session.filterToolResponseBuffer(entry.tool, line, entry.argumentsJson))
    }
    if (!LIST_METHODS.has(entry.method)) return null
    return this.rewrite(entry, line.toString('utf8'))
  }

  /** A minor GC once the current big line is handled and written (see exposedGc). */
  collectBigLineSoon() {
    if (this.gcScheduled) return
    if (this.gc === undefined) this.gc = exposedGc()
    if (!this.gc) return
    this.gcScheduled = true
    setImmediate(() => {
      this.gcScheduled = false
      this.gc({ type: 'minor' })
    })
  }

  /**
   * The rewritten response line, or null to forward the original (nothing changed, or the filter
   * failed). Only the `result` changes: the id, `jsonrpc` and any other member keep their text.
   */
  rewrite(entry, text) {
    if (entry.method === 'tools/call' && entry.tool !== undefined) {
      // Results no filter touches (screenshots, clicks without snapshot…) cross only when
      // they may be over the token budget.
      if (!this.isFilteredTool(entry.tool, text.length)) return null
      if (typeof this.session.filterToolResponse === 'function') {
        return this.filterResponseLine(entry, null, () => this.session.filterToolResponse(entry.tool, text, entry.argumentsJson))
      }
    }
    try {
      let out = null
      if (entry.method === 'tools/call' && entry.tool !== undefined) {
        out = this.session.filterToolResult(entry.tool, memberText(text, 'result'), entry.argumentsJson)
        this.logStatsLine()
      } else if (LIST_METHODS.has(entry.method)) {
        out = this.session.compressListResult(entry.method, memberText(text, 'result'))
      }
      if (out === null || out === undefined) return null
      return replaceMember(text, 'result', out)
    } catch (err) {
      this.filterFailed(entry, err)
      return null
    }
  }

  /**
   * A tools/call response line through `filter()`: the filtered line, or `original` when nothing
   * changed or the filter failed.
   */
  filterResponseLine(entry, original, filter) {
    try {
      const response = filter()
      // A cancelled request's late answer: the client drops it, so it is not what the agent holds.
      if (entry.cancelled) this.session.answerNotDelivered?.()
      this.logStatsLine()
      return response ?? original
    } catch (err) {
      this.filterFailed(entry, err)
      return original
    }
  }

  filterFailed(entry, err) {
    const what = entry.tool === undefined ? entry.method : `${entry.method} ${JSON.stringify(entry.tool)}`
    log(`filter failed on ${what} (forwarding the original): ${err.code ? `${err.code}: ` : ''}${err.message}`)
  }

  logStatsLine() {
    const statsLine = this.session.takeStatsLine?.()
    if (statsLine) log(statsLine)
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
      this.upstream.pause()
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
    const name = m.msg.params.name
    const argumentsJson = m.paramText('arguments') ?? '{}'
    Promise.resolve(this.snapshotInFlight(pageOf(argumentsJson)))
      .then(() => this.localTools.call(name, argumentsJson))
      .then(
        (resultJson) => this.toClient(`{"jsonrpc":"2.0","id":${m.idJson},"result":${resultJson}}`),
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
        const summary = this.session?.summary()
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

module.exports = { Proxy, LIST_METHODS, exposedGc }
