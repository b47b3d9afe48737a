// @ts-check
'use strict'

// When a dead stdio upstream is started again (bin/proxy.js): at most `max` restarts within
// `windowMs`, each after a backoff that doubles with the restarts of the window. The defaults
// (bin/options.js: 3 restarts in 300 s) tell a crash from a crash loop: a browser crash is an
// event, and three in five minutes is not bad luck but a cause that restarting does not cure
// (a bad flag, a missing browser, a page that crashes the browser as it is reopened). A loop
// is given up within about two seconds of backoff (0.25 + 0.5 + 1 s), so a client is not kept
// waiting on it.

const BACKOFF_FIRST_MS = 250
const BACKOFF_MAX_MS = 8000

class RestartPolicy {
  /**
   * @param {object} opts
   * @param {number} opts.max restarts allowed within the window (0: never restart)
   * @param {number} opts.windowMs
   * @param {() => number} [opts.now]
   */
  constructor({ max, windowMs, now = Date.now }) {
    this.max = max
    this.windowMs = windowMs
    this.now = now
    /** When each restart of the window began. */
    this.restarts = []
  }

  /**
   * The upstream died: the delay before the next restart (ms), or null when the window's
   * restarts are used up (then it stays down).
   */
  next() {
    const now = this.now()
    this.restarts = this.restarts.filter((t) => now - t < this.windowMs)
    if (this.restarts.length >= this.max) return null
    const delay = Math.min(BACKOFF_FIRST_MS * 2 ** this.restarts.length, BACKOFF_MAX_MS)
    this.restarts.push(now)
    return delay
  }

  /** How many restarts the window has seen. */
  count() {
    return this.restarts.length
  }
}

module.exports = { RestartPolicy, BACKOFF_FIRST_MS }
