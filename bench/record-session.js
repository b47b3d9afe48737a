'use strict'

// Records an agent-like session directly against chrome-devtools-mcp 1.11.0 + headless Chromium,
// in the JSONL format of ../shared/corpus/sessions/ ({step, tool, args, result, ms[, targetName]}),
// so deltas and budgets can be judged on pages the corpus does not hold.
//
//   node bench/record-session.js SCRIPT.json OUT.jsonl
//
// SCRIPT.json: { "roots": { "/app/": "__test__/site/app", "/py/": "/usr/share/doc/python3-doc/html" },
//                "steps": [ { "tool": "navigate_page", "args": { "type": "url", "url": "/py/index.html" } },
//                           { "tool": "take_snapshot" },
//                           { "tool": "click", "target": { "role": "link", "name": "Tutorial" },
//                             "args": { "includeSnapshot": true } }, … ] }
// A `url` starting with `/` is made absolute against the local server; `target` picks the first
// node of that role whose name equals (or, with `"match": "contains"`, contains) the given name in
// the latest snapshot, and passes its uid as `uid` (a fill_form element's `target` gives that
// element's `uid`). `pageId` defaults to 1. Every server listens on
// 127.0.0.1; Chromium resolves every other host to nothing.

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')

const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js')
const { ROOT, chromeDevtoolsCommand, upstreamEnv, resultText } = require('./live-browser.js')

const TYPES = { '.html': 'text/html; charset=utf-8', '.css': 'text/css', '.js': 'text/javascript', '.png': 'image/png', '.svg': 'image/svg+xml' }

function serveRoots(roots) {
  const table = Object.entries(roots).map(([prefix, dir]) => [prefix, path.resolve(ROOT, dir)])
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname)
    const hit = table.find(([prefix]) => pathname.startsWith(prefix))
    if (!hit) return res.writeHead(404).end('not found')
    const file = path.join(hit[1], path.normalize(pathname.slice(hit[0].length)))
    if (!file.startsWith(hit[1])) return res.writeHead(403).end()
    fs.readFile(fs.existsSync(file) && fs.statSync(file).isDirectory() ? path.join(file, 'index.html') : file, (err, body) => {
      if (err) return res.writeHead(404).end('not found')
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(body)
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` })))
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** The uid of the first `role "name"` node of a raw chrome-devtools-mcp snapshot. */
function findUid(snapshot, { role, name, match }) {
  const namePattern = match === 'contains' ? `[^"\\n]*${escapeRegExp(name)}[^"\\n]*` : escapeRegExp(name)
  const m = new RegExp(`uid=(\\S+) ${escapeRegExp(role)} "${namePattern}"`).exec(snapshot)
  return m ? m[1] : null
}

async function main() {
  const [scriptFile, outFile] = process.argv.slice(2)
  if (!scriptFile || !outFile) {
    process.stderr.write('usage: node bench/record-session.js SCRIPT.json OUT.jsonl\n')
    process.exit(2)
  }
  const script = JSON.parse(fs.readFileSync(scriptFile, 'utf8'))
  const { server, origin } = await serveRoots(script.roots ?? { '/app/': '__test__/site/app' })
  const [command, ...args] = chromeDevtoolsCommand()
  const transport = new StdioClientTransport({ command, args, env: upstreamEnv(), stderr: 'ignore' })
  const client = new Client({ name: 'session-recorder', version: '1.0.0' })
  await client.connect(transport)
  const out = fs.createWriteStream(outFile)
  const write = (o) => out.write(JSON.stringify(o) + '\n')
  write({ step: 0, tool: 'tools/list', args: {}, result: await client.listTools(), ms: 0 })
  let latest = ''
  let step = 0
  for (const s of script.steps) {
    const callArgs = { pageId: 1, ...(s.args ?? {}) }
    if (typeof callArgs.url === 'string' && callArgs.url.startsWith('/')) callArgs.url = origin + callArgs.url
    const resolve = (target) => {
      const uid = findUid(latest, target)
      if (!uid) throw new Error(`step ${step + 1}: no ${target.role} "${target.name}" in the latest snapshot`)
      return uid
    }
    if (s.target) callArgs.uid = resolve(s.target)
    // fill_form: each element names its target the same way (`{ "target": {…}, "value": … }`).
    if (Array.isArray(callArgs.elements)) {
      callArgs.elements = callArgs.elements.map(({ target, ...e }) => (target ? { uid: resolve(target), ...e } : e))
    }
    const t0 = Date.now()
    const result = await client.callTool({ name: s.tool, arguments: callArgs }, undefined, { timeout: 120_000 })
    const ms = Date.now() - t0
    const text = resultText(result)
    if (text.includes('## Latest page snapshot')) latest = text
    step += 1
    const record = { step, tool: s.tool, args: callArgs, result, ms }
    if (s.target) record.targetName = s.target.name
    write(record)
    process.stderr.write(`${step} ${s.tool} ${result.isError ? 'ERROR ' : ''}${text.length} chars\n`)
  }
  out.end()
  await client.close()
  server.close()
}

main().catch((err) => {
  process.stderr.write(`record-session: ${err.stack ?? err}\n`)
  process.exit(1)
})
