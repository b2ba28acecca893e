// Runs bench/footprint/cold-start-probe.cjs in fresh node processes, one at a time, and reads its figures.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const PROBE = join(__dirname, 'cold-start-probe.cjs')
const DIST = join(__dirname, '..', '..', 'dist')

export interface ColdStart {
  /** ms spent in require() of the library. */
  require: number
  /** ms from just before require() to the first request parsed (require, creating the middleware, one request). */
  first: number
  /** Modules the library loaded by then. */
  modules: number
}

/** One cold start of `name` (a case of the probe) in a new node process; rejects with the probe's stderr when it fails. */
export async function probeColdStart (name: string): Promise<ColdStart> {
  // Plain node, no tsx and no inherited NODE_OPTIONS: the process an app starts in.
  const env: NodeJS.ProcessEnv = { ...process.env, BODYKIT_DIST: DIST }
  delete env.NODE_OPTIONS
  try {
    const { stdout } = await run(process.execPath, [PROBE, name], { env, timeout: 30_000 })
    return JSON.parse(stdout) as ColdStart
  } catch (err) {
    // Node prints an uncaught error's source line first: the line naming the error is the one worth a table cell.
    const lines = String((err as { stderr?: string }).stderr ?? '').split('\n').map((line) => line.trim()).filter(Boolean)
    throw new Error(`${name}: ${lines.find((line) => /^([A-Z]\w*)?Error\b/.test(line)) ?? lines[0] ?? (err as Error).message}`)
  }
}
