// Footprint section: each bodykit entry against the library it replaces: cold start in fresh processes, esbuild bundle bytes, npm install size.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleEntry, type BundleSize } from '../scripts/bundle-size.mjs'
import { probeColdStart, type ColdStart } from './footprint/cold-start'
import { installSize, packBodykit, type InstallSize } from './footprint/install-size'
import { median, medianSpread, type Context, type Row, type SectionResult } from './report'

const ROOT = join(__dirname, '..')
const KIB = 1024

interface Pair {
  /** The probe's case for the bodykit entry, and the table's column. */
  target: string
  /** The probe's case for the replaced library, which is also its folder in node_modules (body-parser-1 is an npm alias). */
  baseline: string
  /** dist/<entry>.js is what the target bundles. */
  entry: string
  note?: string
  /** A pair of app setups rather than of entries: no bundle or install row. */
  startOnly?: boolean
}

const PAIRS: Pair[] = [
  { target: 'bodykit', baseline: 'body-parser', entry: 'index' },
  { target: 'bodykit (every parser)', baseline: 'body-parser + multer', entry: 'index', startOnly: true, note: 'json, raw, text, urlencoded({ extended: true }) and multipart({ files: true }) against body-parser\'s four and multer().any(), then one JSON request' },
  { target: 'bodykit/legacy', baseline: 'body-parser-1', entry: 'legacy' },
  { target: 'bodykit/multer', baseline: 'multer', entry: 'multer' },
  { target: 'bodykit/koa', baseline: 'koa-bodyparser', entry: 'koa' },
  { target: 'bodykit/koa (6)', baseline: '@koa/bodyparser', entry: 'koa' },
  { target: 'bodykit/koa (koaBody)', baseline: 'koa-body', entry: 'koa', note: `koa-body ${installedVersion('koa-body').version} installed (the issue names koa-body 7)` },
  { target: 'bodykit/h3', baseline: 'h3', entry: 'h3', startOnly: true, note: `readBody of one JSON request in an h3 ${installedVersion('h3').version} app (h3 loaded before the timing, as the app has it); h3's own readBody has no limit, inflation or charset` }
]

const CASES = {
  require: 'require()',
  first: 'require() + first request',
  minified: 'bundle, minified',
  gzip: 'bundle, gzip -9',
  install: 'install size'
}

/** The replaced library as node_modules has it: its real name (an alias folder has another) and version. */
function installedVersion (folder: string): { name: string, version: string } {
  return JSON.parse(readFileSync(join(ROOT, 'node_modules', folder, 'package.json'), 'utf8')) as { name: string, version: string }
}

function rowOf (pair: Pair, name: string, unit: string, mine: number | null, theirs: number | null, extra?: Record<string, number>): Row {
  const ratio = mine === null || theirs === null ? null : mine / theirs
  return { case: name, target: pair.target, baseline: pair.baseline, ratio, value: mine, unit, note: pair.note, extra: { ...extra, ...(theirs === null ? {} : { baselineValue: theirs }) } }
}

/** An error as one short line: it becomes a table cell (esbuild's messages span lines). */
function oneLine (err: unknown): string {
  const text = (err as Error).message.replace(/\s+/g, ' ').trim()
  return text.length > 120 ? text.slice(0, 117) + '...' : text
}

function failedRows (pair: Pair, names: string[], unit: string, err: unknown): Row[] {
  return names.map((name) => ({ case: name, target: pair.target, baseline: pair.baseline, ratio: null, value: null, unit, note: `failed: ${oneLine(err)}` }))
}

/** The bench builds dist/ first, but a build running elsewhere (rm -rf dist, then tsc) empties it for a while. */
function assertBuilt (): void {
  const missing = [...new Set(PAIRS.map((pair) => `dist/${pair.entry}.js`))].filter((file) => !existsSync(join(ROOT, file)))
  if (missing.length > 0) throw new Error(`${missing.join(', ')} missing: run npm run build (and no other build at the same time)`)
}

/** Fresh processes alternated bodykit, replaced, bodykit...: each pair shares the machine's state of the moment, and ratios are per pair. */
async function coldStartRows (ctx: Context, pair: Pair, pairs: number): Promise<Row[]> {
  try {
    // One unmeasured run each: the first reads the files from disk, the others from the page cache, as a restarted app does.
    await probeColdStart(pair.target)
    await probeColdStart(pair.baseline)
    const mine: ColdStart[] = []
    const theirs: ColdStart[] = []
    for (let i = 0; i < pairs; i++) {
      mine.push(await probeColdStart(pair.target))
      theirs.push(await probeColdStart(pair.baseline))
    }
    const mid = (runs: ColdStart[], key: keyof ColdStart): number => median(runs.map((run) => run[key]))
    const modules = { modules: mid(mine, 'modules'), baselineModules: mid(theirs, 'modules') }
    const rows = (['require', 'first'] as const).map((key) => {
      const ratios = mine.map((run, i) => run[key] / theirs[i][key])
      return { ...rowOf(pair, CASES[key], 'ms', mid(mine, key), mid(theirs, key), modules), ratio: median(ratios), spread: medianSpread(ratios) }
    })
    ctx.log(`  ${pair.target} vs ${pair.baseline}: require ${mid(mine, 'require').toFixed(1)} vs ${mid(theirs, 'require').toFixed(1)} ms, ` +
      `first request ${mid(mine, 'first').toFixed(1)} vs ${mid(theirs, 'first').toFixed(1)} ms, ${modules.modules} vs ${modules.baselineModules} modules`)
    return rows
  } catch (err) {
    ctx.log(`  ${pair.target} vs ${pair.baseline}: ${oneLine(err)}`)
    return failedRows(pair, [CASES.require, CASES.first], 'ms', err)
  }
}

/** Bundles each thing once per run: three pairs share dist/koa.js. */
function memoize<T> (fn: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const seen = new Map<string, Promise<T>>()
  return (key) => {
    if (!seen.has(key)) seen.set(key, fn(key))
    return seen.get(key) as Promise<T>
  }
}

async function bundleRows (ctx: Context, pair: Pair, bundle: (spec: string) => Promise<BundleSize>): Promise<Row[]> {
  try {
    const mine = await bundle(join(ROOT, 'dist', pair.entry + '.js'))
    const theirs = await bundle(pair.baseline)
    const top = (size: BundleSize): string => Object.entries(size.inputs).slice(0, 3).map(([name, bytes]) => `${name} ${(bytes / KIB).toFixed(0)}`).join(', ')
    ctx.log(`  ${pair.target} vs ${pair.baseline}: ${(mine.minified / KIB).toFixed(1)} vs ${(theirs.minified / KIB).toFixed(1)} KiB minified (${top(mine)} | ${top(theirs)})`)
    return [
      rowOf(pair, CASES.minified, 'KiB', mine.minified / KIB, theirs.minified / KIB),
      rowOf(pair, CASES.gzip, 'KiB', mine.gzip / KIB, theirs.gzip / KIB)
    ]
  } catch (err) {
    ctx.log(`  ${pair.target} vs ${pair.baseline}: ${oneLine(err)}`)
    return failedRows(pair, [CASES.minified, CASES.gzip], 'KiB', err)
  }
}

async function installRow (ctx: Context, pair: Pair, bodykit: Promise<InstallSize>): Promise<Row> {
  const { name, version } = installedVersion(pair.baseline)
  try {
    const mine = await bodykit
    const theirs = await installSize(`${name}@${version}`, `${name}@${version}`)
    ctx.log(`  ${pair.target} vs ${name}@${version}: ${(mine.bytes / KIB).toFixed(0)} vs ${(theirs.bytes / KIB).toFixed(0)} KiB installed, ${mine.packages} vs ${theirs.packages} packages`)
    return rowOf(pair, CASES.install, 'KiB', mine.bytes / KIB, theirs.bytes / KIB, { packages: mine.packages, baselinePackages: theirs.packages, files: mine.files, baselineFiles: theirs.files })
  } catch (err) {
    // npm needs the registry: without it the row says so and the section's other figures stand.
    ctx.log(`  ${pair.target} vs ${name}@${version}: ${oneLine(err)}`)
    return { ...failedRows(pair, [CASES.install], 'KiB', err)[0], note: `skipped: ${oneLine(err)}` }
  }
}

/** bodykit as published: `npm pack` of the built repo, installed as an app would install the tarball. */
async function bodykitInstallSize (): Promise<InstallSize> {
  // A tarball of half a dist/ would be measured, and cached under its own integrity.
  assertBuilt()
  const { tarball, integrity } = await packBodykit(ROOT)
  return installSize(tarball, `bodykit ${integrity}`)
}

/**
 * The `footprint` section (`npm run bench -- --only footprint [--quick]`): what choosing bodykit over the library an app
 * uses costs at start-up, in a bundle and on disk, one column per entry and the library it replaces.
 */
export async function footprint (ctx: Context): Promise<SectionResult> {
  const pairs = ctx.quick ? 5 : 15
  const rows: Row[] = []
  assertBuilt()
  ctx.log(`cold start, ${pairs} alternated pairs of fresh processes:`)
  for (const pair of PAIRS) rows.push(...await coldStartRows(ctx, pair, pairs))
  ctx.log('esbuild bundles:')
  const bundle = memoize((spec) => bundleEntry(spec))
  for (const pair of PAIRS) if (pair.startOnly !== true) rows.push(...await bundleRows(ctx, pair, bundle))
  ctx.log('npm install sizes:')
  const bodykit = bodykitInstallSize()
  // Each row that awaits it reports a failure; this keeps a failed pack from also counting as an unhandled rejection.
  bodykit.catch(() => {})
  for (const pair of PAIRS) if (pair.startOnly !== true) rows.push(await installRow(ctx, pair, bodykit))
  return {
    id: 'footprint',
    title: `Footprint: each bodykit entry ÷ the library it replaces; cold start over ${pairs} alternated pairs of fresh processes, esbuild bundle, npm install size (lower is better)`,
    legend: 'require(): ms to load the entry in a new node process (node:http preloaded; Koa too for the Koa cases); first request: ms from that require() to one parsed request ' +
      '(JSON, multipart for multer); ratios are medians of per-pair ratios. Bundles: esbuild, platform node, minified, peers external. Install: node_modules bytes of ' +
      `npm install --omit=dev of the packed bodykit vs the library. koa-body is ${installedVersion('koa-body').version} (the issue names 7).`,
    rows
  }
}
