'use strict'

// The release workflow cannot run here; this keeps it consistent with package.json: every
// napi target is built, tested on a runner of its own kind, and published with provenance.
// (Lint it fully with actionlint when available: `actionlint .github/workflows/release.yml`.)

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
// js-yaml comes with @napi-rs/cli (a dependency of it).
const yaml = require('js-yaml')

const PACKAGE = require('../package.json')
const WORKFLOW = path.join(__dirname, '..', '.github', 'workflows', 'release.yml')

const workflow = yaml.load(fs.readFileSync(WORKFLOW, 'utf8'))

test('every napi target is built once, with napi build --release for that target', () => {
  const builds = workflow.jobs.build.strategy.matrix.settings
  assert.deepEqual(builds.map((b) => b.target).sort(), PACKAGE.napi.targets.slice().sort())
  for (const { target, build, host } of builds) {
    assert.match(build, new RegExp(`napi build --platform --release --target ${target}(\\s|$)`), target)
    const wantHost = target.includes('linux') ? /^ubuntu/ : target.includes('darwin') ? /^macos/ : /^windows/
    assert.match(host, wantHost, `${target} builds on ${host}`)
  }
  const upload = workflow.jobs.build.steps.find((s) => String(s.uses).startsWith('actions/upload-artifact'))
  assert.equal(upload.with.name, 'bindings-${{ matrix.settings.target }}')
  assert.equal(workflow.env.APP_NAME, PACKAGE.napi.binaryName)
})

test('every target is tested on a runner of its own CPU, OS and libc', () => {
  const tests = workflow.jobs.test.strategy.matrix.settings
  assert.deepEqual(tests.map((t) => t.target).sort(), PACKAGE.napi.targets.slice().sort())
  for (const { target, host, alpine } of tests) {
    const arm = target.startsWith('aarch64')
    if (target.includes('linux')) assert.equal(/-arm$/.test(host), arm, `${target} on ${host}`)
    if (target.includes('windows')) assert.equal(/-arm$/.test(host), arm, `${target} on ${host}`)
    if (target === 'x86_64-apple-darwin') assert.match(host, /intel|macos-13/)
    assert.equal(Boolean(alpine), target.endsWith('musl'), `${target} runs in Alpine`)
  }
  assert.ok(workflow.jobs.test.needs === 'build')
})

test('publishing needs every test, runs on tags only, with provenance and no addon in the main tarball', () => {
  const publish = workflow.jobs.publish
  assert.equal(publish.needs, 'test')
  assert.match(publish.if, /refs\/tags\/v/)
  assert.equal(publish.permissions['id-token'], 'write')
  const script = publish.steps.map((s) => s.run ?? '').join('\n')
  // --ignore-scripts skips prepublishOnly: its guard runs as a step of its own, right before.
  const order = ['napi create-npm-dirs', 'napi artifacts', 'rm -f ./*.node', 'napi pre-publish', 'node scripts/prepublish-guard.js', 'npm publish --provenance --access public --ignore-scripts']
  let at = -1
  for (const step of order) {
    const found = script.indexOf(step)
    assert.ok(found > at, `"${step}" runs, after the steps before it`)
    at = found
  }
  assert.equal(PACKAGE.scripts.prepublishOnly, 'node scripts/prepublish-guard.js', 'the guard CI runs is the one npm runs')
  const prePublish = publish.steps.find((s) => /napi pre-publish/.test(s.run ?? ''))
  assert.equal(prePublish.env.NPM_CONFIG_PROVENANCE, 'true')
})
