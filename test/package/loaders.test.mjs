// Loader matrix: the three entries, installed from the packed tarball, loaded by require() and by import in the test
// runners, TypeScript runner and bundlers that apps use, each time running one set of requests through Express 4.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { findPackage } from './installed.mjs'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')
const rootModules = path.join(root, 'node_modules')
const fixtures = path.join(import.meta.dirname, 'loaders')
const requireFromRoot = createRequire(path.join(root, 'package.json'))

const MULTER_NAMED = { type: 'function', sameAsDefault: true }

/**
 * What check.js records for each entry: for bodykit and bodykit/legacy the two bodies parsed and the unread body each
 * entry leaves; for bodykit/multer its shape, a MulterError it makes and the form upload.single('f') read into memory.
 */
const EXPECTED = {
  default: { json: { status: 200, answer: { body: { hello: 'world', n: [1, 2] } } }, form: { status: 200, answer: { body: { a: '1', b: 'two words' } } }, unread: { status: 200, answer: { body: 'undefined' } } },
  legacy: { json: { status: 200, answer: { body: { hello: 'world', n: [1, 2] } } }, form: { status: 200, answer: { body: { a: '1', b: 'two words' } } }, unread: { status: 200, answer: { body: {} } } },
  multer: {
    shape: { multer: 'function', diskStorage: MULTER_NAMED, memoryStorage: MULTER_NAMED, MulterError: MULTER_NAMED },
    error: { name: 'MulterError', code: 'LIMIT_FILE_SIZE', field: 'f', message: 'File too large', isError: true },
    upload: {
      status: 200,
      answer: {
        body: { title: 'hello form' },
        file: { fieldname: 'f', originalname: 'notes.txt', encoding: '7bit', mimetype: 'text/plain', buffer: 'file contents', size: 13 }
      }
    }
  }
}

/**
 * Where a loader's answer differs from EXPECTED, and why. esbuild renames the bundled modules' names that clash with
 * a name of the entry (bundle.mjs imports `MulterError`), so the class is MulterError2 there; MulterError's `name` is
 * `this.constructor.name`, as in multer 2.x, whose error is named MulterError2 in the same bundle too.
 */
const DIFFERENCES = {
  'esbuild-import-multer': { ...EXPECTED.multer, error: { ...EXPECTED.multer.error, name: 'MulterError2' } }
}

/**
 * Makes `name` (installed at `source` in this repo) resolvable from a project's node_modules with exactly the
 * versions npm installed here, whether a tool follows symlinks or not: `name` and every package it reaches from the
 * top of this repo's node_modules are linked at the top of the project's; nested ones come with their parent.
 */
function linkInto (nodeModules, name, source) {
  const link = (as, target) => {
    const at = path.join(nodeModules, as)
    if (existsSync(at)) return
    mkdirSync(path.dirname(at), { recursive: true })
    symlinkSync(target, at, 'dir')
  }
  link(name, source)
  const pending = [source]
  const seen = new Set(pending)
  while (pending.length > 0) {
    const from = pending.pop()
    const manifest = JSON.parse(readFileSync(path.join(from, 'package.json'), 'utf8'))
    for (const dependency of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      let found
      try { found = findPackage(dependency, from) } catch { continue } // an optional dependency not installed here
      if (seen.has(found)) continue
      seen.add(found)
      pending.push(found)
      if (path.join(rootModules, dependency) === found) link(dependency, found)
    }
  }
}

/** The folder of the package `tool` (a package folder in this repo) reaches through the chain of dependencies. */
function dependencyOf (tool, ...chain) {
  let at = tool
  for (const name of chain) at = findPackage(name, at)
  return at
}

let work, project, results, bundles

before(async () => {
  assert.ok(existsSync(path.join(root, 'dist/index.js')), 'run `npm run build` before this test')
  work = mkdtempSync(path.join(os.tmpdir(), 'bodykit-loaders-'))
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root })
  const tarball = path.join(work, JSON.parse(stdout)[0].filename)
  project = path.join(work, 'app')
  results = path.join(work, 'results')
  bundles = path.join(work, 'bundles') // outside the app: a bundle runs with no node_modules to fall back on
  const nodeModules = path.join(project, 'node_modules')
  for (const dir of [path.join(nodeModules, 'bodykit'), results, bundles]) mkdirSync(dir, { recursive: true })
  cpSync(fixtures, project, { recursive: true })
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'loader-app', private: true, type: 'commonjs' }))
  // bodykit as npm installs it: the tarball's files, and its dependencies as this repo installed them.
  await run('tar', ['-xzf', tarball, '-C', path.join(nodeModules, 'bodykit'), '--strip-components=1'])
  const { dependencies } = JSON.parse(readFileSync(path.join(nodeModules, 'bodykit/package.json'), 'utf8'))
  for (const name of Object.keys(dependencies)) linkInto(nodeModules, name, findPackage(name, root))
  linkInto(nodeModules, 'express', findPackage('express-4', root))
  assert.ok(lstatSync(path.join(nodeModules, 'express')).isSymbolicLink())
})

after(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

/** Runs `node args…` in the app with the label its checks record under; fails with the tool's output. */
async function runTool (label, args, options = {}) {
  try {
    return await run(process.execPath, args, {
      cwd: options.cwd ?? project,
      env: { ...process.env, NODE_OPTIONS: '', LOADER_RESULTS: results, LOADER_LABEL: label, CI: 'true', ...options.env },
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024
    })
  } catch (error) {
    assert.fail(label + ' failed (' + (error.code ?? error.signal) + '):\n' + error.stdout + '\n' + error.stderr)
  }
}

/** Asserts that `label` ran the three entries, loaded the way `how` says, and that each answered as that entry does. */
function assertRecorded (label, ...hows) {
  for (const how of hows) {
    for (const entry of ['default', 'legacy', 'multer']) {
      const file = path.join(results, `${label}-${how}-${entry}.json`)
      assert.ok(existsSync(file), `${label} did not run the ${how} ${entry} entry check (recorded: ${readdirSync(results).join(', ')})`)
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), DIFFERENCES[`${label}-${how}-${entry}`] ?? EXPECTED[entry], `${label}, ${how} ${entry}`)
    }
  }
}

// Jest up to 27 resolves without package.json exports and takes `node:` specifiers for files; its default
// environment was jsdom until 27, so the matrix names Node's, from each Jest's own tree.
const JESTS = [
  { name: 'Jest 26', dir: 'jest-26' },
  { name: 'Jest 27', dir: 'jest-27' },
  { name: 'current Jest', dir: 'jest' }
]

describe('test runners', () => {
  for (const jest of JESTS) {
    it(`${jest.name}: require() from a CommonJS test file, import from an ES module one (--experimental-vm-modules)`, async () => {
      const jestDir = path.join(rootModules, jest.dir)
      const version = JSON.parse(readFileSync(path.join(jestDir, 'package.json'), 'utf8')).version
      const environment = dependencyOf(jestDir, 'jest-cli', '@jest/core', 'jest-config', 'jest-environment-node')
      const label = 'jest' + version.split('.')[0]
      const config = (testMatch) => JSON.stringify({
        rootDir: project,
        testMatch,
        testEnvironment: environment,
        transform: {},
        moduleFileExtensions: ['js', 'mjs', 'json'],
        cacheDirectory: path.join(work, 'jest-cache', jest.dir),
        watchman: false
      })
      const cli = path.join(jestDir, 'bin/jest.js')
      await runTool(label, [cli, '--ci', '--runInBand', '--config', config(['<rootDir>/require-suite.js'])])
      assertRecorded(label, 'require')
      await runTool(label, ['--experimental-vm-modules', '--no-warnings', cli, '--ci', '--runInBand', '--config', config(['<rootDir>/esm-suite.mjs'])])
      assertRecorded(label, 'import')
    })
  }

  // Vitest runs test files as ES modules (no require() in them), so it loads the entries by import only.
  it('Vitest: import from an ES module test file', async () => {
    await runTool('vitest', [path.join(rootModules, 'vitest/vitest.mjs'), 'run', '--config', path.join(project, 'vitest.config.mjs')])
    assertRecorded('vitest', 'import')
  })

  it('mocha: require() from a CommonJS test file, import from an ES module one', async () => {
    const mocha = path.join(rootModules, 'mocha/bin/mocha.js')
    await runTool('mocha', [mocha, 'require-suite.js', 'esm-suite.mjs'])
    assertRecorded('mocha', 'require', 'import')
  })
})

describe('TypeScript', () => {
  it('tsx: import and import = require() in a CommonJS .ts file, import in an .mts one', async () => {
    const tsx = path.join(rootModules, 'tsx/dist/cli.mjs')
    await runTool('tsx', [tsx, 'app.ts'])
    await runTool('tsx', [tsx, 'app.mts'])
    assertRecorded('tsx', 'require', 'import')
  })
})

// Each bundler builds the app from a CommonJS entry and from an ES module one into a CommonJS bundle for Node, with
// Express, bodykit's three entries and its dependencies inside; the bundle then runs from a folder with no node_modules.
const BUNDLERS = {
  async esbuild (entry, outfile) {
    const esbuild = requireFromRoot('esbuild')
    await esbuild.build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'cjs', logLevel: 'error' })
  },
  async 'webpack 5' (entry, outfile) {
    const webpack = requireFromRoot('webpack')
    const stats = await new Promise((resolve, reject) => webpack({
      mode: 'production',
      target: 'node',
      context: project,
      entry,
      output: { path: path.dirname(outfile), filename: path.basename(outfile), library: { type: 'commonjs2' } },
      optimization: { minimize: false },
      // Express 4's view engine loader requires by a computed name; the app renders no views.
      ignoreWarnings: [/Critical dependency: the request of a dependency is an expression/]
    }, (error, result) => error ? reject(error) : resolve(result)))
    assert.ok(!stats.hasErrors() && !stats.hasWarnings(), stats.toString('errors-warnings'))
  },
  async rollup (entry, outfile) {
    const { rollup } = requireFromRoot('@rollup/wasm-node')
    const { nodeResolve } = requireFromRoot('@rollup/plugin-node-resolve')
    const commonjs = requireFromRoot('@rollup/plugin-commonjs')
    const json = requireFromRoot('@rollup/plugin-json')
    const bundle = await rollup({
      input: entry,
      plugins: [nodeResolve({ preferBuiltins: true }), commonjs({ ignoreDynamicRequires: true }), json()],
      // Circular requires inside Express and its dependencies are how they are written, not a bundling fault.
      onwarn (warning, warn) { if (warning.code !== 'CIRCULAR_DEPENDENCY' && warning.code !== 'THIS_IS_UNDEFINED') warn(warning) }
    })
    await bundle.write({ file: outfile, format: 'cjs', inlineDynamicImports: true })
    await bundle.close()
  }
}

describe('bundlers (node target)', () => {
  for (const [name, build] of Object.entries(BUNDLERS)) {
    it(`${name}: a bundle built from require() and one from import, each run`, async () => {
      const label = name.split(' ')[0]
      for (const [how, entry] of [['require', 'bundle.cjs'], ['import', 'bundle.mjs']]) {
        const outfile = path.join(bundles, `${label}-${how}.cjs`)
        await build(path.join(project, entry), outfile)
        await runTool(label, [outfile], { cwd: bundles })
      }
      assertRecorded(label, 'require', 'import')
    })
  }
})
