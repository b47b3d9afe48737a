'use strict'

// What the real end-to-end test and `npm run demo` share: the bundled app pages served from
// 127.0.0.1, and the command line that runs chrome-devtools-mcp 1.11.0 (a dev dependency) in
// front of Debian's headless Chromium, as root, offline (../shared/UPSTREAM-FORMATS.md §1).

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')

const ROOT = path.resolve(__dirname, '..')
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const CHROME_DEVTOOLS_MCP = path.join(ROOT, 'node_modules', 'chrome-devtools-mcp', 'build', 'src', 'bin', 'chrome-devtools-mcp.js')
/** The pages of ../shared/corpus/site/app/, copied: served as /app/grid.html, /app/noisy.html, … */
const SITE_DIR = path.join(ROOT, '__test__', 'site')

const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
}

/**
 * Serves `dir` on 127.0.0.1 at a random port. GET/HEAD only (other methods get 501, like the
 * server the corpus was captured with); missing files get 404.
 * Resolves to { origin, server, close() }.
 */
function serveDirectory(dir = SITE_DIR) {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(501, { 'content-type': 'text/plain' }).end('Unsupported method')
      return
    }
    const pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname)
    const file = path.join(dir, path.normalize(pathname))
    if (!file.startsWith(dir + path.sep)) {
      res.writeHead(403).end()
      return
    }
    fs.readFile(file, (err, body) => {
      if (err) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('File not found')
        return
      }
      res.writeHead(200, { 'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream' })
      res.end(req.method === 'HEAD' ? undefined : body)
    })
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      resolve({
        origin: `http://127.0.0.1:${port}`,
        server,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.()
            server.close(() => done())
          }),
      })
    })
  })
}

/**
 * chrome-devtools-mcp's command line: headless, a throw-away profile, no sandbox (CI runs as
 * root), no update checks or telemetry. `offline` (the default) resolves every host name but
 * 127.0.0.1 to nothing, so a page cannot reach outside the machine (the noisy page posts to
 * telemetry.invalid).
 */
function chromeDevtoolsCommand({ executablePath = CHROMIUM, offline = true } = {}) {
  const command = [
    process.execPath,
    CHROME_DEVTOOLS_MCP,
    `--executablePath=${executablePath}`,
    '--headless',
    '--isolated',
    '--no-usage-statistics',
    '--no-performance-crux',
    '--chromeArg=--no-sandbox',
    '--chromeArg=--disable-gpu',
    '--chromeArg=--disable-dev-shm-usage',
    '--chromeArg=--disable-background-networking',
    '--chromeArg=--disable-component-update',
    '--chromeArg=--disable-sync',
    '--chromeArg=--no-first-run',
  ]
  if (offline) command.push('--chromeArg=--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1')
  return command
}

/** The environment for chrome-devtools-mcp (and for the proxy, which passes it on). */
function upstreamEnv(base = process.env) {
  return { ...base, CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1', CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' }
}

function chromiumInstalled(executablePath = CHROMIUM) {
  try {
    fs.accessSync(executablePath, fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The concatenated text blocks of a CallToolResult. */
function resultText(result) {
  return (result?.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n')
}

/**
 * Playwright MCP on stdio (the dev dependency, or PLAYWRIGHT_MCP_CLI: another install's cli.js),
 * driving headless Chromium, its files written to `workDir`; it downloads no browser.
 */
function playwrightMcpTransport(workDir) {
  const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js')
  const cli = process.env.PLAYWRIGHT_MCP_CLI || path.join(ROOT, 'node_modules', '@playwright', 'mcp', 'cli.js')
  return new StdioClientTransport({
    command: process.execPath,
    args: [cli, '--headless', '--browser', 'chromium', '--executable-path', CHROMIUM, '--isolated', '--output-dir', workDir],
    env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
    cwd: workDir,
    stderr: 'ignore',
  })
}

module.exports = { ROOT, CHROMIUM, CHROME_DEVTOOLS_MCP, SITE_DIR, serveDirectory, chromeDevtoolsCommand, upstreamEnv, chromiumInstalled, resultText, playwrightMcpTransport }
