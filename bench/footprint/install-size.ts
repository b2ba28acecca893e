// Install size: what `npm install` of a package puts in node_modules (the package and its production dependencies), cached in the OS temp dir.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, lstatSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const CACHE = join(os.tmpdir(), 'bodykit-footprint')
/** Dependency ranges of the replaced libraries resolve to newer releases over time: a day-old figure is measured again. */
const MAX_AGE_MS = 24 * 3600 * 1000
const NPM_TIMEOUT_MS = 180_000

export interface InstallSize {
  /** Apparent size of the files under node_modules (du --apparent-size, symlinks not followed). */
  bytes: number
  files: number
  packages: number
}

/** Runs npm; a failure names the command and npm's first error line rather than its whole log. */
async function runNpm (args: string[], cwd: string): Promise<string> {
  try {
    return (await run('npm', args, { cwd, timeout: NPM_TIMEOUT_MS })).stdout
  } catch (err) {
    const reason = String((err as { stderr?: string }).stderr ?? '').split('\n').find((line) => /error/i.test(line)) ?? (err as Error).message
    throw new Error(`npm ${args[0]} failed: ${reason.replace(/^npm error\s*/i, '')}`)
  }
}

/** A package's own folder: right under node_modules/, or under a scope there. */
const PACKAGE_FOLDER = /\/node_modules\/(@[^/]+\/)?[^/@][^/]*$/

/** Sums the regular files under a folder (symlinks such as .bin/ not followed) and counts the packages in it. */
function measureTree (dir: string, size: InstallSize): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      measureTree(path, size)
    } else if (entry.isFile()) {
      // npm's own record of the tree, not something a package ships.
      if (entry.name === '.package-lock.json' && dir.endsWith('/node_modules')) continue
      size.bytes += lstatSync(path).size
      size.files++
    }
  }
  if (PACKAGE_FOLDER.test(dir) && existsSync(join(dir, 'package.json'))) size.packages++
}

/** Installs one spec (name@version or a tarball path) into a fresh folder and measures its node_modules. */
async function install (spec: string): Promise<InstallSize> {
  mkdirSync(CACHE, { recursive: true })
  const dir = mkdtempSync(join(CACHE, 'install-'))
  try {
    // A package.json of its own, so npm installs here rather than into a parent project it finds on its way up.
    writeFileSync(join(dir, 'package.json'), '{ "name": "footprint-install", "private": true }\n')
    // --legacy-peer-deps: peers (koa for @koa/bodyparser) are the app's, not the parser's cost, as in the bundle rows.
    await runNpm(['install', '--no-audit', '--no-fund', '--omit=dev', '--ignore-scripts', '--legacy-peer-deps', '--no-package-lock', '--loglevel=error', spec], dir)
    const size: InstallSize = { bytes: 0, files: 0, packages: 0 }
    measureTree(join(dir, 'node_modules'), size)
    return size
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Install size of `spec`, from the cache when `key` was measured less than a day ago. */
export async function installSize (spec: string, key: string): Promise<InstallSize> {
  const file = join(CACHE, createHash('sha256').update(key).digest('hex').slice(0, 16) + '.json')
  if (existsSync(file) && Date.now() - statSync(file).mtimeMs < MAX_AGE_MS) return JSON.parse(readFileSync(file, 'utf8')) as InstallSize
  const size = await install(spec)
  mkdirSync(CACHE, { recursive: true })
  writeFileSync(file, JSON.stringify({ ...size, spec: key }) + '\n')
  return size
}

/** Packs the repo as `npm publish` would (dist/ must be built) into the cache; the tarball, and its integrity as a cache key. */
export async function packBodykit (root: string): Promise<{ tarball: string, integrity: string }> {
  const dir = join(CACHE, 'pack')
  mkdirSync(dir, { recursive: true })
  const stdout = await runNpm(['pack', '--json', '--loglevel=error', '--pack-destination', dir], root)
  const [packed] = JSON.parse(stdout) as { filename: string, integrity: string }[]
  return { tarball: join(dir, packed.filename), integrity: packed.integrity }
}
