// Runs the Jazzer.js fuzz targets (test/fuzz/targets/) one after another on one core, each for a time budget:
//   npm run fuzz                                every target, FUZZ_SECONDS (default 1800) each
//   FUZZ_SECONDS=300 npm run fuzz -- json multipart    some targets
//   FUZZ_KNOWN=multipart:hang npm run fuzz                  log a finding class already reported and go on
// Each target is bundled with esbuild (with src/, so bodykit's code is instrumented; packages stay external), then run by
// Jazzer with its corpus folder first (new inputs accumulate there), its dictionary, and findings written to
// test/fuzz/findings/<target>/ (git-ignored) with the run's log. Prints per target: executions, exec/s, coverage
// (libFuzzer's cov and ft), corpus size and findings. Exits 1 when a target had a finding. See docs/fuzzing.md.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const require = createRequire(import.meta.url)
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const TARGETS = ['content-type', 'json', 'urlencoded', 'text', 'inflate', 'multipart', 'multer', 'web', 'koa', 'web-multipart', 'web-build', 'h3']
const seconds = Number(process.env.FUZZ_SECONDS ?? 1800)
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : TARGETS
for (const name of chosen) if (!TARGETS.includes(name)) throw new Error(`unknown target ${name}: one of ${TARGETS.join(', ')}`)

// Jazzer's prebuilt addon needs a newer glibc than Debian 12's: a patched copy (scripts/jazzer-native.cjs).
const preload = path.join(root, 'scripts', 'jazzer-native.cjs')
const addon = require(preload).prepareAddon({ install: true })
const cli = require.resolve('@jazzer.js/core/dist/cli.js', { paths: [root] })
const bundles = path.join(os.tmpdir(), 'bodykit-jazzer', 'targets')

const results = []
for (const name of chosen) {
  const bundle = path.join(bundles, name + '.cjs')
  await esbuild.build({
    entryPoints: [path.join(root, 'test', 'fuzz', 'targets', name + '.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    outfile: bundle,
    logLevel: 'warning'
  })
  const corpus = path.join(root, 'test', 'fuzz', 'corpus', name)
  const findings = path.join(root, 'test', 'fuzz', 'findings', name)
  fs.mkdirSync(corpus, { recursive: true })
  fs.mkdirSync(findings, { recursive: true })
  const before = new Set(fs.readdirSync(findings))
  const env = {
    ...process.env,
    // The bundle lives outside the repository: its packages are found through NODE_PATH.
    NODE_PATH: path.join(root, 'node_modules'),
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim(),
    BODYKIT_JAZZER_ADDON: addon,
    // A reader that has not answered 2 s after the body's end is a hang (the corpus replay in npm test allows 30 s).
    FUZZ_ANSWER_MS: process.env.FUZZ_ANSWER_MS ?? '2000',
    // FUZZ_KNOWN (e.g. multipart:hang) names finding classes already reported: logged here, and the run goes on.
    FUZZ_KNOWN_LOG: path.join(findings, 'known.jsonl')
  }
  // libFuzzer stops at a finding: the target is started again (its corpus reloaded) until its time is used up.
  const started = Date.now()
  const total = { runs: 0, cov: '?', ft: '?', messages: new Map() }
  for (let round = 0; round < 50; round++) {
    const left = Math.round(seconds - (Date.now() - started) / 1000)
    if (left < 5 && round > 0) break
    const args = [cli, bundle, corpus, '--sync=false', '--timeout=10000', '--',
      `-max_total_time=${Math.max(left, 1)}`, '-max_len=65536', `-dict=${path.join(root, 'test', 'fuzz', 'dict', name + '.dict')}`,
      `-artifact_prefix=${findings}${path.sep}`, '-print_final_stats=1', '-use_value_profile=1']
    if (round === 0) console.log(`\n== ${name}: ${seconds} s\n   node ${args.join(' ')}`)
    const logFile = path.join(findings, `log-${round}.txt`)
    const log = fs.createWriteStream(logFile)
    const code = await new Promise((resolve) => {
      const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
      for (const stream of [child.stdout, child.stderr]) {
        stream.on('data', (chunk) => {
          log.write(chunk)
          // libFuzzer's progress lines and findings, as they come.
          for (const line of chunk.toString().split('\n')) if (/^#\d+\s+(DONE|INITED)|Uncaught Exception|artifact_prefix=/.test(line)) console.log('   ' + line)
        })
      }
      child.on('close', resolve)
    })
    await new Promise((resolve) => { log.end(resolve) })
    const text = fs.readFileSync(logFile, 'utf8')
    const lines = [...text.matchAll(/^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)\/(\S+).*?exec\/s: (\d+)/gm)]
    const last = lines.at(-1)
    const runs = Number(/stat::number_of_executed_units: (\d+)/.exec(text)?.[1] ?? last?.[1] ?? 0)
    total.runs += runs
    if (last !== undefined) {
      total.cov = last[2]
      total.ft = last[3]
    }
    const finding = /Uncaught Exception: (.*)/.exec(text)
    if (finding !== null) total.messages.set(finding[1], (total.messages.get(finding[1]) ?? 0) + 1)
    if (code === 0 || (finding === null && !/Test unit written/.test(text))) break
  }
  const elapsed = (Date.now() - started) / 1000
  const found = fs.readdirSync(findings).filter((file) => !before.has(file) && /^(crash|timeout|oom|leak|slow-unit)-/.test(file))
  results.push({ target: name, runs: total.runs, perSecond: Math.round(total.runs / elapsed), cov: total.cov, ft: total.ft, corpus: fs.readdirSync(corpus).length, findings: found, messages: total.messages })
}

console.log('\ntarget        executions  exec/s   cov    ft  corpus  findings')
for (const r of results) {
  console.log(`${r.target.padEnd(13)} ${String(r.runs).padStart(10)} ${String(r.perSecond).padStart(7)} ${String(r.cov).padStart(5)} ${String(r.ft).padStart(5)} ${String(r.corpus).padStart(7)}  ${r.findings.length}`)
  for (const file of r.findings) console.log('    ' + path.join('test', 'fuzz', 'findings', r.target, file))
  for (const [message, count] of r.messages) console.log(`    ${count} x ${message}`)
}
if (results.some((r) => r.findings.length > 0)) process.exitCode = 1
