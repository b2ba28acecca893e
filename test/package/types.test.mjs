// Compile matrix: consumer fixtures (test/types/consumer) type-checked against the packed package, and against
// body-parser + @types/body-parser (multer + @types/multer for bodykit/multer), for Express 4 and 5, in every
// module setting a TypeScript app uses.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { findPackage } from './installed.mjs'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')
const fixtures = path.join(root, 'test/types/consumer')
const tsc = path.join(root, 'node_modules/typescript/bin/tsc')

/** The compiler settings of each configuration; every one is strict, with skipLibCheck off. */
const CONFIGS = [
  // TypeScript's default for `module: commonjs`, still common in Express apps (reads `typesVersions`, not `exports`).
  { name: 'node10', module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true },
  { name: 'node16', module: 'node16', moduleResolution: 'node16', esModuleInterop: true },
  { name: 'node16 without esModuleInterop', module: 'node16', moduleResolution: 'node16', esModuleInterop: false },
  { name: 'nodenext', module: 'nodenext', moduleResolution: 'nodenext', esModuleInterop: true },
  { name: 'nodenext without esModuleInterop', module: 'nodenext', moduleResolution: 'nodenext', esModuleInterop: false },
  { name: 'bundler', module: 'preserve', moduleResolution: 'bundler', esModuleInterop: true },
  { name: 'bundler without esModuleInterop', module: 'preserve', moduleResolution: 'bundler', esModuleInterop: false },
  { name: 'nodenext with exactOptionalPropertyTypes', module: 'nodenext', moduleResolution: 'nodenext', esModuleInterop: true, exactOptionalPropertyTypes: true }
]

/** Where each Express major's types come from in this repo's node_modules (v4 under an npm alias). */
const EXPRESS_TYPES = { 4: '@types/express-4', 5: '@types/express' }

/** Copies a package (as `name`) and its dependencies, flat, into a project's node_modules: no links, no network. */
function copyPackage (nodeModules, name, source, copied = new Set()) {
  if (copied.has(name)) return
  copied.add(name)
  cpSync(source, path.join(nodeModules, name), { recursive: true, dereference: true, filter: (file) => !file.slice(source.length).includes('node_modules') })
  const { dependencies = {} } = JSON.parse(readFileSync(path.join(source, 'package.json'), 'utf8'))
  for (const dependency of Object.keys(dependencies)) copyPackage(nodeModules, dependency, findPackage(dependency, source), copied)
}

/** The fixtures a configuration compiles: default imports in CommonJS files need esModuleInterop (or a bundler). */
function fixturesFor (dir, config) {
  return readdirSync(dir).filter((file) => /\.m?ts$/.test(file) &&
    (!file.endsWith('.interop.ts') || config.esModuleInterop || config.moduleResolution === 'bundler'))
}

let work
let tarball

before(async () => {
  assert.ok(existsSync(path.join(root, 'dist/index.d.ts')), 'run `npm run build` before this test')
  work = mkdtempSync(path.join(os.tmpdir(), 'bodykit-types-'))
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root })
  tarball = path.join(work, JSON.parse(stdout)[0].filename)
  for (const major of Object.keys(EXPRESS_TYPES)) {
    const project = path.join(work, 'express' + major)
    const nodeModules = path.join(project, 'node_modules')
    mkdirSync(path.join(nodeModules, 'bodykit'), { recursive: true })
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'commonjs' }))
    // bodykit as npm installs it: the tarball's files. Its runtime dependencies are left out on purpose:
    // its declarations must need none of them.
    await run('tar', ['-xzf', tarball, '-C', path.join(nodeModules, 'bodykit'), '--strip-components=1'])
    copyPackage(nodeModules, '@types/express', findPackage(EXPRESS_TYPES[major], root))
    copyPackage(nodeModules, '@types/node', findPackage('@types/node', root))
    // multer's types for the shared multer fixtures, on this project's Express types (not the ones it depends on).
    copyPackage(nodeModules, '@types/multer', findPackage('@types/multer', root), new Set(['@types/express']))
    // The schema libraries the `schema` fixtures use (their types ship in the packages).
    for (const library of ['zod', 'valibot']) copyPackage(nodeModules, library, findPackage(library, root))
    // bodykit/hono's optional peer, for the hono fixtures (its types ship in the package).
    copyPackage(nodeModules, 'hono', findPackage('hono', root))
    // Koa's types, for the koa fixtures: bodykit/koa's own declarations need none of them.
    copyPackage(nodeModules, '@types/koa', findPackage('@types/koa', root))
    // bodykit/nest's optional peer (its types ship in the package), and the peers its declarations import.
    for (const library of ['@nestjs/common', 'rxjs', 'reflect-metadata']) copyPackage(nodeModules, library, findPackage(library, root))
    // The same fixtures against body-parser and multer: only the module names change (bodykit-only fixtures are
    // left out). Both targets are in one program, so bodykit/multer's globals must merge with @types/multer's.
    cpSync(fixtures, path.join(project, 'bodykit'), { recursive: true })
    mkdirSync(path.join(project, 'body-parser'))
    for (const file of readdirSync(fixtures).filter((name) => !name.includes('.bodykit.'))) {
      const text = readFileSync(path.join(fixtures, file), 'utf8')
        .replace(/'bodykit\/multer'/g, "'multer'")
        .replace(/'bodykit(\/legacy)?'/g, "'body-parser'")
      writeFileSync(path.join(project, 'body-parser', file), text)
    }
  }
})

after(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

it('packs only the entries\' and public modules\' declarations, which import nothing but Node builtins (plain names), each other, (bodykit/hono\'s) hono and (bodykit/nest\'s) @nestjs/common', async () => {
  const { stdout } = await run('tar', ['-tzf', tarball])
  const declarations = stdout.split('\n').filter((file) => /\.d\.m?ts$/.test(file)).sort()
  assert.deepEqual(declarations, ['package/dist/h3-web.d.mts', 'package/dist/h3.d.mts', 'package/dist/h3.d.ts', 'package/dist/h3/types.d.ts', 'package/dist/hono-web.d.mts', 'package/dist/hono.d.mts', 'package/dist/hono.d.ts', 'package/dist/hono/adapter.d.ts', 'package/dist/index.d.ts', 'package/dist/koa.d.ts', 'package/dist/koa/types.d.ts', 'package/dist/legacy.d.ts', 'package/dist/multer.d.ts', 'package/dist/nest.d.ts', 'package/dist/options.d.ts', 'package/dist/types.d.ts', 'package/dist/web.d.mts', 'package/dist/web.d.ts', 'package/dist/web/types.d.ts'])
  for (const file of declarations) {
    const text = readFileSync(path.join(work, 'express5/node_modules/bodykit', file.slice('package/'.length)), 'utf8')
    // bodykit/hono's declarations also import its optional peer, hono, and bodykit/nest's its optional peer, @nestjs/common
    // (and bodykit/multer's options): an app importing that entry has them.
    const hono = file.includes('/hono')
    const nest = file.endsWith('/nest.d.ts')
    for (const [, specifier] of text.matchAll(/from '([^']+)'/g)) {
      assert.ok(builtinModules.includes(specifier) || /^\.\.?\/(options|types|web|web\/types|hono\/adapter|koa\/types|h3\/types)(\.js)?$/.test(specifier) || (hono && /^hono(\/|$)/.test(specifier)) ||
        (nest && /^(@nestjs\/common|\.\/multer)$/.test(specifier)), file + ' imports ' + specifier)
    }
  }
})

/**
 * The multer fixtures (named multer.*, and nest.*, whose entry brings bodykit/multer's types) are a program of their own:
 * multer's global `req.files` (@types/multer's, and bodykit/multer's, which merge) does not fit a handler typed
 * `MultipartRequest<express.Request>`.
 */
const isMulterFixture = (file) => /^(multer|nest)\./.test(path.basename(file))

// Two compiler runs per Express major and configuration check both targets' fixtures (they share the
// parsing of @types/node and @types/express); two configurations at a time, each run a few seconds of CPU.
describe('the consumer fixtures compile (strict, skipLibCheck false) against the packed bodykit and against body-parser + @types/body-parser and multer + @types/multer', { concurrency: 2 }, () => {
  for (const major of Object.keys(EXPRESS_TYPES)) {
    for (const config of CONFIGS) {
      it(`Express ${major}, ${config.name}`, async () => {
        const project = path.join(work, 'express' + major)
        const { name, ...options } = config
        const files = ['bodykit', 'body-parser'].flatMap((target) => fixturesFor(path.join(project, target), config).map((file) => target + '/' + file))
        const programs = { main: files.filter((file) => !isMulterFixture(file)), multer: files.filter(isMulterFixture) }
        assert.ok(programs.main.length >= 10, 'too few fixtures: ' + programs.main.join(', '))
        assert.ok(programs.multer.length >= 4, 'too few multer fixtures: ' + programs.multer.join(', '))
        for (const [program, programFiles] of Object.entries(programs)) {
          const tsconfig = path.join(project, 'tsconfig.' + name.replace(/\W+/g, '-') + '.' + program + '.json')
          writeFileSync(tsconfig, JSON.stringify({
            compilerOptions: { ...options, strict: true, skipLibCheck: false, noEmit: true, target: 'ES2022', lib: ['ES2022'], types: ['node'] },
            files: programFiles
          }, null, 2))
          try {
            await run(process.execPath, [tsc, '-p', tsconfig], { cwd: project })
          } catch (err) {
            assert.fail(`tsc failed for Express ${major}, ${name}, ${program} fixtures (files under body-parser/ are the body-parser and multer run):\n${err.stdout}${err.stderr}`)
          }
        }
      })
    }
  }
})
