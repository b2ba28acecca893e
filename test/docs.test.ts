// Keeps README.md and docs/ true: every JavaScript and TypeScript example compiles against src/, every relative link
// (and #anchor) resolves inside the repository, and every repository path they name in backticks exists.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import ts from 'typescript'
import { renderChart } from '../bench/chart'
import { geomean, type BenchFile } from '../bench/report'

const root = path.join(__dirname, '..')
const PAGES = ['README.md', 'SECURITY.md', 'CONTRIBUTING.md', ...readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => 'docs/' + name)]
const text = (page: string): string => readFileSync(path.join(root, page), 'utf8')

interface Block { page: string, line: number, lang: string, code: string }

/** The fenced code blocks of a page, with the line their code starts on. */
function codeBlocks (page: string): Block[] {
  const blocks: Block[] = []
  const lines = text(page).split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)/.exec(lines[i])
    if (!open) continue
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'))
    assert.notEqual(end, -1, page + ':' + (i + 1) + ': unclosed code block')
    blocks.push({ page, line: i + 2, lang: open[1], code: lines.slice(i + 1, end).join('\n') + '\n' })
    i = end
  }
  return blocks
}

/** A page's prose: code blocks and inline code removed, so that links are only looked for where they render. */
function prose (page: string): string {
  return text(page).replace(/^```[^]*?^```/gm, '').replace(/`[^`\n]*`/g, '')
}

/** GitHub's anchor for each heading of a Markdown text (lower-cased, punctuation dropped, spaces to hyphens, repeats numbered). */
function anchors (markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const found = new Set<string>()
  for (const match of markdown.replace(/^```[^]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = match[1].trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    found.add(count === 0 ? slug : slug + '-' + count)
  }
  return found
}

const JS = new Set(['js', 'javascript', 'cjs', 'mjs'])

function usesMulter (block: Block): boolean {
  return block.code.includes('bodykit/multer')
}

/** An h3 v2 example imports `h3` as its app does: the tests have h3 2 as `h3-2`, beside h3 1 as `h3`. */
function usesH3v2 (block: Block): boolean {
  return block.code.includes('from \'h3\'') && block.code.includes('new H3(')
}
const TS = new Set(['ts', 'typescript', 'mts', 'cts'])

// Names the examples use without defining, as a reader's app would have them. JavaScript examples also see
// `req.rawBody` and `req.files` on every request, and Koa's `ctx.request.body` (KOA_REQUEST), as a JavaScript app
// does; TypeScript ones must type them (RawBodyRequest, MultipartRequest, docs/koa.md's declaration).
const PRELUDE = `
declare const app: import('express').Express
declare function handleEvent (event: unknown): void
declare function createOrder (order: unknown): string
`
const JS_PRELUDE = PRELUDE + `
declare module 'http' { interface IncomingMessage { rawBody?: Buffer, files?: import('bodykit').UploadedFile[] } }
`
// A module of its own: an augmentation, where the script prelude would declare a `koa` module of its own.
const KOA_REQUEST = `export {}
declare module 'koa' { interface Request { body?: any, rawBody?: string, rawBuffer?: Buffer, files?: import('bodykit/koa').KoaBodyFiles } }
`

const BASE_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  moduleDetection: ts.ModuleDetectionKind.Force,
  types: ['node'],
  esModuleInterop: true,
  // NestJS examples (docs/frameworks.md) are written with Nest's decorators, as its apps are.
  experimentalDecorators: true,
  skipLibCheck: true,
  noEmit: true,
  baseUrl: root,
  // The examples import the package by name; they are checked against the sources, so no build is needed.
  // `hono`, `koa` and `h3` are mapped to their packages: with `baseUrl` at the root, the repository's hono/, koa/ and h3/ folder stubs would shadow them.
  paths: {
    bodykit: ['src/index.ts'],
    'bodykit/legacy': ['src/legacy.ts'],
    'bodykit/multer': ['src/multer.ts'],
    'bodykit/hono': ['src/hono.ts'],
    'bodykit/koa': ['src/koa.ts'],
    'bodykit/nest': ['src/nest.ts'],
    'bodykit/web': ['src/web.ts'],
    'bodykit/h3': ['src/h3.ts'],
    h3: ['node_modules/h3'],
    hono: ['node_modules/hono'],
    'hono/*': ['node_modules/hono/*'],
    koa: ['node_modules/@types/koa/index.d.ts']
  }
}

// Parsed once for both programs (TypeScript's own libraries and @types are most of the work).
const parsed = new Map<string, ts.SourceFile | undefined>()

/**
 * Type-checks blocks of one language, each as its own module, against src/; returns the diagnostics as `page:line: message`.
 * TypeScript is checked with `strict`, as the test suite's own code; JavaScript as `checkJs` checks an app
 * without strict (so a caught error is `any`), which still finds a wrong import, option name or property.
 */
function compileBlocks (blocks: Block[], typescript: boolean, preludeText = typescript ? PRELUDE : JS_PRELUDE, paths: ts.MapLike<string[]> = {}): string[] {
  if (blocks.length === 0) return []
  const dir = path.join(root, '.docs-check')
  const files = new Map<string, { block: Block, source: string }>()
  for (const block of blocks) {
    files.set(path.join(dir, block.page.replace(/\W/g, '-') + '-' + block.line + (typescript ? '.ts' : '.js')), { block, source: block.code })
  }
  const prelude = path.join(dir, typescript ? 'prelude.d.ts' : 'js-prelude.d.ts')
  const koaRequest = path.join(dir, 'koa-request.d.ts')
  const options: ts.CompilerOptions = { ...BASE_OPTIONS, paths: { ...BASE_OPTIONS.paths, ...paths }, strict: typescript, allowJs: !typescript, checkJs: !typescript }
  const host = ts.createCompilerHost(options)
  const virtual = (file: string): string | undefined => file === prelude ? preludeText : file === koaRequest ? KOA_REQUEST : files.get(file)?.source
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (file) => virtual(file) !== undefined || fileExists.call(host, file)
  host.readFile = (file) => virtual(file) ?? readFile.call(host, file)
  host.getSourceFile = (file, language, ...rest) => {
    const source = virtual(file)
    if (source !== undefined) return ts.createSourceFile(file, source, language, true)
    if (!parsed.has(file)) parsed.set(file, getSourceFile.call(host, file, language, ...rest))
    return parsed.get(file)
  }
  const program = ts.createProgram([prelude, ...(typescript ? [] : [koaRequest]), ...files.keys()], options, host)
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    const entry = diagnostic.file && files.get(diagnostic.file.fileName)
    if (!entry || diagnostic.start === undefined) return (diagnostic.file?.fileName ?? '') + ': ' + message
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start)
    return entry.block.page + ':' + (entry.block.line + line) + ': ' + message
  })
}

describe('docs', () => {
  it('has the pages the README points to', () => {
    for (const page of ['performance', 'security', 'differences', 'migrating', 'recipes', 'typescript']) {
      assert.ok(PAGES.includes('docs/' + page + '.md'), 'docs/' + page + '.md is missing')
    }
  })

  it('starts each page of docs/ with what a reader gets from it', () => {
    for (const page of PAGES.filter((name) => name.startsWith('docs/'))) {
      const [title, blank, first] = text(page).split('\n')
      assert.match(title, /^# /, page + ' does not start with a title')
      assert.equal(blank, '', page)
      assert.match(first, /^What this page gives you: /, page + ' does not say first what it gives')
    }
  })

  it('compiles every JavaScript and TypeScript example against src/', () => {
    const blocks = PAGES.flatMap(codeBlocks)
    const checked = blocks.filter((block) => JS.has(block.lang) || TS.has(block.lang))
    const unknown = blocks.filter((block) => !checked.includes(block) && !['sh', 'text'].includes(block.lang))
    assert.deepEqual(unknown.map((block) => block.page + ':' + block.line + ' ```' + block.lang), [], 'a code block without js, ts, sh or text')
    assert.ok(checked.length >= 15, 'found only ' + checked.length + ' examples')
    assert.deepEqual([
      ...compileBlocks(checked.filter((block) => JS.has(block.lang) && !usesMulter(block) && !usesH3v2(block)), false),
      ...compileBlocks(checked.filter((block) => JS.has(block.lang) && usesH3v2(block)), false, JS_PRELUDE, { h3: ['node_modules/h3-2'] }),
      // A multer app has multer's `req.files` (from bodykit/multer's types), not multipart()'s: its own program.
      ...compileBlocks(checked.filter((block) => JS.has(block.lang) && usesMulter(block)), false, PRELUDE),
      ...compileBlocks(checked.filter((block) => TS.has(block.lang) && !usesH3v2(block)), true),
      ...compileBlocks(checked.filter((block) => TS.has(block.lang) && usesH3v2(block)), true, PRELUDE, { h3: ['node_modules/h3-2'] })
    ], [])
  })

  it('shows the Web recipes as the runtime tests run them (docs/web.md: the Next.js edge route, Hono on Workers)', () => {
    const blocks = codeBlocks('docs/web.md').map((block) => block.code)
    for (const file of ['test/runtimes/recipes/next-edge-route.ts', 'test/runtimes/recipes/hono-worker.ts']) {
      // The file less its header (what it is, where the test runs it), importing the package by name.
      const code = text(file).split('\n').filter((line) => !/^\/\/ (Recipe|In an app)/.test(line)).join('\n')
        .replace("'../../../src/web'", "'bodykit/web'").trim()
      assert.ok(blocks.some((block) => block.includes(code)), file + ' is not shown in docs/web.md as it is tested')
    }
  })

  it('knows a broken example when it sees one', () => {
    const broken = compileBlocks([
      { page: 'broken.md', line: 1, lang: 'js', code: "const bodykit = require('bodykit')\nbodykit.jsn()\n" },
      { page: 'broken.md', line: 5, lang: 'js', code: "require('bodykit/legacy').urlencoded({ extended: true, parameterLimt: 10 })\n" }
    ], false)
    assert.equal(broken.length, 2, broken.join('\n'))
    assert.match(broken[0], /^broken\.md:2: .*jsn/)
    assert.match(broken[1], /^broken\.md:5: .*parameterLimt/)
  })

  it('resolves every relative link and anchor inside the repository', () => {
    const problems: string[] = []
    for (const page of PAGES) {
      for (const match of prose(page).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = match[1]
        if (/^(https?:|mailto:)/.test(target)) continue
        const [file, anchor] = target.split('#')
        const resolved = file === '' ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file)
        if (path.isAbsolute(file) || /^[a-z]+:/.test(file) || path.relative(root, resolved).startsWith('..')) {
          problems.push(page + ': ' + target + ' leaves the repository')
        } else if (!existsSync(resolved)) {
          problems.push(page + ': ' + target + ' does not exist')
        } else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
          problems.push(page + ': ' + target + ' has no such heading')
        }
      }
    }
    assert.deepEqual(problems, [])
  })

  it('names only repository files that exist', () => {
    const problems: string[] = []
    for (const page of PAGES) {
      const withoutBlocks = text(page).replace(/^```[^]*?^```/gm, '')
      for (const match of withoutBlocks.matchAll(/`((?:src|test|bench|examples|docs|scripts)\/[\w./-]*)`/g)) {
        if (!existsSync(path.join(root, match[1]))) problems.push(page + ': ' + match[1])
      }
    }
    assert.deepEqual(problems, [])
  })

  it('quotes the figures of bench/results/latest.json, the run the tables and the chart are drawn from', () => {
    const run = JSON.parse(text('bench/results/latest.json')) as BenchFile
    const rowsOf = (id: string) => run.sections.find((section) => section.id === id)?.rows ?? []
    const ratio = (id: string, name: string, target: string): string => {
      const row = rowsOf(id).find((r) => r.case === name && r.target === target)
      assert.ok(row && row.ratio !== null, 'latest.json has no ' + id + ' / ' + name + ' / ' + target)
      return row.ratio.toFixed(2)
    }
    const mean = (target: string): string => geomean(rowsOf('in-process').filter((r) => r.target === target && r.ratio !== null).map((r) => r.ratio as number)).toFixed(2)
    const cases = new Set(rowsOf('in-process').map((r) => r.case)).size
    const both = (id: string, name: string): string[] => [ratio(id, name, 'bodykit'), ratio(id, name, 'bodykit/legacy')]
    const expected: [string, string[]][] = [
      [`Time per request, geometric mean of the ${cases} in-process cases (lower is faster)`, [mean('bodykit'), mean('bodykit/legacy')]],
      ['Time per request, json 69 B', both('in-process', 'json 69 B')],
      ['Time per request, gzip json 1 KiB', both('in-process', 'gzip json 1 KiB')],
      ['Time per request, json 1 MiB (`JSON.parse` dominates)', both('in-process', 'json 1 MiB')],
      ['Requests per second over HTTP, json 69 B (higher is better)', both('end-to-end', 'json 69 B: req/s')],
      ['Peak heap growth, 50 concurrent 1 MiB JSON bodies', both('memory', 'peak heap growth')],
      ['Time to parse a 20,000-pair `a[]=` form, against qs itself (extended mode)', [ratio('forms', 'a[]= x20000', 'bodykit'), 'same parser']]
    ]
    const table = text('docs/performance.md').split('\n').filter((line) => line.startsWith('| ')).map((line) => line.split(' | ').map((cell) => cell.replace(/^\| | \|$/g, '')))
    for (const [measure, figures] of expected) {
      assert.deepEqual(table.find((cells) => cells[0] === measure)?.slice(1), figures, 'docs/performance.md, ' + measure)
    }
    const why = text('README.md')
    assert.ok(why.includes(`**${mean('bodykit')}** of body-parser 2's time (geometric mean of ${cases} in-process cases;`), 'README: the geometric mean')
    assert.ok(why.includes(`${ratio('in-process', 'json 69 B', 'bodykit')} for 69 B of JSON, ${ratio('in-process', 'gzip json 1 KiB', 'bodykit')} for 1 KiB of gzip JSON`), 'README: the examples')
  })

  it('shows the chart of that run (bench/chart.ts redraws it: node --import tsx bench/chart.ts)', () => {
    const run = JSON.parse(text('bench/results/latest.json')) as BenchFile
    assert.equal(text('bench/results/latest.svg'), renderChart(run))
  })

  it('computes GitHub anchors', () => {
    assert.deepEqual([...anchors('# bodykit.json([options])\n## `depth` in `bodykit/legacy`\n## bodykit\'s own options\n## A\n## A\n')],
      ['bodykitjsonoptions', 'depth-in-bodykitlegacy', 'bodykits-own-options', 'a', 'a-1'])
  })
})
