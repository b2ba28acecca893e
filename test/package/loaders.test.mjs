// Loader matrix: five entries, installed from the packed tarball, loaded by require() and by import in the test
// runners, TypeScript runner and bundlers that apps use, each time running one set of requests: through Express 4
// (bodykit, bodykit/legacy, bodykit/multer), Koa 2 (bodykit/koa) and Nest 11 (bodykit/nest).
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

const NAMED = { type: 'function', sameAsModule: true }

/** The form every upload sends: the field, and the file as a handler sees it. */
const FORM_FIELDS = { title: 'hello form' }
const FORM_FILE = { fieldname: 'f', originalname: 'notes.txt', encoding: '7bit', mimetype: 'text/plain', buffer: 'file contents', size: 13 }

/**
 * What check.js records for each entry: for bodykit and bodykit/legacy the two bodies parsed and the unread body each
 * entry leaves; for bodykit/multer its shape, a MulterError it makes and the form upload.single('f') read into memory;
 * for bodykit/koa its shape, the two bodies bodyParser() read and the form koaBody({ multipart: true }) read, the file
 * on disk; for bodykit/nest its interceptors, the form FileInterceptor('f') read and Nest's 413 for a file over
 * limits.fileSize. POST routes answer 201 in Nest.
 */
const EXPECTED = {
  default: { json: { status: 200, answer: { body: { hello: 'world', n: [1, 2] } } }, form: { status: 200, answer: { body: { a: '1', b: 'two words' } } }, unread: { status: 200, answer: { body: 'undefined' } } },
  legacy: { json: { status: 200, answer: { body: { hello: 'world', n: [1, 2] } } }, form: { status: 200, answer: { body: { a: '1', b: 'two words' } } }, unread: { status: 200, answer: { body: {} } } },
  multer: {
    shape: { multer: 'function', diskStorage: NAMED, memoryStorage: NAMED, MulterError: NAMED },
    error: { name: 'MulterError', code: 'LIMIT_FILE_SIZE', field: 'f', message: 'File too large', isError: true },
    upload: { status: 200, answer: { body: FORM_FIELDS, file: FORM_FILE } }
  },
  koa: {
    shape: { module: 'function', bodyParser: NAMED, koaBody: NAMED },
    json: { status: 200, answer: { body: { hello: 'world', n: [1, 2] }, file: 'undefined' } },
    form: { status: 200, answer: { body: { a: '1', b: 'two words' }, file: 'undefined' } },
    upload: {
      status: 200,
      answer: { body: FORM_FIELDS, file: { originalFilename: 'notes.txt', size: 13, mimetype: 'text/plain', content: 'file contents', inUploadDir: true } }
    }
  },
  nest: {
    shape: {
      FileInterceptor: NAMED,
      FilesInterceptor: NAMED,
      FileFieldsInterceptor: NAMED,
      AnyFilesInterceptor: NAMED,
      NoFilesInterceptor: NAMED,
      interceptor: { type: 'function', intercept: 'function' }
    },
    upload: { status: 201, answer: { body: FORM_FIELDS, file: FORM_FILE } },
    limited: { status: 413, answer: { statusCode: 413, message: 'File too large', error: 'Payload Too Large' } }
  }
}

const ENTRIES = Object.keys(EXPECTED)

/**
 * Jest 26 loads bodykit/nest and makes its interceptors, but cannot run a Nest 11 app: Nest's Express adapter,
 * @nestjs/platform-express 11, runs on Express 5, whose body-parser 2 requires `node:zlib`, which Jest 26 reads as a
 * file. Nest itself, not bodykit, is out of Jest 26's reach (NestFactory would exit the process).
 */
const NEST_WITHOUT_APP = { shape: EXPECTED.nest.shape, adapter: "ENOENT: no such file or directory, open 'node:zlib'" }

/**
 * Where a loader's answer differs from EXPECTED, and why. esbuild renames the bundled modules' names that clash with
 * a name of the entry (bundle.mjs imports `MulterError`), so the class is MulterError2 there; MulterError's `name` is
 * `this.constructor.name`, as in multer 2.x, whose error is named MulterError2 in the same bundle too. Jest 26 runs no
 * Nest app (NEST_WITHOUT_APP).
 */
const DIFFERENCES = {
  'esbuild-import-multer': { ...EXPECTED.multer, error: { ...EXPECTED.multer.error, name: 'MulterError2' } },
  'jest26-require-nest': NEST_WITHOUT_APP,
  'jest26-import-nest': NEST_WITHOUT_APP
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
  // The optional peers an app with bodykit/koa or bodykit/nest installs. Koa 2, as Express 4, so that every tool of
  // the matrix runs the app: Koa 3 cannot be loaded by Jest 26 (it requires `node:util`, which Jest 26 reads as a file)
  // nor answer in Jest 27 (its response checks `instanceof ReadableStream`, a global Jest 27's node environment lacks);
  // test/koa runs bodykit/koa on both. Nest 11 with the peers of its own (@nestjs/platform-express has its Express 5
  // nested, beside the app's Express 4).
  linkInto(nodeModules, 'koa', findPackage('koa2', root))
  for (const name of ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express', 'rxjs', 'reflect-metadata']) {
    linkInto(nodeModules, name, findPackage(name, root))
  }
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

/** Asserts that `label` ran the five entries, loaded the way `how` says, and that each answered as that entry does. */
function assertRecorded (label, ...hows) {
  for (const how of hows) {
    for (const entry of ENTRIES) {
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
// Express, Koa, Nest, bodykit's five entries and their dependencies inside; the bundle then runs from a folder with no
// node_modules.

/**
 * The packages Nest 11 loads only for features an app uses (validation, serialization, microservices, websockets), by
 * a require() inside a function whose failure it catches. A bundler cannot resolve them when they are not installed,
 * so apps that bundle Nest leave them out, as Nest's docs show (webpack's IgnorePlugin); the same list is esbuild's
 * `external` and rollup's commonjs `ignore` here, each leaving a require() that fails only if it is ever called.
 */
const NEST_LAZY_IMPORTS = ['@nestjs/microservices', '@nestjs/microservices/microservices-module', '@nestjs/websockets/socket-module', 'class-validator', 'class-transformer']

const BUNDLERS = {
  async esbuild (entry, outfile) {
    const esbuild = requireFromRoot('esbuild')
    await esbuild.build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'cjs', logLevel: 'error', external: NEST_LAZY_IMPORTS })
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
      plugins: [new webpack.IgnorePlugin({ checkResource: (resource) => NEST_LAZY_IMPORTS.includes(resource) })],
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
      plugins: [nodeResolve({ preferBuiltins: true }), commonjs({ ignoreDynamicRequires: true, ignore: NEST_LAZY_IMPORTS }), json()],
      // Circular requires inside Express and its dependencies are how they are written, not a bundling fault; so is the
      // eval with which depd (in Koa 2's tree) names its deprecation wrappers.
      onwarn (warning, warn) { if (!['CIRCULAR_DEPENDENCY', 'THIS_IS_UNDEFINED', 'EVAL'].includes(warning.code)) warn(warning) }
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
