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
const { readLine, readMessage, idKeyOfJson, memberText, replaceMember } = require('./jsonrpc.js')
const { StdioUpstream, SHUTDOWN_STEP_MS } = require('./upstream-stdio.js')
const { RestartPolicy } = require('./restart.js')
const { PageTracker } = require('./restore.js')
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
// How long a restarted upstream may take to answer one of the proxy's own requests (the
// replayed initialize, a page reopened): past it the restart counts as failed.
const INTERNAL_REQUEST_MS = 60000
// The ids of the proxy's own requests to the upstream (a client's id is never one: the proxy
// answers only ids it keyed as the client's).
const INTERNAL_ID_PREFIX = 'mcp-snapshot-filter/restart/'

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
   * @param {(tool: string, argumentsJson: string | undefined) => boolean} [opts.returnsSnapshot]
   *   whether a call may answer with a page snapshot (the core's `returnsSnapshot`): a local
   *   tool that reads snapshots waits for such a call of its page still in flight, and for no
   *   other; without it every call in flight counts
   * @param {{has(name: string): boolean, readsSnapshots?(name: string): boolean, answer(name: string, argumentsJson: string, metaJson: string | null): string}} [opts.localTools]
   *   tools the proxy answers itself (expand_snapshot, search_snapshot, read_result): `answer`
   *   returns the response's `"result":…` or `"error":…` member in the request's era
   *   (crates/core/src/era.rs); `readsSnapshots` says which of them wait for a snapshot in
   *   flight (the core's `readsSnapshots`; without it, all)
   * @param {number} [opts.snapshotWaitMs] how long a call of those waits for a snapshot in flight
   * @param {{max: number, windowMs: number, restorePages?: boolean}} [opts.restart] restart a
   *   stdio upstream that dies: at most `max` times within `windowMs` (bin/restart.js), reopening
   *   the agent's pages unless `restorePages` is false; without it (or with max 0) the proxy
   *   exits when its upstream does
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
    this.returnsSnapshot = opts.returnsSnapshot ?? (() => true)
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
    this.restartPolicy = opts.restart && opts.restart.max > 0 && !opts.upstream ? new RestartPolicy(opts.restart) : null
    this.restorePages = opts.restart?.restorePages ?? true
    /** Whether the answers are read for what a restart needs (a remote upstream reconnects itself). */
    this.tracksPages = this.restartPolicy !== null || Boolean(opts.upstream)
    /**
     * What a restarted upstream is told again: the client's initialize (its key and params),
     * notifications/initialized, the log level, resource subscriptions (uri -> params text).
     * @type {{initialize: {key: string, params: string | null} | null, initialized: boolean, logLevel: string | null, subscriptions: Map<string, string | null>}} */
    this.replay = { initialize: null, initialized: false, logLevel: null, subscriptions: new Map() }
    /** The agent's pages as a browser upstream last listed them (bin/restore.js). */
    this.pages = new PageTracker()
    /** The upstream's tools as the client last listed them (JSON), to tell whether a restarted one differs. */
    this.lastTools = null
    /** The proxy's own requests to the upstream: id key -> { resolve, reject } */
    this.internal = new Map()
    this.internalSeq = 0
    /** A restart in progress (a promise); client messages meanwhile wait in `queued`. */
    this.restarting = null
    this.queued = []
    /** Why the upstream stays down after the restarts gave up (requests get it as their error). */
    this.gaveUp = null
  }

  async start() {
    // Without an upstream object, cli.js always names a command.
    this.upstream ??= this.newUpstream()
    this.attach(this.upstream)
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
    this.stdin.once('end', () => this.shutdown(this.startFailure ? 1 : (this.gaveUp?.code ?? 0), this.startFailure ? null : 'client closed stdin'))
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

  newUpstream() {
    // Without an upstream object, cli.js always names a command.
    return new StdioUpstream({ command: /** @type {string} */ (this.command), args: this.args ?? [] })
  }

  /** Listens to `up`; once another upstream replaced it (a restart), what it still says is ignored. */
  attach(up) {
    up.online = (line) => up === this.upstream && this.fromUpstreamLine(line)
    up.onerror = (err) => up === this.upstream && this.upstreamError(err)
    up.ondrain = () => up === this.upstream && this.stdin.resume()
    up.onbroken = (what) => up === this.upstream && this.upstreamMayBeUnreachable(what)
    up.onclose = () => up === this.upstream && this.upstreamClosed()
    up.onrestart = (reason) => up === this.upstream && this.upstreamReconnected(reason)
  }

  /**
   * A remote upstream came back under a new session (it reconnected itself): as after a
   * restart, nothing held is a base any more, the agent's pages are reopened (a server that
   * keeps a browser per session starts a fresh one), and the next result says so.
   */
  upstreamReconnected(reason) {
    if (this.closing || this.restarting) return
    this.session.upstreamRestarted?.(`[mcp-snapshot-filter: the connection to the upstream MCP server was lost (${reason}) and a new session began; uids changed: take a new snapshot (it is sent whole)]`)
    if (!this.pages.kind || this.pages.pages.length === 0) return
    log('the remote upstream began a new session: reopening the pages')
    this.restarting = this.reopenPages()
      .then((note) => this.session.upstreamRestarted?.(`[mcp-snapshot-filter: the connection to the upstream MCP server was lost (${reason}) and a new session began${note}; uids changed: take a new snapshot (it is sent whole)]`))
      .catch((err) => log(`reopening the pages failed: ${err.message}`))
      .finally(() => this.endRestart())
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
      if (this.restarting && !this.closing) {
        this.queued.push(m)
        return
      }
      if (this.upstreamExited || this.closing) {
        this.replyError(m.idJson, UPSTREAM_GONE, `upstream MCP server is not running (${this.goneDescription()})`)
        return
      }
      this.remember(m)
      const entry = this.describeRequest(m)
      this.pending.set(m.key, entry)
      const rewritten = this.rewriteUids(m, entry)
      if (rewritten !== null) {
        this.toUpstream(this.withMappedPage(m, rewritten) ?? rewritten)
        return
      }
    } else if (this.restarting) {
      // An answer to a request of the upstream that died is no answer to the new one's.
      if (m.isResponse) log(`dropped the client's answer to a request of the upstream that died (id ${m.idJson})`)
      else this.queued.push(m)
      return
    } else {
      this.remember(m)
      if (m.method === 'notifications/cancelled') {
        const requestId = m.msg.params?.requestId
        if (requestId !== undefined) {
          const idJson = typeof requestId === 'string' ? JSON.stringify(requestId) : m.paramText('requestId')
          if (idJson !== undefined) this.cancel(idKeyOfJson(idJson), idJson)
        }
      }
    }
    this.toUpstream(this.withMappedPage(m) ?? m.line ?? m.text)
  }

  /** Keeps what a restarted upstream must be told again (`replay`). */
  remember(m) {
    if (!this.restartPolicy) return
    const params = () => memberText(m.text, 'params') ?? null
    if (m.method === 'initialize' && m.isRequest) this.replay.initialize = { key: m.key, params: params() }
    else if (m.method === 'notifications/initialized') this.replay.initialized = true
    else if (m.method === 'logging/setLevel' && m.isRequest) this.replay.logLevel = params()
    else if (m.method === 'resources/subscribe' && typeof m.msg.params?.uri === 'string') this.replay.subscriptions.set(m.msg.params.uri, params())
    else if (m.method === 'resources/unsubscribe' && typeof m.msg.params?.uri === 'string') this.replay.subscriptions.delete(m.msg.params.uri)
  }

  /**
   * A call naming a page by the id it had before a restart, with the id the restarted upstream
   * gave the page it reopened there (the line's text with only that number replaced); null:
   * forward the line as it came.
   */
  withMappedPage(m, text = m.text) {
    if (this.pages.idMap.size === 0 || m.method !== 'tools/call') return null
    const page = m.msg.params?.arguments?.pageId
    const mapped = typeof page === 'number' ? this.pages.mapped(page) : undefined
    if (mapped === undefined) return null
    const params = memberText(text, 'params')
    const args = params === undefined ? undefined : memberText(params, 'arguments')
    const newArgs = args === undefined ? null : replaceMember(args, 'pageId', String(mapped))
    const newParams = newArgs === null || params === undefined ? null : replaceMember(params, 'arguments', newArgs)
    return newParams === null ? null : replaceMember(text, 'params', newParams)
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
    // A restarted upstream gets the client's initialize again when it was never answered.
    if (m.method === 'initialize' && this.restartPolicy) entry.line = m.line ?? m.text
    if (m.method === 'tools/list') entry.firstPage = m.msg.params?.cursor === undefined
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
    if (!entry && this.internalAnswer(key, line)) return true
    if (routed.error) this.filterFailed(entry, routed.error, routed.line !== undefined && routed.line !== null)
    if (routed.statsLine) log(routed.statsLine)
    this.toClient(routed.line ?? line)
    if (entry) {
      // The pages that result lists are the fresh browser's: the ones to reopen are those before.
      if (routed.reconnected) this.browserReconnected()
      else this.learn(entry, line)
      this.finish(key, entry)
    }
    return true
  }

  /**
   * The upstream says its browser was restarted or reconnected (chrome-devtools-mcp's note): the
   * session already forgot what the agent held. The agent's pages are reopened before the next
   * call goes upstream, and the next result says which.
   */
  browserReconnected() {
    if (!this.restorePages || !this.pages.kind || !this.pages.pages.some((p) => p.url !== 'about:blank') || this.restarting) return
    log('the upstream says its browser was restarted or reconnected: reopening the pages')
    this.restarting = this.reopenPages()
      .then((note) => this.session.upstreamRestarted?.(`[mcp-snapshot-filter: after the browser restarted${note}; uids changed: take a new snapshot (it is sent whole)]`))
      .catch((err) => log(`reopening the pages failed: ${err.message}`))
      .finally(() => this.endRestart())
  }

  /** The answer to one of the proxy's own requests (true): taken, never forwarded. */
  internalAnswer(key, line) {
    const internal = key === undefined ? undefined : this.internal.get(key)
    if (!internal) return false
    let answer
    try {
      answer = JSON.parse(line.toString('utf8'))
    } catch {
      answer = { error: { message: 'an answer that is not JSON' } }
    }
    internal.resolve(answer)
    return true
  }

  /**
   * What a restart needs from the answers the client gets (with restarts on): the upstream's
   * tools (its first tools/list page) and the pages a browser upstream lists.
   */
  learn(entry, line) {
    if (!this.tracksPages) return
    const watched = entry.tool !== undefined && this.pages.watches(entry.tool)
    if (!(entry.method === 'tools/list' && entry.firstPage) && !watched) return
    let result
    try {
      result = JSON.parse(line.toString('utf8')).result
    } catch {
      return
    }
    if (!result) return
    if (entry.method === 'tools/list') {
      this.lastTools = JSON.stringify(result.tools ?? null)
      this.pages.learnTools(result.tools)
    } else {
      this.pages.observe(result)
      // The agent has now seen the pages' ids as the upstream gives them.
      this.pages.idMap.clear()
    }
  }

  /** A message the native reader did not take: forwarded as it came, a response ending its request. */
  fromUpstream(m) {
    if (m.isResponse && m.hasId && !this.pending.has(m.key) && this.internalAnswer(m.key, Buffer.from(m.text))) return
    this.toClient(m.line ?? m.text)
    if (!m.isResponse || !m.hasId) return
    const entry = this.pending.get(m.key)
    if (entry) this.finish(m.key, entry)
  }

  /** @param {boolean} [cut] the original, over the bound, went cut to it (else as it came) */
  filterFailed(entry, why, cut = false) {
    const what = entry?.tool === undefined ? (entry?.method ?? 'a response') : `${entry.method} ${JSON.stringify(entry.tool)}`
    log(`filter failed on ${what} (${cut ? 'sending it cut to the budget' : 'forwarding the original'}): ${why}`)
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
    const up = /** @type {NonNullable<Proxy['upstream']>} */ (this.upstream)
    const why = up.exitDescription()
    this.failInternal(`upstream MCP server exited (${why})`)
    if (this.restarting) {
      // One of the restarts died: the restart loop decides what comes next.
      this.attemptDied?.(new Error(why))
      return
    }
    if (this.mayRestart(why, `exited (${why})`)) return
    this.failPending(`upstream MCP server exited (${why}) before answering`)
    log(`upstream exited (${why})`)
    const code = typeof up.exitCode === 'number' && up.exitCode !== 0 ? up.exitCode : 1
    if (this.restartPolicy) this.stayDown(`upstream MCP server exited (${why})`, code)
    else this.shutdown(code, null)
  }

  /** A closed pipe usually means the upstream is exiting: give its exit a moment to show. */
  upstreamMayBeUnreachable(what) {
    if (this.unreachableTimer || this.upstreamExited || this.closing) return
    const up = this.upstream
    this.unreachableTimer = setTimeout(() => up === this.upstream && this.upstreamUnreachable(what), UNREACHABLE_GRACE_MS)
  }

  /** The upstream closed one of its pipes and kept running: it can never answer again. */
  upstreamUnreachable(what) {
    if (this.upstreamExited || this.closing) return
    this.failInternal(`upstream MCP server ${what}`)
    if (this.restartPolicy) {
      // Stopped (its whole group), then restarted like one that exited.
      const up = /** @type {NonNullable<Proxy['upstream']>} */ (this.upstream)
      this.upstreamExited = true
      up.close().catch(() => {})
      if (this.restarting) {
        this.attemptDied?.(new Error(what))
        return
      }
      if (this.mayRestart(what, what)) return
      this.failPending(`upstream MCP server ${what} before answering`)
      log(`upstream ${what} but is still running: stopped it`)
      this.stayDown(`upstream MCP server ${what}`, 1)
      return
    }
    this.stopReason = `it ${what}`
    this.failPending(`upstream MCP server ${what} before answering`)
    log(`upstream ${what} but is still running: stopping it`)
    this.shutdown(1, null)
  }

  /**
   * Starts the restart of a dead upstream when the policy allows one (true): requests in
   * flight get an error saying so (the client's initialize, unanswered, is sent again instead),
   * and what the client sends meanwhile waits for the new upstream.
   */
  mayRestart(why, what) {
    if (!this.restartPolicy || this.restarting) return false
    const delay = this.restartPolicy.next()
    if (delay === null) return false
    const initKey = this.replay.initialize?.key
    const keep = initKey !== undefined && this.pending.has(initKey) ? initKey : null
    this.failPending(`upstream MCP server ${what} before answering`, keep, '; the proxy is restarting it')
    log(`upstream ${what}: restarting it in ${delay} ms (restart ${this.restartPolicy.count()} of at most ${this.restartPolicy.max} in ${Math.round(this.restartPolicy.windowMs / 1000)} s)`)
    this.restarting = this.restartLoop(delay, why)
      .catch((err) => log(`restarting the upstream failed: ${err.message}`))
      .finally(() => this.endRestart())
    return true
  }

  /** The restart (or reopening) is over: what the client sent meanwhile goes on, in order. */
  endRestart() {
    this.restarting = null
    const queued = this.queued.splice(0)
    for (const m of queued) this.fromClient(m)
  }

  /** Tries new upstreams (with backoff) until one takes the replay, or the policy gives up. */
  async restartLoop(delay, why) {
    // What the dead upstream started (a browser) is stopped with its process group first.
    await this.upstream?.close().catch(() => {})
    for (let wait = delay; ; ) {
      await new Promise((resolve) => setTimeout(resolve, wait)) // BACKOFF_FIRST_MS doubling (bin/restart.js)
      if (this.closing) return
      const up = this.newUpstream()
      this.upstream = up
      this.upstreamExited = false
      this.attach(up)
      // The attempt fails as soon as this upstream dies (upstreamClosed says so).
      const died = new Promise((resolve, reject) => {
        this.attemptDied = reject
      })
      died.catch(() => {})
      try {
        await Promise.race([
          (async () => {
            await up.start()
            await this.replayOnto(up)
            await this.afterRestart(why)
          })(),
          died,
        ])
        this.attemptDied = null
        return
      } catch (err) {
        this.attemptDied = null
        // It died during the replay (upstreamClosed left it to this loop), or never started.
        why = up.exitCode !== undefined ? up.exitDescription() : err.message
        this.upstreamExited = true
        await up.close().catch(() => {})
      }
      if (this.closing) return
      const next = this.restartPolicy?.next() ?? null
      if (next === null) {
        const code = typeof up.exitCode === 'number' && up.exitCode !== 0 ? up.exitCode : 1
        log(`upstream failed again (${why}): gave up after ${this.restartPolicy?.max} restarts in ${Math.round((this.restartPolicy?.windowMs ?? 0) / 1000)} s`)
        this.stayDown(`upstream MCP server failed ${this.restartPolicy?.max} restarts in ${Math.round((this.restartPolicy?.windowMs ?? 0) / 1000)} s (last: ${why})`, code)
        return
      }
      log(`upstream failed again (${why}): restarting it in ${next} ms (restart ${this.restartPolicy?.count()})`)
      wait = next
    }
  }

  /** Tells a new upstream what the client told the old one: initialize, initialized, log level, subscriptions. */
  async replayOnto(up) {
    const init = this.replay.initialize
    if (!init) return
    const entry = this.pending.get(init.key)
    if (entry) {
      // The client's own initialize, never answered: it goes as it came, answered to the client.
      up.send(entry.line)
      await this.whenAnswered(init.key)
    } else {
      const answer = await this.request('initialize', init.params)
      if (answer.error) throw new Error(`the replayed initialize failed: ${answer.error.message}`)
    }
    if (this.replay.initialized) up.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    // Each replay is best effort: an upstream that refuses one still serves.
    if (this.replay.logLevel) await this.request('logging/setLevel', this.replay.logLevel)
    for (const params of this.replay.subscriptions.values()) await this.request('resources/subscribe', params)
  }

  /** Resolves once the client's request `key` is answered (or given up). */
  whenAnswered(key) {
    return new Promise((resolve, reject) => {
      const entry = this.pending.get(key)
      if (!entry) return resolve(undefined)
      ;(entry.waiters ??= []).push(resolve)
      entry.onfail = reject
    })
  }

  /**
   * After a restart: the agent's pages reopened, tools/list_changed if the tools differ, and the
   * session told (nothing held is a base any more; the next result says what happened).
   */
  async afterRestart(why) {
    let tools = null
    if (this.lastTools !== null) {
      const answer = await this.request('tools/list', '{}')
      tools = answer.result?.tools ?? null
      if (tools) this.pages.learnTools(tools)
    }
    const pagesNote = await this.reopenPages()
    if (tools !== null && JSON.stringify(tools) !== this.lastTools) {
      this.lastTools = JSON.stringify(tools)
      this.toClient('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}')
    }
    log(`upstream restarted`)
    this.session.upstreamRestarted?.(`[mcp-snapshot-filter: the upstream MCP server died (${why}) and was restarted${pagesNote}; uids changed: take a new snapshot (it is sent whole)]`)
  }

  /**
   * Reopens the agent's pages on a fresh browser (bin/restore.js), unless turned off; returns
   * what the line after a restart says of them ('' when there were none).
   */
  async reopenPages() {
    if (!this.pages.kind || this.pages.pages.length === 0) return ''
    if (!this.restorePages) return '; pages not reopened (--no-restore-pages)'
    const call = (tool, args) =>
      this.request('tools/call', JSON.stringify({ name: tool, arguments: args })).then((answer) => {
        if (answer.error) throw new Error(answer.error.message)
        return answer.result
      })
    const urls = this.pages.pages.map((p) => p.url)
    const { reopened, failed } = await this.pages.restore(call).catch((err) => {
      log(`reopening the pages failed: ${err.message}`)
      return { reopened: [], failed: urls }
    })
    log(`reopened ${reopened.length} page(s)${failed.length ? `; ${failed.length} could not be: ${failed.join(', ')}` : ''}`)
    return (
      `; pages reopened: ${reopened.length ? reopened.join(', ') : 'none'}` +
      (failed.length ? `; not reopened: ${failed.join(', ')}` : '') +
      // New ids are not named: one may be another page's old id, and the agent would not know
      // which it means. It keeps its ids until a page list shows the new ones.
      (this.pages.idMap.size ? '; page ids changed: the ids you have still reach these pages until the pages are listed again' : '') +
      '; forms and in-page state are not restored'
    )
  }

  /**
   * Sends one request of the proxy's own (`paramsJson` as its params) to the upstream and
   * resolves its response (parsed); rejects when the upstream dies first or takes too long.
   * @returns {Promise<any>}
   */
  request(method, paramsJson) {
    const id = `${INTERNAL_ID_PREFIX}${++this.internalSeq}`
    const key = idKeyOfJson(JSON.stringify(id))
    return new Promise((resolve, reject) => {
      const done = (fn) => (value) => {
        clearTimeout(timer)
        this.internal.delete(key)
        fn(value)
      }
      const timeout = () => done(reject)(new Error(`no answer to ${method} within ${INTERNAL_REQUEST_MS / 1000} s`))
      const timer = setTimeout(timeout, INTERNAL_REQUEST_MS)
      this.internal.set(key, { resolve: done(resolve), reject: done(reject) })
      const params = paramsJson === null || paramsJson === undefined ? '' : `,"params":${paramsJson}`
      this.upstream?.send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)}${params}}`)
    })
  }

  /** The upstream died: the proxy's own requests to it fail. */
  failInternal(message) {
    for (const { reject } of [...this.internal.values()]) reject(new Error(message))
  }

  /** The restarts gave up: requests get `message`; the proxy exits with `code` when the client closes. */
  stayDown(message, code) {
    this.upstreamExited = true
    this.gaveUp = { message, code }
    this.failPending(`${message}: cannot answer`)
    for (const m of this.queued.splice(0)) {
      if (m.isRequest) this.replyError(m.idJson, UPSTREAM_GONE, `upstream MCP server is not running (${message})`)
    }
  }

  /**
   * Every request in flight gets an error (`message` + its method + `suffix`), but `keep` (the
   * client's initialize, sent again to a restarted upstream).
   * @param {string} message
   * @param {string | null} [keep]
   * @param {string} [suffix]
   */
  failPending(message, keep = null, suffix = '') {
    for (const [key, entry] of [...this.pending]) {
      if (key === keep) continue
      // The client gave up on a cancelled request: it expects no answer.
      if (!entry.cancelled) this.replyError(entry.idJson, UPSTREAM_GONE, `${message} ${entry.method}${suffix}`)
      this.finish(key, entry)
      entry.onfail?.(new Error(message))
    }
  }

  /** Why a request that arrives now cannot be forwarded. */
  goneDescription() {
    if (this.gaveUp) return this.gaveUp.message
    if (this.upstreamExited) return this.upstream?.exitDescription() ?? 'exited'
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
      if (entry.tool === undefined || !this.returnsSnapshot(entry.tool, entry.argumentsJson)) continue
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
    const reads = tools.readsSnapshots?.(name) ?? true
    Promise.resolve(reads ? this.snapshotInFlight(pageOf(argumentsJson)) : null)
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
