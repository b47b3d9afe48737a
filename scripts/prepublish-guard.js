#!/usr/bin/env node
'use strict'

// npm's `prepublishOnly` for the main package (and a step of the release workflow, which
// publishes with --ignore-scripts): refuses a main package that a registry user could not run.
// A plain `npm publish` from a built clone would ship the clone's own `.node` (one platform's,
// inside the main package) and no platform packages: every other platform then fails to load,
// and this one carries the addon twice once the platform packages exist. The addon belongs in
// the per-platform packages (`mcp-snapshot-filter-<platform>`), which the main package lists as
// optionalDependencies, one per target of `napi.targets`. `npm run release:local` and the
// release workflow stage the main package that way; this check holds them to it.

const fs = require('node:fs')
const path = require('node:path')

/** What is wrong with the package in `dir` for publishing, one line each; none when it may go. */
function problems(dir) {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
  const { supportedPackages } = require(path.join(__dirname, '..', 'bin', 'native.js'))
  const out = []
  const addons = fs.readdirSync(dir).filter((name) => name.endsWith('.node'))
  if (addons.length > 0) {
    out.push(`it holds ${addons.join(', ')}: the addon ships in the platform packages, never in the main package (remove it, or publish with \`npm run release:local -- --registry URL\`, which stages the main package without it)`)
  }
  const wanted = supportedPackages(pkg)
  if (wanted.length === 0) out.push('package.json has no napi.targets: no platform package would be named')
  const listed = pkg.optionalDependencies ?? {}
  const missing = wanted.filter((name) => listed[name] !== pkg.version)
  if (missing.length > 0) {
    out.push(
      `its optionalDependencies lack ${missing.map((n) => `${n}@${pkg.version}`).join(', ')}: without them npm installs no addon for ${missing.length === 1 ? 'that platform' : 'those platforms'} (\`napi pre-publish\` writes them after publishing the platform packages; \`npm run release:local\` writes those it built)`,
    )
  }
  const stray = Object.keys(listed).filter((name) => name.startsWith(`${pkg.name}-`) && !wanted.includes(name))
  if (stray.length > 0) out.push(`its optionalDependencies name ${stray.join(', ')}, which napi.targets does not build`)
  const repository = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url
  if (!repository) out.push('package.json has no repository: the registry page would link to no source (npm pkg set repository.url=git+https://…)')
  return out
}

function main() {
  // npm runs lifecycle scripts in the package's folder and names its package.json.
  const dir = process.env.npm_package_json ? path.dirname(process.env.npm_package_json) : process.cwd()
  const found = problems(dir)
  if (found.length === 0) return 0
  process.stderr.write(`mcp-snapshot-filter: refusing to publish ${dir}:\n${found.map((p) => `  - ${p}\n`).join('')}`)
  return 1
}

if (require.main === module) process.exitCode = main()

module.exports = { problems }
